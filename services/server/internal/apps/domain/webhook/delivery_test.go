package webhook_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain/webhook"
)

// blockedError has the shape of the egress client's BlockedError: the domain
// recognises any error in the chain that exposes BlockReason.
type blockedError struct{ reason string }

func (e *blockedError) Error() string       { return "egress: blocked: " + e.reason }
func (e *blockedError) BlockReason() string { return e.reason }

// quietLog keeps the handshake errors the test servers provoke out of the
// test output.
var quietLog = log.New(io.Discard, "", 0)

// asClientError wraps err the way net/http's Client does.
func asClientError(err error) error {
	return &url.Error{Op: "Post", URL: "https://hooks.example.com/in", Err: err}
}

// rawServer accepts one TCP connection on 127.0.0.1, hands it to serve and
// closes it afterwards. It returns the listening address.
func rawServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		serve(conn)
	}()
	return ln.Addr().String()
}

func failure(code apps.LastError) webhook.Outcome {
	return webhook.Outcome{Kind: webhook.OutcomeFailure, LastError: code, Counted: true}
}

var (
	success   = webhook.Outcome{Kind: webhook.OutcomeSuccess}
	gone      = webhook.Outcome{Kind: webhook.OutcomeGone, LastError: apps.LastErrorGone}
	throttled = webhook.Outcome{Kind: webhook.OutcomeThrottled, LastError: apps.LastErrorThrottled}
)

func TestClassify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		err    error
		want   webhook.Outcome
	}{
		{"200 is a success", 200, nil, success},
		{"204 is a success", 204, nil, success},
		{"299 is a success", 299, nil, success},
		{"410 is gone and not counted", 410, nil, gone},
		{"429 is a throttle and not counted", 429, nil, throttled},
		{"502 is a throttle", 502, nil, throttled},
		{"503 is a throttle", 503, nil, throttled},
		{"504 is a throttle", 504, nil, throttled},
		{"300 is a counted http_status", 300, nil, failure(apps.LastErrorHTTPStatus)},
		{"a 302 redirect is never followed and counts", 302, nil, failure(apps.LastErrorHTTPStatus)},
		{"307 counts", 307, nil, failure(apps.LastErrorHTTPStatus)},
		{"400 counts", 400, nil, failure(apps.LastErrorHTTPStatus)},
		{"401 counts", 401, nil, failure(apps.LastErrorHTTPStatus)},
		{"404 counts", 404, nil, failure(apps.LastErrorHTTPStatus)},
		{"500 counts", 500, nil, failure(apps.LastErrorHTTPStatus)},
		{"501 counts", 501, nil, failure(apps.LastErrorHTTPStatus)},
		{"a status the client never returns counts", 0, nil, failure(apps.LastErrorHTTPStatus)},
		{"egress reason address_blocked", 0, asClientError(&blockedError{"address_blocked"}), failure(apps.LastErrorAddressBlocked)},
		{"egress reason host_not_allowed", 0, asClientError(&blockedError{"host_not_allowed"}), failure(apps.LastErrorHostNotAllowed)},
		{"egress reason scheme_not_allowed", 0, asClientError(&blockedError{"scheme_not_allowed"}), failure(apps.LastErrorHostNotAllowed)},
		{"egress reason url_not_allowed", 0, &blockedError{"url_not_allowed"}, failure(apps.LastErrorHostNotAllowed)},
		{"an unknown egress reason is a connection failure", 0, &blockedError{"something_new"}, failure(apps.LastErrorConnectionFailed)},
		{"a blocked error wins over a status", 200, &blockedError{"address_blocked"}, failure(apps.LastErrorAddressBlocked)},
		{"a context deadline is a timeout", 0, asClientError(context.DeadlineExceeded), failure(apps.LastErrorTimeout)},
		{"a socket deadline is a timeout", 0, &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, failure(apps.LastErrorTimeout)},
		{"a net.Error with Timeout is a timeout", 0, &net.DNSError{Err: "lookup timed out", IsTimeout: true}, failure(apps.LastErrorTimeout)},
		{"an unknown certificate authority is tls_failed", 0, asClientError(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), failure(apps.LastErrorTLSFailed)},
		{"a hostname mismatch is tls_failed", 0, asClientError(x509.HostnameError{Host: "hooks.example.com"}), failure(apps.LastErrorTLSFailed)},
		{"an expired certificate is tls_failed", 0, x509.CertificateInvalidError{Reason: x509.Expired}, failure(apps.LastErrorTLSFailed)},
		{"a plain text answer to a handshake is tls_failed", 0, asClientError(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), failure(apps.LastErrorTLSFailed)},
		{"a TLS alert is tls_failed", 0, tls.AlertError(40), failure(apps.LastErrorTLSFailed)},
		{"a reset connection is connection_failed", 0, asClientError(&net.OpError{Op: "read", Net: "tcp", Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}), failure(apps.LastErrorConnectionFailed)},
		{"a refused connection is connection_failed", 0, &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}, failure(apps.LastErrorConnectionFailed)},
		{"an early EOF is connection_failed", 0, asClientError(io.ErrUnexpectedEOF), failure(apps.LastErrorConnectionFailed)},
		{"a DNS failure is connection_failed", 0, &net.DNSError{Err: "no such host", IsNotFound: true}, failure(apps.LastErrorConnectionFailed)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, webhook.Classify(tc.status, tc.err))
		})
	}
}

