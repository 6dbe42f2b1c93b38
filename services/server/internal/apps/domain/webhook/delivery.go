package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"bothy/server/internal/apps"
)

// OutcomeKind says what an attempt achieved.
type OutcomeKind string

// The kinds of outcome (D-M2-26-6).
const (
	// OutcomeSuccess: a 2xx answer; the delivery is succeeded.
	OutcomeSuccess OutcomeKind = "success"
	// OutcomeGone: a 410 answer; the delivery is failed and the subscription
	// disabled with cause gone.
	OutcomeGone OutcomeKind = "gone"
	// OutcomeThrottled: 429, 502, 503 or 504; retried, Retry-After honoured,
	// not counted.
	OutcomeThrottled OutcomeKind = "throttled"
	// OutcomeFailure: any other answer or a transport error; retried with
	// backoff and counted.
	OutcomeFailure OutcomeKind = "failure"
)

// Outcome is the classified result of one attempt.
type Outcome struct {
	// Kind is what the attempt achieved.
	Kind OutcomeKind
	// LastError is the code to store in last_error; empty for a success.
	LastError apps.LastError
	// Counted is true when the outcome adds one to consecutive_failures,
	// which is compared with webhook.max_consecutive_failures. Only
	// failures count; throttles and 410 do not (webhooks.md 4 point 2).
	Counted bool
}

// Retryable reports whether the delivery stays pending for another attempt
// (throttles and failures, until the deadline of NextAttempt).
func (o Outcome) Retryable() bool {
	return o.Kind == OutcomeThrottled || o.Kind == OutcomeFailure
}

// SpanOutcome returns the value of the span attribute bothy.outcome from the
// closed list succeeded, throttled, gone, failed, blocked (D-M2-26-17):
// refusals of the egress client are "blocked", every other failure "failed".
func (o Outcome) SpanOutcome() string {
	switch o.Kind {
	case OutcomeSuccess:
		return "succeeded"
	case OutcomeGone:
		return "gone"
	case OutcomeThrottled:
		return "throttled"
	}
	if o.LastError == apps.LastErrorAddressBlocked || o.LastError == apps.LastErrorHostNotAllowed {
		return "blocked"
	}
	return "failed"
}

// blockReasoner is implemented by the egress client's BlockedError. The
// domain names the method instead of importing the platform package.
type blockReasoner interface {
	error
	BlockReason() string
}

// timeouter is implemented by net.Error and the timeout errors of net/http.
type timeouter interface {
	error
	Timeout() bool
}

// Classify maps the result of one attempt to its Outcome (D-M2-26-6).
// statusCode is the HTTP status of the answer; transportErr the error of the
// send, nil when an answer arrived. A non-nil transportErr wins over any
// status.
//
// Statuses: 2xx success; 410 gone; 429, 502, 503, 504 throttled (not
// counted); every other status, 3xx included because redirects are never
// followed, a counted http_status.
//
// Transport errors, all counted: an error in the chain with BlockReason()
// (the egress client's refusal) gives address_blocked for the reason
// address_blocked and host_not_allowed for host_not_allowed,
// scheme_not_allowed and url_not_allowed; a deadline or any error reporting
// Timeout() gives timeout; a TLS handshake, alert or certificate error gives
// tls_failed; everything else, an unknown block reason included, gives
// connection_failed.
//
// Classify does not know whose context ended: a caller whose own context was
// cancelled (worker shutdown) must treat that as a job error before calling
// it, or the attempt is recorded as a failure.
func Classify(statusCode int, transportErr error) Outcome {
	if transportErr != nil {
		return Outcome{Kind: OutcomeFailure, LastError: transportCode(transportErr), Counted: true}
	}
	switch {
	case statusCode >= 200 && statusCode <= 299:
		return Outcome{Kind: OutcomeSuccess}
	case statusCode == 410:
		return Outcome{Kind: OutcomeGone, LastError: apps.LastErrorGone}
	case statusCode == 429 || statusCode == 502 || statusCode == 503 || statusCode == 504:
		return Outcome{Kind: OutcomeThrottled, LastError: apps.LastErrorThrottled}
	default:
		return Outcome{Kind: OutcomeFailure, LastError: apps.LastErrorHTTPStatus, Counted: true}
	}
}

// transportCode picks the last_error code of a transport error. The order
// matters: a refusal of the egress client is the most specific fact, and a
// handshake that ran out of time is a timeout rather than a TLS defect.
func transportCode(err error) apps.LastError {
	if b, ok := errors.AsType[blockReasoner](err); ok {
		switch b.BlockReason() {
		case "address_blocked":
			return apps.LastErrorAddressBlocked
		case "host_not_allowed", "scheme_not_allowed", "url_not_allowed":
			return apps.LastErrorHostNotAllowed
		}
		return apps.LastErrorConnectionFailed
	}
	if isTimeout(err) {
		return apps.LastErrorTimeout
	}
	if isTLS(err) {
		return apps.LastErrorTLSFailed
	}
	return apps.LastErrorConnectionFailed
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	t, ok := errors.AsType[timeouter](err)
	return ok && t.Timeout()
}

