package httpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/correlation"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/idempotency"
	"bothy/server/internal/kernel/ids"
)

// MetricUnavailable is the counter of requests answered 503 unavailable,
// labelled with http.route.
const MetricUnavailable = "bothy.http.unavailable"

// meterName is the instrumentation scope of the server's metrics.
const meterName = "bothy/server/internal/platform/httpserver"

// RateClass names a rate limit class that routes declare.
type RateClass string

// The rate limit classes.
const (
	// RateClassPublicAuth limits the public and sign-in endpoints
	// (discovery, createSession) per client address.
	RateClassPublicAuth RateClass = "rl.public_auth"
)

// BodyClass names a class of operations that shares one request body
// limit.
type BodyClass string

// The body classes besides the default (the empty class, whose limit is
// Options.MaxBodyBytes).
const (
	// BodyClassPublicAuth holds the operations of the rate limit class
	// public_auth (sign-in, step-up, public discovery): anyone may call
	// them before any credential is checked, and their bodies are a few
	// short members, so their limit is far below the default.
	BodyClassPublicAuth BodyClass = "public_auth"
)

// RateLimit is the token bucket of a class.
type RateLimit struct {
	// PerMinute is how many requests a client may make per minute on
	// average (the refill rate). Must be positive.
	PerMinute int
	// Burst is how many requests a client may make at once (the bucket
	// size). Must be positive.
	Burst int
}

// Options configure a Server. Only internal/wire fills them from
// configuration.
type Options struct {
	// MaxBodyBytes is http.max_body_bytes: the largest request body of any
	// operation and the limit of the default body class; a larger one
	// answers 413 payload_too_large. Must be positive.
	MaxBodyBytes int64
	// BodyLimits are the limits of the other body classes a route may
	// declare: BodyClassPublicAuth from http.max_body_bytes_public_auth.
	// Each must be positive; a limit above MaxBodyBytes has no effect,
	// because MaxBodyBytes is checked first for every request.
	BodyLimits map[BodyClass]int64
	// RateLimits are the limits of each class a route may declare:
	// RateClassPublicAuth from ratelimit.public_auth.per_minute and
	// ratelimit.public_auth.burst.
	RateLimits map[RateClass]RateLimit
	// RequestTimeout is http.request_timeout: the deadline of the context
	// every handler runs with, so no request holds a database connection or
	// a lock for longer. Must be positive.
	RequestTimeout time.Duration
	// UnavailableRetryAfter is http.unavailable_retry_after: the
	// Retry-After of a 503 unavailable answer, in whole seconds (rounded
	// up). Must be positive.
	UnavailableRetryAfter time.Duration
}

// Authenticator turns a bearer token into a principal. identity's
// Authenticator has this shape. It returns an *errs.Error with
// CodeUnauthorized for an unknown, expired or revoked token; any other error
// answers 500.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (actor.Principal, error)
}

// Deps are the collaborators of a Server; all are required.
type Deps struct {
	// Log receives the access log and server faults.
	Log *slog.Logger
	// Clock drives the rate limit buckets.
	Clock clock.Clock
	// Authenticator resolves bearer tokens.
	Authenticator Authenticator
	// Idempotency runs requests with an Idempotency-Key
	// (idempotencypg.Store).
	Idempotency idempotency.Store
	// Unavailable tells whether an error that is no *errs.Error means the
	// database cannot be reached right now (pg.IsUnavailable); such an
	// error answers 503 unavailable with Retry-After instead of 500
	// internal. Optional: nil treats every such error as a fault.
	Unavailable func(error) bool
	// Meter provides the HTTP server metrics (metrics.go) and the counter
	// bothy.http.unavailable. Optional: nil means no metrics.
	Meter metric.MeterProvider
}

// Route declares an operation: where it is served and which stages apply.
type Route struct {
	// Operation is the operation ID, for example "createWebhookSubscription";
	// idempotency keys are scoped by it.
	Operation string
	// Method is the HTTP method in upper case.
	Method string
	// Pattern is the path template in http.ServeMux syntax, for example
	// "/api/v1/apps/{appId}/webhook-subscriptions". It is the route of the
	// access log, so it never carries values.
	Pattern string
	// RateClass is the rate limit class, or "" for none.
	RateClass RateClass
	// CORS makes the route answer Access-Control-Allow-Origin: * and
	// preflight requests (public discovery endpoints only).
	CORS bool
	// BodyClass is the body limit class, or "" for the default
	// (Options.MaxBodyBytes). The class must have a limit in
	// Options.BodyLimits.
	BodyClass BodyClass
	// Idempotent reports that the operation's contract declares the
	// Idempotency-Key header: a request with the key runs in the
	// idempotency stage's transaction and its answer is replayed. On a
	// route without it an unsafe request with the key answers 400
	// validation_failed, reason idempotency_not_supported, before the
	// handler runs: its work cannot run inside that transaction (a test
	// send makes a request at once, docs/spec/02-architecture.md 8.5) or
	// is not declared replayable.
	Idempotent bool
}