// TestClassifyRealTransportErrors feeds Classify the errors that net/http
// really returns, so the table above cannot drift from the shapes the
// standard library produces. Every server listens on 127.0.0.1, port 0.
func TestClassifyRealTransportErrors(t *testing.T) {
	t.Parallel()

	post := func(t *testing.T, client *http.Client, ctx context.Context, addr string) error {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, addr, nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		if resp != nil {
			_ = resp.Body.Close()
		}
		require.Error(t, err)
		return err
	}

	t.Run("a certificate from an unknown authority is tls_failed", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		srv.Config.ErrorLog = quietLog
		srv.StartTLS()
		t.Cleanup(srv.Close)
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509.NewCertPool()}}}
		err := post(t, client, t.Context(), srv.URL)
		require.Equal(t, failure(apps.LastErrorTLSFailed), webhook.Classify(0, err))
	})

	t.Run("an alert from the server during the handshake is tls_failed", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		srv.TLS = &tls.Config{MinVersion: tls.VersionTLS13}
		srv.Config.ErrorLog = quietLog
		srv.StartTLS()
		t.Cleanup(srv.Close)
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, MaxVersion: tls.VersionTLS12,
		}}}
		err := post(t, client, t.Context(), srv.URL)
		require.Equal(t, failure(apps.LastErrorTLSFailed), webhook.Classify(0, err))
	})

	t.Run("a server that does not speak TLS is tls_failed", func(t *testing.T) {
		t.Parallel()
		addr := rawServer(t, func(conn net.Conn) {
			_, _ = conn.Read(make([]byte, 4096))
			_, _ = conn.Write([]byte("SSH-2.0-example\r\n"))
			_, _ = conn.Read(make([]byte, 1)) // until the client gives up
		})
		err := post(t, &http.Client{}, t.Context(), "https://"+addr)
		require.Equal(t, failure(apps.LastErrorTLSFailed), webhook.Classify(0, err))
	})

	t.Run("an HTTP answer to the handshake is connection_failed because net/http drops the TLS error type", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		t.Cleanup(srv.Close)
		err := post(t, &http.Client{}, t.Context(), "https://"+srv.Listener.Addr().String())
		require.Equal(t, failure(apps.LastErrorConnectionFailed), webhook.Classify(0, err))
	})

	t.Run("a receiver that never answers before the deadline is a timeout", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(release) })
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		err := post(t, &http.Client{}, ctx, srv.URL)
		require.Equal(t, failure(apps.LastErrorTimeout), webhook.Classify(0, err))
	})

	t.Run("a connection reset by the receiver is connection_failed", func(t *testing.T) {
		t.Parallel()
		addr := rawServer(t, func(conn net.Conn) {
			_, _ = conn.Read(make([]byte, 1024))
			_ = conn.(*net.TCPConn).SetLinger(0) // close with RST
		})
		err := post(t, &http.Client{}, t.Context(), "http://"+addr)
		require.Equal(t, failure(apps.LastErrorConnectionFailed), webhook.Classify(0, err))
	})

	t.Run("a refused connection is connection_failed", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		require.NoError(t, ln.Close())
		err = post(t, &http.Client{}, t.Context(), "http://"+addr)
		require.Equal(t, failure(apps.LastErrorConnectionFailed), webhook.Classify(0, err))
	})
}