// isTLS recognises the typed errors of crypto/tls and crypto/x509. An alert
// sent by the peer arrives as a *net.OpError with Op "remote error" whose
// inner type crypto/tls does not export.
func isTLS(err error) bool {
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Op == "remote error" {
		return true
	}
	return has[*tls.CertificateVerificationError](err) ||
		has[tls.RecordHeaderError](err) ||
		has[tls.AlertError](err) ||
		has[*tls.ECHRejectionError](err) ||
		has[x509.UnknownAuthorityError](err) ||
		has[x509.HostnameError](err) ||
		has[x509.CertificateInvalidError](err)
}

// has reports whether err's chain holds an error of type E.
func has[E error](err error) bool {
	_, ok := errors.AsType[E](err)
	return ok
}

// Backoff returns the wait before the next attempt after failedAttempts
// counted or throttled failures in a row of one delivery (D-M2-26-7):
// a uniform random duration in [base, min(cap, base * 2^(n-1))], exponential
// with full jitter between base and cap. base is webhook.retry_backoff_base,
// cap webhook.retry_backoff_cap.
//
// The first retry (n <= 1) waits exactly base. rnd returns a value in
// [0, n) like math/rand/v2.Int64N; it is injected so tests drive the jitter,
// and a result outside that range is clamped. A negative base counts as
// zero and a cap below base as base, so the result always lies in
// [base, cap]. No input overflows.
func Backoff(base, cap time.Duration, failedAttempts int, rnd func(n int64) int64) time.Duration {
	base = max(base, 0)
	cap = max(cap, base)
	upper := cap
	if shift := max(failedAttempts, 1) - 1; shift < 63 && base <= cap>>shift {
		upper = base << shift
	}
	span := int64(upper - base)
	if span == 0 {
		return base
	}
	n := span
	if n < math.MaxInt64 {
		n++ // upper bound inclusive
	}
	return base + time.Duration(min(max(rnd(n), 0), span))
}

// HTTP-date layouts of RFC 9110 5.6.7: IMF-fixdate and the two obsolete forms
// a recipient must accept. All are GMT.
var httpDateLayouts = []string{
	"Mon, 02 Jan 2006 15:04:05 GMT",
	"Monday, 02-Jan-06 15:04:05 GMT",
	"Mon Jan _2 15:04:05 2006",
}

// ParseRetryAfter reads a Retry-After header (RFC 9110 10.2.3) relative to
// now: delta-seconds (1*DIGIT) or an HTTP-date. A date in the past counts as
// zero; delta-seconds beyond the range of time.Duration are cut to its
// maximum. It returns false, and zero, for an empty header, a negative or
// fractional number, a date in another zone or any other text, because an
// invalid value is ignored rather than guessed.
func ParseRetryAfter(header string, now time.Time) (time.Duration, bool) {
	s := strings.Trim(header, " \t")
	if s == "" {
		return 0, false
	}
	if allDigits(s) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n > math.MaxInt64/int64(time.Second) {
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(n) * time.Second, true
	}
	for _, layout := range httpDateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return max(t.Sub(now), 0), true
		}
	}
	return 0, false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// RetryConfig holds the timing keys of D-M2-26-7.
type RetryConfig struct {
	// Base is webhook.retry_backoff_base: the first retry's wait and the
	// lower bound of every wait.
	Base time.Duration
	// Cap is webhook.retry_backoff_cap: the upper bound of every backoff.
	Cap time.Duration
	// MaxAge is webhook.retry_max_age: after created_at + MaxAge a failed
	// delivery is dead.
	MaxAge time.Duration
}

// NextAttempt decides, after a throttled or failed attempt, when the next
// attempt is due, or that the delivery is dead (D-M2-26-7).
//
// attempt is the number of attempts made so far, this one included (the n
// of Backoff). For a throttle with a valid Retry-After (hasRetryAfter, from
// ParseRetryAfter) the wait is the larger of backoff and retryAfter; a
// failure ignores Retry-After. The deadline is createdAt + cfg.MaxAge: a
// failure at or after it is dead (and the caller disables the subscription
// with cause retry_max_age); a retry is never scheduled after it, a later
// time is cut to the deadline. The deadline is checked only here, after a
// failed attempt, never before sending, so a head that waited in a paused or
// disabled subscription still gets its attempt after the resume.
//
// For a success or gone there is nothing to schedule: it returns the zero
// time and false.
func NextAttempt(o Outcome, attempt int, retryAfter time.Duration, hasRetryAfter bool,
	createdAt, now time.Time, cfg RetryConfig, rnd func(n int64) int64,
) (next time.Time, dead bool) {
	if !o.Retryable() {
		return time.Time{}, false
	}
	deadline := createdAt.Add(cfg.MaxAge)
	if !now.Before(deadline) {
		return time.Time{}, true
	}
	wait := Backoff(cfg.Base, cfg.Cap, attempt, rnd)
	if o.Kind == OutcomeThrottled && hasRetryAfter && retryAfter > wait {
		wait = retryAfter
	}
	if wait >= deadline.Sub(now) {
		return deadline, false
	}
	return now.Add(wait), false
}
