package app

import (
	"context"
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/txn"
)

// record locks the subscription and writes the outcomes of last, the batch
// the run sent, in the unit of work of ctx (D-M2-26-3, ADR 0088). The rule
// (webhook.Settle) decides each delivery's status, its next attempt and
// what becomes of the subscription, one attempt after the other from the
// subscription as the batch was claimed under; lock and record are one
// statement, which writes only when the subscription's standing and rate
// are still those (D-M2-26-68), and a subscription an owner or a round
// changed meanwhile gets the record computed again from what it is now,
// under the lock the first statement took. The heads the batch did not
// send get their attempt back. record audits a transition and chains: a
// retryable outcome schedules the retry at next_attempt_at while the
// subscription stays active, a finished batch goes on in this run while
// another delivery of the subscription is pending (without one the run
// ends without a claim that could only find nothing, D-M2-26-67), and
// nothing follows a subscription that is no longer active. A result whose
// deliveries are no longer pending with the claimed attempts (deleted,
// redelivered, claimed again after its lease) is discarded.
//
// It returns the locked subscription with what the record changed and the
// pending heads the run claims next when the run goes on, and nil when
// the run ends here (the subscription was deleted during the batch, the
// result was discarded, the last delivery waits for a retry, the
// subscription is no longer active or nothing else is pending). In a unit
// of work of several runs (st.together) the computed record waits in
// st.recording, and recordPending writes it with the others' and goes on
// from there; record then returns nil.
func (s *Deliveries) record(ctx context.Context, st *step, last *sentBatch) (*DeliveryTarget, []PendingHead, error) {
	p, err := s.settle(&last.target, last, s.now())
	if err != nil {
		return nil, nil, err
	}
	if st.together {
		// The unit of work records the batches of all its runs with one
		// statement (recordPending, D-M2-26-78).
		st.recording = p
		return nil, nil, nil
	}
	if p.endsRun() {
		return nil, nil, s.recordLast(ctx, st, p)
	}
	done, err := s.store.RecordAttempts(ctx, p.rec)
	if err != nil {
		return nil, nil, err
	}
	return s.recorded(ctx, st, p, done[0])
}

// pendingRecord is the record of a run's sent batch, computed (settle)
// and waiting to be written.
type pendingRecord struct {
	last *sentBatch
	sets []webhook.Settlement
	rec  AttemptRecord
}

// endsRun reports whether p is expected to be the last statement of its
// run (D-M2-26-86): its batch's claim found nothing else pending
// (batch.drained), every claimed head was sent, and as computed the record
// asks for nothing after it, no transition to audit and no retry to
// schedule. recorded then sends nothing after the record when the
// subscription is as the claim left it.
func (p *pendingRecord) endsRun() bool {
	if !p.last.drained || p.last.alone || len(p.last.unsent) > 0 {
		return false
	}
	for _, set := range p.sets {
		if set.Transitioned {
			return false
		}
	}
	return p.rec.Outcomes[len(p.rec.Outcomes)-1].Status != apps.DeliveryPending
}

// recordLast writes p, a record expected to end its run (endsRun), in
// the round trip of its unit of work's COMMIT (txn.Last, D-M2-26-86): on a
// quiet subscription the run's last unit of work is one round trip
// instead of two. What the record found decides what follows, after the
// commit: a head that became pending during the batch is claimed in a
// fresh step (st.claimAgain), and a subscription that changed after the
// claim, for which the record wrote nothing, gets the batch recorded
// again in a step of its own (st.recordAgain), computed under its lock as
// record does.
func (s *Deliveries) recordLast(ctx context.Context, st *step, p *pendingRecord) error {
	var done []Recorded
	err := txn.Last(ctx, func(ctx context.Context) (err error) {
		done, err = s.store.RecordAttempts(ctx, p.rec)
		return err
	})
	if err != nil {
		return err
	}
	if done[0].Found && !done[0].AsExpected {
		st.recordAgain = true
		return nil
	}
	t, _, err := s.recorded(ctx, st, p, done[0])
	// recorded returns the subscription only when a head is pending.
	st.claimAgain = t != nil
	return err
}

// recordPending writes the records the steps sts left waiting (record)
// with one statement (D-M2-26-78), then takes each run on from what its
// record found, concurrently in functions of txn.Together: a record
// computed again when its subscription changed, the transitions, and the
// claim of its next batch.
func (s *Deliveries) recordPending(ctx context.Context, sts []*step) error {
	var waiting []*step
	var recs []AttemptRecord
	for _, st := range sts {
		if st.recording != nil {
			waiting, recs = append(waiting, st), append(recs, st.recording.rec)
		}
	}
	if len(waiting) == 0 {
		return nil
	}
	done, err := s.store.RecordAttempts(ctx, recs...)
	if err != nil {
		return err
	}
	fns := make([]func(context.Context) error, len(waiting))
	for i, st := range waiting {
		p := st.recording
		st.recording = nil
		fns[i] = func(ctx context.Context) error {
			t, heads, err := s.recorded(ctx, st, p, done[i])
			if err != nil || t == nil {
				return err
			}
			st.recorded = true
			st.next, err = s.claim(ctx, t, st, heads)
			return err
		}
	}
	return txn.Together(ctx, fns...)
}