func TestOutcomeHelpers(t *testing.T) {
	t.Parallel()
	require.False(t, success.Retryable())
	require.False(t, gone.Retryable())
	require.True(t, throttled.Retryable())
	require.True(t, failure(apps.LastErrorTimeout).Retryable())

	require.Equal(t, "succeeded", success.SpanOutcome())
	require.Equal(t, "gone", gone.SpanOutcome())
	require.Equal(t, "throttled", throttled.SpanOutcome())
	require.Equal(t, "failed", failure(apps.LastErrorHTTPStatus).SpanOutcome())
	require.Equal(t, "blocked", failure(apps.LastErrorAddressBlocked).SpanOutcome())
	require.Equal(t, "blocked", failure(apps.LastErrorHostNotAllowed).SpanOutcome())
}

// Random sources for the jitter: the lowest and the highest value rnd may
// return, and a fixed one.
func rndMin(int64) int64   { return 0 }
func rndMax(n int64) int64 { return n - 1 }
func rndFixed(v int64) func(int64) int64 {
	return func(n int64) int64 { return min(v, n-1) }
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	const base, capDur = time.Second, time.Minute
	for _, tc := range []struct {
		name     string
		base     time.Duration
		cap      time.Duration
		attempts int
		rnd      func(int64) int64
		want     time.Duration
	}{
		{"the first retry waits exactly base even with the highest draw", base, capDur, 1, rndMax, base},
		{"the first retry waits exactly base with the lowest draw", base, capDur, 1, rndMin, base},
		{"no attempt yet counts as the first", base, capDur, 0, rndMax, base},
		{"a negative attempt counts as the first", base, capDur, -3, rndMax, base},
		{"the second retry may reach twice base", base, capDur, 2, rndMax, 2 * base},
		{"the third retry may reach four times base", base, capDur, 3, rndMax, 4 * base},
		{"the sixth retry may reach 32 times base", base, capDur, 6, rndMax, 32 * base},
		{"the seventh retry is cut to cap", base, capDur, 7, rndMax, capDur},
		{"a huge attempt number stays at cap", base, capDur, math.MaxInt, rndMax, capDur},
		{"the lowest draw is always base", base, capDur, 50, rndMin, base},
		{"the random source drives the jitter", base, capDur, 6, rndFixed(int64(5 * time.Second)), 6 * time.Second},
		{"cap below base gives base", base, time.Millisecond, 5, rndMax, base},
		{"the largest durations do not overflow", math.MaxInt64 / 2, math.MaxInt64, 3, rndMax, math.MaxInt64},
		{"a zero base with a zero cap gives zero", 0, 0, 9, rndMax, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, webhook.Backoff(tc.base, tc.cap, tc.attempts, tc.rnd))
		})
	}
}

func TestBackoffUpperBoundDoublesUpToCap(t *testing.T) {
	t.Parallel()
	const base, capDur = 10 * time.Second, 15 * time.Minute
	prev := time.Duration(0)
	for n := 1; n <= 20; n++ {
		upper := webhook.Backoff(base, capDur, n, rndMax)
		require.Equal(t, base, webhook.Backoff(base, capDur, n, rndMin))
		if n > 1 {
			require.Equal(t, min(2*prev, capDur), upper, "attempt %d", n)
		}
		prev = upper
	}
}

func TestBackoffIgnoresAFaultyRandomSource(t *testing.T) {
	t.Parallel()
	require.Equal(t, 4*time.Second, webhook.Backoff(time.Second, time.Minute, 3, func(int64) int64 { return math.MaxInt64 }))
	require.Equal(t, time.Second, webhook.Backoff(time.Second, time.Minute, 3, func(int64) int64 { return -7 }))
}

