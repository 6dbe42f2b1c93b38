package app

import (
	"context"
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/errs"
)

// record locks the subscription and writes the outcome of last, the
// attempt the run sent, in the unit of work of ctx (D-M2-26-3). The rule
// (webhook.Settle) decides the delivery's status, its next attempt and what
// becomes of the subscription, from the subscription as last was claimed
// under; lock and record are one statement, which writes only when the
// subscription's standing and rate are still those (D-M2-26-68), and a
// subscription an owner or a round changed meanwhile gets the record
// computed again from what it is now, under the lock the first statement
// took. record audits a transition and chains: a retryable outcome
// schedules the retry at next_attempt_at while the subscription stays
// active, a finished delivery goes on in this run while another delivery
// of the subscription is pending (without one the run ends without a
// claim that could only find nothing, D-M2-26-67), and nothing follows a
// subscription that is no longer active. A result whose delivery is no
// longer pending with the claimed attempt (deleted, redelivered, claimed
// again after its lease) is discarded.
//
// It returns the locked subscription with what the record changed when
// the run goes on with its next head, and nil when the run ends here (the
// subscription was deleted during the attempt, the result was discarded,
// the delivery waits for a retry, the subscription is no longer active or
// nothing else is pending).
func (s *Deliveries) record(ctx context.Context, st *step, last *sent) (*DeliveryTarget, error) {
	now := s.now()
	basis := last.target
	var set webhook.Settlement
	var rec AttemptRecord
	var done Recorded
	for try := 0; ; try++ {
		var err error
		if set, rec, err = s.settle(&basis, last, now); err != nil {
			return nil, err
		}
		if done, err = s.store.RecordAttempt(ctx, rec); err != nil || !done.Found {
			// A subscription deleted during the attempt: its result is
			// discarded.
			return nil, err
		}
		if done.AsExpected {
			break
		}
		if try > 0 {
			return nil, errs.Internalf("apps: the webhook subscription changed under its row lock")
		}
		// The subscription changed after the claim; the first statement
		// took the row lock, so the second finds it as it was read.
		basis = done.Target
	}
	t := &done.Target
	t.RateWindow = rec.RateWindow
	if t.Lease.DeliveryID == last.head.ID {
		// RecordAttempt gave the lease back, also for a discarded result.
		t.Lease = Lease{}
	}
	if !done.Written {
		return nil, nil
	}
	if set.Transitioned {
		tr := transition{Transition: set.Transition, subscriptionID: t.SubscriptionID, appID: t.Installation.AppID}
		if err := s.recordTransition(ctx, tr); err != nil {
			return nil, err
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
		return nil, nil
	case rec.Status == apps.DeliveryPending:
		return nil, s.scheduler.Schedule(ctx, t.SubscriptionID, rec.NextAttemptAt)
	}
	st.finished++
	if done.Next.Seq == 0 {
		return nil, nil
	}
	st.nextEvent = done.Next
	return t, nil
}

// settle computes the record of last from basis, the subscription as the
// record expects to find it.
func (s *Deliveries) settle(basis *DeliveryTarget, last *sent, now time.Time) (webhook.Settlement, AttemptRecord, error) {
	set, err := webhook.Settle(webhook.Attempt{
		Number: last.head.Attempt, CreatedAt: last.head.CreatedAt,
		StatusCode: last.res.StatusCode, RetryAfter: last.res.RetryAfter, TransportErr: last.err,
	}, basis.standing(), webhook.Policy{Retry: s.opts.Retry, MaxConsecutiveFailures: s.opts.MaxConsecutiveFailures}, now, s.rnd)
	if err != nil {
		return webhook.Settlement{}, AttemptRecord{}, err
	}
	rec := AttemptRecord{
		SubscriptionID: basis.SubscriptionID, DeliveryID: last.head.ID, Attempt: last.head.Attempt,
		StoredAttempt: set.StoredAttempt, Status: set.Status, NextAttemptAt: set.NextAttemptAt,
		DeliveredAt: set.DeliveredAt, LastError: set.Outcome.LastError, ResponseCode: set.ResponseCode, Now: now,
		RateWindow: basis.RateWindow.Ended(now, basis.MaxPerSecond),
		Expected:   RecordBasis{Standing: basis.standing(), MaxPerSecond: basis.MaxPerSecond, RateWindow: basis.RateWindow},
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
	return set, rec, nil
}