// Server is the HTTP handler of the api role. Register every route with
// Handle (or Declare and HandleFunc) before it serves; it is safe for
// concurrent use afterwards.
type Server struct {
	maxBody int64
	bodies  map[BodyClass]int64
	timeout time.Duration
	// retryAfter is the Retry-After value of unavailable answers;
	// unavailable classifies outages; outages counts them.
	retryAfter  string
	unavailable func(error) bool
	outages     metric.Int64Counter
	log         *slog.Logger
	auth        Authenticator
	idem        idempotency.Store
	mux         *http.ServeMux
	limiters    map[RateClass]*limiter
	declared    map[string]Route
	// preflight holds the methods of each CORS pattern, for preflight
	// answers; fallbacks the normalised patterns that have a 404 fallback.
	preflight map[string]*corsPattern
	fallbacks map[string]bool
	metrics   serverMetrics
}

// New returns a Server. It returns an error for invalid options and panics
// on a missing dependency (a wiring bug).
func New(o Options, d Deps) (*Server, error) {
	if d.Log == nil || d.Clock == nil || d.Authenticator == nil || d.Idempotency == nil {
		panic("httpserver: New needs a logger, a clock, an authenticator and an idempotency store")
	}
	if o.MaxBodyBytes <= 0 {
		return nil, errors.New("httpserver: http.max_body_bytes must be positive")
	}
	if o.RequestTimeout <= 0 {
		return nil, errors.New("httpserver: http.request_timeout must be positive")
	}
	if o.UnavailableRetryAfter <= 0 {
		return nil, errors.New("httpserver: http.unavailable_retry_after must be positive")
	}
	if d.Meter == nil {
		d.Meter = noop.NewMeterProvider()
	}
	outages, err := d.Meter.Meter(meterName).Int64Counter(MetricUnavailable, metric.WithUnit("{request}"),
		metric.WithDescription("API requests answered 503 unavailable because the database could not be reached."))
	if err != nil {
		return nil, fmt.Errorf("httpserver: %w", err)
	}
	// Exposed from the start with 0, so a scrape of a healthy server shows
	// the series an alert or a dashboard reads.
	outages.Add(context.Background(), 0)
	metrics, err := newServerMetrics(d.Meter)
	if err != nil {
		return nil, err
	}
	s := &Server{
		metrics:     metrics,
		maxBody:     o.MaxBodyBytes,
		bodies:      map[BodyClass]int64{},
		retryAfter:  strconv.FormatInt(int64((o.UnavailableRetryAfter+time.Second-1)/time.Second), 10),
		unavailable: d.Unavailable,
		outages:     outages,
		timeout:     o.RequestTimeout,
		log:         d.Log,
		auth:        d.Authenticator,
		idem:        d.Idempotency,
		mux:         http.NewServeMux(),
		limiters:    map[RateClass]*limiter{},
		declared:    map[string]Route{},
		preflight:   map[string]*corsPattern{},
		fallbacks:   map[string]bool{},
	}
	for class, n := range o.BodyLimits {
		if n <= 0 {
			return nil, fmt.Errorf("httpserver: body class %s needs a positive limit", class)
		}
		s.bodies[class] = n
	}
	for class, rl := range o.RateLimits {
		if rl.PerMinute <= 0 || rl.Burst <= 0 {
			return nil, fmt.Errorf("httpserver: rate limit class %s needs a positive per_minute and burst", class)
		}
		s.limiters[class] = newLimiter(rl, d.Clock)
	}
	s.mux.Handle("/", http.HandlerFunc(notFound))
	return s, nil
}

var methodPattern = regexp.MustCompile(`^[A-Z]+$`)

// Handle serves h for rt behind the route stages. It panics on an invalid
// route, an undeclared rate class or a pattern http.ServeMux refuses: all
// wiring bugs.
func (s *Server) Handle(rt Route, h http.Handler) {
	if rt.Operation == "" || !methodPattern.MatchString(rt.Method) || !strings.HasPrefix(rt.Pattern, "/") {
		panic("httpserver: a route needs an operation, an upper-case method and a pattern starting with /")
	}
	if rt.RateClass != "" && s.limiters[rt.RateClass] == nil {
		panic("httpserver: route " + rt.Operation + " declares a rate class without limits")
	}
	if _, ok := s.bodies[rt.BodyClass]; rt.BodyClass != "" && !ok {
		panic("httpserver: route " + rt.Operation + " declares a body class without a limit")
	}
	s.mux.Handle(rt.Method+" "+rt.Pattern, s.routeHandler(rt, h))
	s.addFallback(rt.Pattern)
	if rt.CORS {
		s.addPreflight(rt)
	}
}

