package app

import (
	"context"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain/webhook"
)

// record writes the outcome of a sent attempt in the unit of work of ctx,
// which holds the subscription's row lock, and reports whether the run may
// go on with the next head (D-M2-26-3). The rule (webhook.Settle) decides
// the delivery's status, its next attempt and what becomes of the
// subscription; record persists it, audits a transition, and chains: a
// retryable outcome schedules the retry at next_attempt_at while the
// subscription stays active, a finished delivery goes on in this run while
// another delivery of the subscription is pending (without one the run
// ends without a claim that could only find nothing, D-M2-26-67), and
// nothing follows a subscription that is no longer active. A result whose
// delivery is no longer pending with the claimed attempt (deleted,
// redelivered, claimed again after its lease) is discarded.
func (s *Deliveries) record(ctx context.Context, t *DeliveryTarget, st *step, last *sent) (bool, error) {
	now := s.now()
	set, err := webhook.Settle(webhook.Attempt{
		Number: last.head.Attempt, CreatedAt: last.head.CreatedAt,
		StatusCode: last.res.StatusCode, RetryAfter: last.res.RetryAfter, TransportErr: last.err,
	}, t.standing(), webhook.Policy{Retry: s.opts.Retry, MaxConsecutiveFailures: s.opts.MaxConsecutiveFailures}, now, s.rnd)
	if err != nil {
		return false, err
	}
	rec := AttemptRecord{
		SubscriptionID: t.SubscriptionID, DeliveryID: last.head.ID, Attempt: last.head.Attempt,
		StoredAttempt: set.StoredAttempt, Status: set.Status, NextAttemptAt: set.NextAttemptAt,
		DeliveredAt: set.DeliveredAt, LastError: set.Outcome.LastError, ResponseCode: set.ResponseCode, Now: now,
		RateWindow: t.RateWindow.Ended(now, t.MaxPerSecond),
	}
	if set.SubscriptionChanged {
		rec.Subscription = &SubscriptionChange{
			State: set.Standing.State, DisabledAt: set.Standing.DisabledAt,
			ConsecutiveFailures: set.Standing.ConsecutiveFailures, Delivered: set.Delivered,
		}
		if set.Delivered {
			rec.Subscription.SigningKeyKID = last.kid
		}
	}
	done, err := s.store.RecordAttempt(ctx, rec)
	if err != nil {
		return false, err
	}
	t.RateWindow = rec.RateWindow
	if t.Lease.DeliveryID == last.head.ID {
		// RecordAttempt gave the lease back, also for a discarded result.
		t.Lease = Lease{}
	}
	if !done.Written {
		return false, nil
	}
	if set.Transitioned {
		tr := transition{Transition: set.Transition, subscriptionID: t.SubscriptionID, appID: t.Installation.AppID}
		if err := s.recordTransition(ctx, tr); err != nil {
			return false, err
		}
		st.transitioned(tr)
	}
	t.setStanding(set.Standing)
	st.tally.finished(rec.Status, rec.LastError, last.head.EventOccurredAt, now)
	if rec.Status != apps.DeliverySucceeded {
		st.failed(failure{subscriptionID: t.SubscriptionID, seq: last.head.EventSeq,
			eventType: last.eventType, reason: rec.LastError, host: last.host})
	}
	switch {
	case t.State != apps.SubscriptionActive:
		return false, nil
	case rec.Status == apps.DeliveryPending:
		return false, s.scheduler.Schedule(ctx, t.SubscriptionID, rec.NextAttemptAt)
	}
	st.finished++
	return done.OthersPending, nil
}