// recorded takes the run of st on from done, what the record p found and
// wrote: when the subscription changed after the claim, the record is
// computed again from the subscription as the record's lock found it and
// written alone, under that lock. It returns what record returns.
func (s *Deliveries) recorded(ctx context.Context, st *step, p *pendingRecord, done Recorded) (*DeliveryTarget, []PendingHead, error) {
	if done.Found && !done.AsExpected {
		// The subscription changed after the claim; the first statement
		// took the row lock, so the second finds it as it was read.
		basis := done.Target
		var err error
		if p, err = s.settle(&basis, p.last, p.rec.Now); err != nil {
			return nil, nil, err
		}
		again, err := s.store.RecordAttempts(ctx, p.rec)
		if err != nil {
			return nil, nil, err
		}
		if done = again[0]; done.Found && !done.AsExpected {
			return nil, nil, errs.Internalf("apps: the webhook subscription changed under its row lock")
		}
	}
	if !done.Found {
		// A subscription deleted during the batch: its result is
		// discarded.
		return nil, nil, nil
	}
	last, sets, rec := p.last, p.sets, p.rec
	t := &done.Target
	t.RateWindow = rec.RateWindow
	if t.Lease.DeliveryID == rec.LeaseDeliveryID {
		// RecordAttempts gave the lease back, also for a discarded result.
		t.Lease = Lease{}
	}
	if !done.Written {
		return nil, nil, nil
	}
	for i, set := range sets {
		if set.Transitioned {
			tr := transition{Transition: set.Transition, subscriptionID: t.SubscriptionID, appID: t.Installation.AppID}
			if err := s.recordTransition(ctx, tr); err != nil {
				return nil, nil, err
			}
			st.transitioned(tr)
		}
		o, a := rec.Outcomes[i], last.sent[i]
		st.tally.finished(o.Status, o.LastError, a.head.EventOccurredAt, rec.Now)
		if o.Status != apps.DeliverySucceeded {
			st.failed(failure{subscriptionID: t.SubscriptionID, seq: a.head.EventSeq,
				eventType: a.eventType, reason: o.LastError, host: last.host})
		}
		if o.Status != apps.DeliveryPending {
			st.finished++
		}
	}
	t.setStanding(sets[len(sets)-1].Standing)
	final := rec.Outcomes[len(rec.Outcomes)-1]
	switch {
	case t.State != apps.SubscriptionActive:
		return nil, nil, nil
	case final.Status == apps.DeliveryPending:
		return nil, nil, s.scheduler.Schedule(ctx, t.SubscriptionID, final.NextAttemptAt)
	case len(done.Next) == 0:
		return nil, nil, nil
	}
	return t, done.Next, nil
}

// settle computes the record of last from basis, the subscription as the
// record expects to find it: webhook.Settle for each sent attempt in
// order, each from the standing the one before left.
func (s *Deliveries) settle(basis *DeliveryTarget, last *sentBatch, now time.Time) (*pendingRecord, error) {
	rec := AttemptRecord{
		SubscriptionID: basis.SubscriptionID, LeaseDeliveryID: last.target.Lease.DeliveryID,
		Unsent: last.unsent, Now: now, RateWindow: basis.RateWindow, NextHeads: s.opts.BatchMaxDeliveries,
		Expected: RecordBasis{Standing: basis.standing(), MaxPerSecond: basis.MaxPerSecond, RateWindow: basis.RateWindow},
	}
	policy := webhook.Policy{Retry: s.opts.Retry, MaxConsecutiveFailures: s.opts.MaxConsecutiveFailures}
	standing := basis.standing()
	var change *SubscriptionChange
	sets := make([]webhook.Settlement, 0, len(last.sent))
	for _, a := range last.sent {
		set, err := webhook.Settle(webhook.Attempt{
			Number: a.head.Attempt, CreatedAt: a.head.CreatedAt,
			StatusCode: a.res.StatusCode, RetryAfter: a.res.RetryAfter, TransportErr: a.err,
		}, standing, policy, now, s.rnd)
		if err != nil {
			return nil, err
		}
		standing = set.Standing
		sets = append(sets, set)
		rec.Outcomes = append(rec.Outcomes, AttemptOutcome{
			DeliveryID: a.head.ID, Attempt: a.head.Attempt,
			StoredAttempt: set.StoredAttempt, Status: set.Status, NextAttemptAt: set.NextAttemptAt,
			DeliveredAt: set.DeliveredAt, LastError: set.Outcome.LastError, ResponseCode: set.ResponseCode,
		})
		rec.RateWindow = rec.RateWindow.Ended(now, basis.MaxPerSecond)
		if set.SubscriptionChanged {
			if change == nil {
				change = &SubscriptionChange{}
			}
			if set.Delivered {
				change.DeliveredSeq, change.SigningKeyKID = a.head.EventSeq, a.kid
			}
		}
	}
	if change != nil {
		change.State, change.DisabledAt, change.ConsecutiveFailures = standing.State, standing.DisabledAt, standing.ConsecutiveFailures
		rec.Subscription = change
	}
	return &pendingRecord{last: last, sets: sets, rec: rec}, nil
}
