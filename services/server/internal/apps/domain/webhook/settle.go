package webhook

import (
	"time"

	"bothy/server/internal/apps"
)

// Attempt is a sent attempt as Settle judges it.
type Attempt struct {
	// Number is the attempt the claim made (the stored attempt after the
	// claim).
	Number int
	// CreatedAt starts the retry window of webhook.retry_max_age.
	CreatedAt time.Time
	// StatusCode and RetryAfter are the receiver's answer; TransportErr is
	// set instead when no answer arrived (classified by Classify).
	StatusCode   int
	RetryAfter   string
	TransportErr error
}

// Policy holds the configuration the settlement of an attempt depends on.
type Policy struct {
	// Retry holds webhook.retry_backoff_base, webhook.retry_backoff_cap and
	// webhook.retry_max_age.
	Retry RetryConfig
	// MaxConsecutiveFailures is webhook.max_consecutive_failures.
	MaxConsecutiveFailures int
}

// Settlement is the outcome of a sent attempt as it is written: the
// delivery's new values and what becomes of its subscription.
type Settlement struct {
	// Outcome is the classified answer (Classify).
	Outcome Outcome
	// Status is the delivery's new status; NextAttemptAt is set exactly
	// when it is pending, DeliveredAt exactly when it is succeeded.
	Status        apps.DeliveryStatus
	NextAttemptAt time.Time
	DeliveredAt   time.Time
	// StoredAttempt is the attempt the row keeps: Number, or Number - 1
	// when the egress guard refused the target before any byte left
	// (attempt counts requests, D-M2-26-43).
	StoredAttempt int
	// ResponseCode is the status of the answer, 0 when none arrived.
	ResponseCode int
	// Standing is the subscription after the attempt. SubscriptionChanged
	// is false when it stays as it was (a throttle without a transition),
	// so nothing is written to it.
	Standing            Standing
	SubscriptionChanged bool
	// Delivered is set by a success: last_delivered_seq rises to the
	// event's seq and signing_key_kid names the key that signed
	// (D-M2-26-4).
	Delivered bool
	// Transition is the system transition the attempt caused, set when
	// Transitioned; it is audited and logged.
	Transition   Transition
	Transitioned bool
}

// Settle decides what a sent attempt changes, at now, on a subscription in
// standing before (D-M2-26-6, D-M2-26-7; docs/api/webhooks.md 4): a 2xx
// makes the delivery succeeded and resets the failures in a row; a 410
// makes it failed and disables the subscription (cause gone); a throttle
// (not counted) or a failure (counted) keeps it pending until the backoff,
// for a throttle at least until Retry-After, disables the subscription
// when the failures in a row reach webhook.max_consecutive_failures with
// the delivery left pending (cause max_consecutive_failures), and after
// webhook.retry_max_age makes it dead and disables the subscription (cause
// retry_max_age). The n of the backoff is the attempt, or for a refusal of
// the egress guard, which is no attempt (D-M2-26-43), the counted failures
// in a row, so the wait still grows. rnd drives the jitter like
// math/rand/v2.Int64N.
//
// A transition that does not apply to the state (a subscription an owner
// disabled meanwhile) is none (Standing.Apply). An unknown state is an
// internal *errs.Error.
func Settle(a Attempt, before Standing, p Policy, now time.Time, rnd func(n int64) int64) (Settlement, error) {
	o := Classify(a.StatusCode, a.TransportErr)
	out := Settlement{Outcome: o, StoredAttempt: a.Number, Standing: before}
	backoffAttempt := a.Number
	if refusedBeforeSending(o.LastError) {
		out.StoredAttempt = a.Number - 1
		backoffAttempt = max(before.ConsecutiveFailures+1, 1)
	}
	if a.TransportErr == nil {
		out.ResponseCode = a.StatusCode
	}
	var cause SubscriptionEvent
	switch o.Kind {
	case OutcomeSuccess:
		out.Status, out.DeliveredAt = apps.DeliverySucceeded, now
		out.Standing.ConsecutiveFailures, out.Delivered = 0, true
	case OutcomeGone:
		out.Status, cause = apps.DeliveryFailed, EventGone
	default:
		wait, hasWait := ParseRetryAfter(a.RetryAfter, now)
		next, dead := NextAttempt(o, backoffAttempt, wait, hasWait, a.CreatedAt, now, p.Retry, rnd)
		if o.Counted {
			out.Standing.ConsecutiveFailures++
		}
		switch {
		case dead:
			out.Status, cause = apps.DeliveryDead, EventRetryMaxAge
		case o.Counted && out.Standing.ConsecutiveFailures >= p.MaxConsecutiveFailures:
			out.Status, out.NextAttemptAt, cause = apps.DeliveryPending, next, EventMaxConsecutiveFailures
		default:
			out.Status, out.NextAttemptAt = apps.DeliveryPending, next
		}
	}
	if cause != "" {
		after, tr, ok, err := out.Standing.Apply(cause, now)
		if err != nil {
			return Settlement{}, err
		}
		if ok {
			out.Standing, out.Transition, out.Transitioned = after, tr, true
		}
	}
	out.SubscriptionChanged = o.Kind != OutcomeThrottled || out.Transitioned
	return out, nil
}

// refusedBeforeSending reports whether an outcome is the egress guard's
// refusal of the target before any byte left (D-M2-26-43): such a try is a
// counted failure but not an attempt, since attempt counts requests.
func refusedBeforeSending(code apps.LastError) bool {
	return code == apps.LastErrorAddressBlocked || code == apps.LastErrorHostNotAllowed
}