func FuzzBackoff(f *testing.F) {
	// base, cap, failed attempts, random draw
	f.Add(int64(time.Second), int64(time.Minute), 1, int64(0))             // first retry
	f.Add(int64(time.Second), int64(time.Minute), 7, int64(math.MaxInt64)) // cut to cap
	f.Add(int64(time.Second), int64(time.Millisecond), 4, int64(3))        // cap below base
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64), math.MaxInt, int64(1))
	f.Add(int64(-5), int64(-1), -1, int64(-9)) // negative everything
	f.Fuzz(func(t *testing.T, base, capN int64, attempts int, draw int64) {
		b, c := time.Duration(base), time.Duration(capN)
		got := webhook.Backoff(b, c, attempts, func(n int64) int64 {
			if n <= 0 {
				t.Fatalf("rnd called with %d", n)
			}
			return draw
		})
		lo := max(b, 0)
		hi := max(c, lo)
		if got < lo || got > hi {
			t.Fatalf("Backoff(%v, %v, %d) = %v outside [%v, %v]", b, c, attempts, got, lo, hi)
		}
		if attempts <= 1 && got != lo {
			t.Fatalf("first retry waited %v, want %v", got, lo)
		}
		// The upper bound of attempt n is base * 2^(n-1).
		if attempts >= 1 && attempts < 62 && lo > 0 && lo <= math.MaxInt64>>(attempts-1) && got > lo<<(attempts-1) {
			t.Fatalf("attempt %d waited %v above %v", attempts, got, lo<<(attempts-1))
		}
	})
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		header string
		want   time.Duration
		ok     bool
	}{
		{"delta-seconds", "120", 2 * time.Minute, true},
		{"zero seconds", "0", 0, true},
		{"leading zeros", "007", 7 * time.Second, true},
		{"optional white space around the value", " 30\t", 30 * time.Second, true},
		{"an IMF-fixdate in the future", "Mon, 30 Nov 2026 10:01:30 GMT", 90 * time.Second, true},
		{"an obsolete RFC 850 date", "Monday, 30-Nov-26 10:00:05 GMT", 5 * time.Second, true},
		{"an obsolete asctime date", "Mon Nov 30 10:00:10 2026", 10 * time.Second, true},
		{"a past date counts as zero", "Sun, 29 Nov 2026 10:00:00 GMT", 0, true},
		{"a date equal to now is zero", "Mon, 30 Nov 2026 10:00:00 GMT", 0, true},
		{"delta-seconds beyond a Duration are cut", "99999999999999999999", time.Duration(math.MaxInt64), true},
		{"negative seconds are ignored", "-5", 0, false},
		{"a plus sign is ignored", "+5", 0, false},
		{"fractional seconds are ignored", "1.5", 0, false},
		{"an empty header is ignored", "", 0, false},
		{"white space only is ignored", "   ", 0, false},
		{"garbage is ignored", "soon", 0, false},
		{"a date in another zone is ignored", "Mon, 30 Nov 2026 10:01:30 CET", 0, false},
		{"a date with trailing garbage is ignored", "Mon, 30 Nov 2026 10:01:30 GMT x", 0, false},
		{"two values are ignored", "5, 6", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := webhook.ParseRetryAfter(tc.header, now)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	f.Add("120")                            // delta-seconds
	f.Add("Mon, 30 Nov 2026 10:01:30 GMT")  // IMF-fixdate
	f.Add("Monday, 30-Nov-26 10:00:05 GMT") // RFC 850
	f.Add("Mon Nov 30 10:00:10 2026")       // asctime
	f.Add("-1")                             // negative
	f.Add("99999999999999999999999")        // overflow
	f.Add("")                               // empty
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, header string) {
		d, ok := webhook.ParseRetryAfter(header, now)
		if !ok {
			if d != 0 {
				t.Fatalf("ignored %q but returned %v", header, d)
			}
			return
		}
		if d < 0 {
			t.Fatalf("%q gave a negative delay %v", header, d)
		}
		// Round trip: a delay in whole seconds written as delta-seconds
		// parses to itself.
		if d%time.Second == 0 && d < time.Duration(math.MaxInt64/2) {
			again, ok := webhook.ParseRetryAfter(strconv.FormatInt(int64(d/time.Second), 10), now)
			if !ok || again != d {
				t.Fatalf("round trip of %v: %v %v", d, again, ok)
			}
		}
	})
}

