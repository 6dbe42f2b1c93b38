package app

import (
	"context"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
)

// record writes the outcome of a sent attempt (Design notes 4 g and h, 6
// and 7) in the unit of work of ctx, which holds the subscription's row
// lock, and reports whether the run may go on with the next head. A result
// whose delivery is no longer pending with the claimed attempt (deleted,
// redelivered, claimed again after its lease) is discarded.
//
// Outcomes: a 2xx makes the delivery succeeded, raises last_delivered_seq,
// resets consecutive_failures and names the signing key; a 410 makes it
// failed and disables the subscription (cause gone); a throttle (not
// counted) or a failure (counted) keeps it pending until the backoff or
// Retry-After, disables the subscription at
// webhook.max_consecutive_failures with the head left pending (cause
// max_consecutive_failures), and after webhook.retry_max_age makes it dead
// and disables the subscription (cause retry_max_age). The chain: a
// retryable outcome schedules the retry at next_attempt_at while the
// subscription stays active; a finished delivery goes on in this run;
// nothing follows a subscription that is no longer active.
func (s *Deliveries) record(ctx context.Context, t *DeliveryTarget, st *step, last *sent) (bool, error) {
	now := s.now()
	o := domain.Classify(last.res.StatusCode, last.err)
	rec := AttemptRecord{SubscriptionID: t.SubscriptionID, DeliveryID: last.head.ID, Attempt: last.head.Attempt,
		StoredAttempt: last.head.Attempt, LastError: o.LastError, Now: now}
	// backoffAttempt is the n of the backoff interval: the attempt, or for
	// a target the egress guard refused before any byte left (not an
	// attempt, D-M2-26-43) the counted failures in a row, so the wait still
	// grows.
	backoffAttempt := last.head.Attempt
	if refusedBeforeSending(o.LastError) {
		rec.StoredAttempt = last.head.Attempt - 1
		backoffAttempt = max(t.ConsecutiveFailures+1, 1)
	}
	if last.err == nil {
		rec.ResponseCode = last.res.StatusCode
	}
	change := &SubscriptionChange{State: t.State, DisabledAt: t.DisabledAt, ConsecutiveFailures: t.ConsecutiveFailures}
	var cause domain.SubscriptionEvent
	switch o.Kind {
	case domain.OutcomeSuccess:
		rec.Status, rec.DeliveredAt = apps.DeliverySucceeded, now
		change.ConsecutiveFailures, change.Delivered, change.SigningKeyKID = 0, true, last.kid
	case domain.OutcomeGone:
		rec.Status, cause = apps.DeliveryFailed, domain.EventGone
	default:
		wait, hasWait := domain.ParseRetryAfter(last.res.RetryAfter, now)
		next, dead := domain.NextAttempt(o, backoffAttempt, wait, hasWait, last.head.CreatedAt, now, s.opts.Retry, s.rnd)
		if o.Counted {
			change.ConsecutiveFailures++
		}
		switch {
		case dead:
			rec.Status, cause = apps.DeliveryDead, domain.EventRetryMaxAge
		case o.Counted && change.ConsecutiveFailures >= s.opts.MaxConsecutiveFailures:
			rec.Status, rec.NextAttemptAt, cause = apps.DeliveryPending, next, domain.EventMaxConsecutiveFailures
		default:
			rec.Status, rec.NextAttemptAt = apps.DeliveryPending, next
		}
	}
	tr, hasTr := transition{}, false
	if cause != "" {
		var err error
		if tr, hasTr, err = applyTransition(t.SubscriptionID, t.Installation.AppID, t.State, cause); err != nil {
			return false, err
		}
		if hasTr {
			change.State, change.DisabledAt = tr.to, disabledAt(tr.to, now)
		}
	}
	if o.Kind != domain.OutcomeThrottled || hasTr {
		// A throttle without a transition leaves the subscription as it is.
		rec.Subscription = change
	}
	ok, err := s.store.RecordAttempt(ctx, rec)
	if err != nil {
		return false, err
	}
	if t.Lease.DeliveryID == last.head.ID {
		// RecordAttempt gave the lease back, also for a discarded result.
		t.Lease = Lease{}
	}
	if !ok {
		return false, nil
	}
	if hasTr {
		if err := s.recordTransition(ctx, tr); err != nil {
			return false, err
		}
		st.transitioned(tr)
	}
	t.State, t.DisabledAt, t.ConsecutiveFailures = change.State, change.DisabledAt, change.ConsecutiveFailures
	st.tally.finished(rec.Status, o.LastError, last.head.EventOccurredAt, now)
	if rec.Status != apps.DeliverySucceeded {
		st.failed(failure{subscriptionID: t.SubscriptionID, seq: last.head.EventSeq,
			eventType: last.eventType, reason: o.LastError, host: last.host})
	}
	switch {
	case t.State != apps.SubscriptionActive:
		return false, nil
	case rec.Status == apps.DeliveryPending:
		return false, s.scheduler.Schedule(ctx, t.SubscriptionID, rec.NextAttemptAt)
	}
	st.finished++
	return true, nil
}

// refusedBeforeSending reports whether an outcome is the egress guard's
// refusal of the target before any byte left (D-M2-26-43): such a try is a
// counted failure but not an attempt, since attempt counts requests.
func refusedBeforeSending(code apps.LastError) bool {
	return code == apps.LastErrorAddressBlocked || code == apps.LastErrorHostNotAllowed
}
