package httpserver

import (
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
)

// limiter is an in-memory token bucket per client key for one class. Each
// process of the api role limits on its own; with several processes a
// client gets the limit once per process.
type limiter struct {
	clock clock.Clock
	rate  float64 // tokens per second
	burst float64
	// full is how long an empty bucket takes to fill; a bucket untouched for
	// that long equals a new one and may be dropped.
	full time.Duration

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newLimiter(rl RateLimit, clk clock.Clock) *limiter {
	rate := float64(rl.PerMinute) / 60
	return &limiter{
		clock:     clk,
		rate:      rate,
		burst:     float64(rl.Burst),
		full:      time.Duration(float64(rl.Burst) / rate * float64(time.Second)),
		buckets:   map[string]*bucket{},
		lastSweep: clk.Now(),
	}
}

// take spends one token of key's bucket. When there is none it reports
// false and how long until there is one.
func (l *limiter) take(key string) (bool, time.Duration) {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	b.tokens = l.level(b, now)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
	return false, wait
}

// level returns b's tokens at now. A clock that went back refills nothing.
func (l *limiter) level(b *bucket, now time.Time) float64 {
	elapsed := max(now.Sub(b.at).Seconds(), 0)
	return math.Min(l.burst, b.tokens+elapsed*l.rate)
}

// sweep drops full buckets once per fill period, which bounds the map by
// the clients seen within one period.
func (l *limiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < l.full {
		return
	}
	l.lastSweep = now
	for k, b := range l.buckets {
		if l.level(b, now) >= l.burst {
			delete(l.buckets, k)
		}
	}
}

// allow applies the rate class of a route to r. The client key is the
// remote address (without port): the class limits clients before they are
// authenticated. Behind a reverse proxy every client shares its address
// until the wiring trusts a forwarded header. It reports false when it
// answered 429.
func (s *Server) allow(w http.ResponseWriter, r *http.Request, class RateClass) bool {
	if class == "" {
		return true
	}
	ok, wait := s.limiters[class].take(clientKey(r))
	if ok {
		return true
	}
	secs := max(int64(math.Ceil(wait.Seconds())), 1)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	s.WriteError(w, r, errs.New(errs.CodeRateLimited, "rate limit exceeded"))
	return false
}

func clientKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