func TestNextAttempt(t *testing.T) {
	t.Parallel()
	cfg := webhook.RetryConfig{Base: 10 * time.Second, Cap: time.Hour, MaxAge: 24 * time.Hour}
	created := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	deadline := created.Add(cfg.MaxAge)
	now := created.Add(time.Minute)
	for _, tc := range []struct {
		name     string
		outcome  webhook.Outcome
		attempt  int
		ra       time.Duration
		hasRA    bool
		now      time.Time
		rnd      func(int64) int64
		wantNext time.Time
		wantDead bool
	}{
		{"a first counted failure waits base", failure(apps.LastErrorHTTPStatus), 1, 0, false, now, rndMax, now.Add(10 * time.Second), false},
		{"a third failure waits up to four times base", failure(apps.LastErrorTimeout), 3, 0, false, now, rndMax, now.Add(40 * time.Second), false},
		{"a throttle without Retry-After uses the backoff", throttled, 2, 0, false, now, rndMax, now.Add(20 * time.Second), false},
		{"a Retry-After shorter than the backoff loses", throttled, 3, 5 * time.Second, true, now, rndMax, now.Add(40 * time.Second), false},
		{"a Retry-After longer than the backoff wins", throttled, 1, 10 * time.Minute, true, now, rndMax, now.Add(10 * time.Minute), false},
		{"a Retry-After of zero leaves the backoff", throttled, 1, 0, true, now, rndMax, now.Add(10 * time.Second), false},
		{"a failure ignores a Retry-After", failure(apps.LastErrorHTTPStatus), 1, 10 * time.Minute, true, now, rndMax, now.Add(10 * time.Second), false},
		{"a retry after the deadline is cut to it", failure(apps.LastErrorConnectionFailed), 30, 0, false, deadline.Add(-time.Minute), rndMax, deadline, false},
		{"a Retry-After beyond the deadline is cut to it", throttled, 1, 48 * time.Hour, true, now, rndMax, deadline, false},
		{"a counted failure at the deadline is dead", failure(apps.LastErrorTimeout), 4, 0, false, deadline, rndMax, time.Time{}, true},
		{"a counted failure after the deadline is dead", failure(apps.LastErrorAddressBlocked), 4, 0, false, deadline.Add(time.Second), rndMax, time.Time{}, true},
		{"a throttle at the deadline is dead", throttled, 2, time.Second, true, deadline, rndMax, time.Time{}, true},
		{"a success schedules nothing", success, 1, 0, false, now, rndMax, time.Time{}, false},
		{"gone schedules nothing", gone, 1, 0, false, deadline.Add(time.Hour), rndMax, time.Time{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			next, dead := webhook.NextAttempt(tc.outcome, tc.attempt, tc.ra, tc.hasRA, created, tc.now, cfg, tc.rnd)
			require.Equal(t, tc.wantDead, dead)
			require.True(t, tc.wantNext.Equal(next), "next %v, want %v", next, tc.wantNext)
		})
	}
}

func TestNextAttemptStaysInTheBackoffInterval(t *testing.T) {
	t.Parallel()
	cfg := webhook.RetryConfig{Base: time.Second, Cap: time.Minute, MaxAge: time.Hour}
	created := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for attempt := 1; attempt <= 10; attempt++ {
		for _, draw := range []int64{0, 1, int64(time.Second), int64(time.Hour)} {
			next, dead := webhook.NextAttempt(failure(apps.LastErrorHTTPStatus), attempt, 0, false, created, created, cfg, rndFixed(draw))
			require.False(t, dead)
			wait := next.Sub(created)
			require.GreaterOrEqual(t, wait, cfg.Base)
			require.LessOrEqual(t, wait, min(cfg.Cap, cfg.Base<<(attempt-1)), fmt.Sprint(attempt))
		}
	}
}

func BenchmarkClassify(b *testing.B) {
	errs := []error{
		nil,
		asClientError(&blockedError{"address_blocked"}),
		asClientError(context.DeadlineExceeded),
		asClientError(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}),
		asClientError(&net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}),
	}
	statuses := []int{200, 503, 500, 0, 0}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		j := i % len(errs)
		_ = webhook.Classify(statuses[j], errs[j])
	}
}