// Declare records routes for HandleFunc, so that a generated router that
// registers "METHOD /path" patterns on a ServeMux-like value can register on
// the Server and still get each route's stages.
func (s *Server) Declare(routes ...Route) {
	for _, rt := range routes {
		s.declared[rt.Method+" "+rt.Pattern] = rt
	}
}

// HandleFunc registers h for pattern ("METHOD /path"), which must name a
// route given to Declare; it panics otherwise. With it a Server is the base
// router of oapi-codegen's std-http server.
func (s *Server) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	rt, ok := s.declared[pattern]
	if !ok {
		panic("httpserver: pattern was not declared: " + pattern)
	}
	s.Handle(rt, http.HandlerFunc(h))
}

// ServeHTTP runs the chain.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	st := &reqState{}
	id := ids.New().String()
	ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
	defer cancel()
	ctx = context.WithValue(correlation.With(ctx, id), stateKey{}, st)
	r = r.WithContext(ctx)
	sw := &statusWriter{ResponseWriter: w}
	sw.Header().Set("X-Request-Id", id)

	defer s.accessLog(r, sw, st, start)
	defer s.metrics.served(r, sw, st, start)()
	defer s.recoverPanic(r, sw)

	if r.ContentLength > s.maxBody {
		writeProblem(ctx, sw, problemFor(errs.CodePayloadTooLarge, "", nil))
		return
	}
	if !identityCoding(r.Header.Values("Content-Encoding")) {
		// The server decodes no content coding; taking a gzip body as
		// plain JSON would judge bytes the client never meant (RFC 9110
		// 15.5.16: 415 with the codings that are accepted).
		sw.Header().Set("Accept-Encoding", "identity")
		writeProblem(ctx, sw, problemFor(errs.CodeUnsupportedMediaType, "", nil))
		return
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
	}
	s.mux.ServeHTTP(sw, r)
}

// routeHandler wraps h in the route stages of rt.
func (s *Server) routeHandler(rt Route, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st, ok := r.Context().Value(stateKey{}).(*reqState); ok {
			st.route = rt.Pattern
		}
		if rt.CORS {
			w.Header().Set("Access-Control-Allow-Origin", "*")
		}
		if limit, ok := s.bodies[rt.BodyClass]; ok && limit < s.maxBody {
			if r.ContentLength > limit {
				writeProblem(r.Context(), w, problemFor(errs.CodePayloadTooLarge, "", nil))
				return
			}
			if r.Body != nil {
				r.Body = http.MaxBytesReader(w, r.Body, limit)
			}
		}
		if !s.allow(w, r, rt.RateClass) {
			return
		}
		p, ok := s.authenticate(w, r)
		if !ok {
			return
		}
		r = r.WithContext(actor.With(r.Context(), p))
		if unsafeMethod(r.Method) && len(r.Header.Values(idempotencyKeyHeader)) > 0 {
			if !rt.Idempotent {
				s.WriteError(w, r, keyNotSupported())
				return
			}
			s.serveIdempotent(w, r, rt, h)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// addFallback registers, once per path shape, a handler for every method
// of pattern, so a known path with an unknown method answers a 404 problem
// document instead of the ServeMux's plain-text 405.
func (s *Server) addFallback(pattern string) {
	n := 0
	shape := wildcard.ReplaceAllStringFunc(pattern, func(w string) string {
		n++
		return fmt.Sprintf("{w%d%s}", n, wildcard.FindStringSubmatch(w)[2])
	})
	if s.fallbacks[shape] {
		return
	}
	s.fallbacks[shape] = true
	s.mux.Handle(shape, http.HandlerFunc(notFound))
}

// wildcard matches a ServeMux wildcard; the shape renames wildcards by
// position and keeps "...", so that patterns differing only in wildcard
// names share one fallback.
// "{$}" (end of path) is not a wildcard and keeps its meaning.
var wildcard = regexp.MustCompile(`\{([^}.$]*)((?:\.\.\.)?)\}`)

func notFound(w http.ResponseWriter, r *http.Request) {
	writeProblem(r.Context(), w, problemFor(errs.CodeNotFound, "", nil))
}

// identityCoding reports whether the Content-Encoding header values name
// no coding or only identity (case-insensitive, comma-separated lists).
func identityCoding(values []string) bool {
	for _, v := range values {
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return false
			}
		}
	}
	return true
}

func unsafeMethod(m string) bool {
	switch m {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// routeOf returns the route template of the request of ctx, or "".
func routeOf(ctx context.Context) string {
	if st, ok := ctx.Value(stateKey{}).(*reqState); ok {
		return st.route
	}
	return ""
}
