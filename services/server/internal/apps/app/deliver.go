package app

import (
	"context"
	"errors"
	"time"

	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/ids"
)

// Deliver runs the job apps.webhook_deliver for subscriptionID (ADR 0051,
// D-M2-26-3): when no attempt of the subscription is in flight it claims
// a batch of its due heads (ADR 0088), checks each event,
// webhook_out.deliver with the app's current rights and the routing,
// signs, takes the subscription's lease of the batch, commits, sends the
// batch outside any transaction one request after the other (sendBatch),
// and records the outcomes; then it goes on with the next batch within
// the chain budget. The record of one batch and the claim of the next
// share one transaction; when the claim fails, the record is written
// alone before the error is returned, so an answer that arrived is never
// lost to a failure of the next head (D-M2-26-39). The record of a batch
// whose claim found nothing else pending travels with its COMMIT, and a
// head that became pending meanwhile is claimed in a fresh step
// (D-M2-26-86). The run's first claim schedules its one lease wake-up, at
// the latest time any lease of the run can end (ADR 0067), unless the
// wake-up an earlier run left covers the lease (ADR 0087).
//
// Every trigger (a round, the chain, a retry, the lease wake-up, a resume,
// a redelivery) runs the same job; the subscription's lease keeps every
// other job from claiming while an attempt is in flight, whatever made a
// head due meanwhile, so at most one attempt per subscription is in flight
// and deliveries go out strictly in seq order (D-M2-26-37). A job that
// finds the head not due yet leaves a job for the head's time (D-M2-26-40),
// and one due at or after the end of a lease it finds in force leaves a
// job for the lease's end (D-M2-26-72).
//
// A job that finds nothing due ends without error. Errors of its own
// (database, a cancelled context, a failing key or master key) are
// returned so River retries the job; a retry that finds the lease in force
// ends, and the lease wake-up sends the head again with the same
// webhook-id (at least once). An attempt whose record step fails after the
// receiver answered is therefore sent twice. When the job's context ends
// (worker shutdown, job timeout) during a send, an answer that arrived is
// still recorded and the next head is scheduled as a new job; a send the
// cancellation cut off is not the receiver's failure and is left to the
// lease wake-up.
func (s *Deliveries) Deliver(ctx context.Context, subscriptionID ids.ID) error {
	return s.DeliverScheduled(ctx, subscriptionID, time.Time{})
}

// DeliverScheduled is Deliver for a job that was due at scheduledAt
// (River's scheduled_at; zero when unknown). It tells a job that River made
// available early by the database's clock from one that ran before the
// head's time on purpose: a job due at or after the head's time that finds
// the head not due yet leaves a job for that time (D-M2-26-40); one due
// earlier (a round, a chain, an owner's change) leaves the head to the job
// its failure scheduled, so jobs do not pile up behind a head in backoff.
func (s *Deliveries) DeliverScheduled(ctx context.Context, subscriptionID ids.ID, scheduledAt time.Time) error {
	c := s.newChain(subscriptionID, scheduledAt)
	c.ownJob = true
	st, err := s.stepAlone(ctx, subscriptionID, c, nil)
	if err != nil {
		return err
	}
	return s.run(ctx, subscriptionID, c, st, s.stepAlone)
}

// newChain returns the chain of a run of sub whose job was due at
// scheduledAt, at the pace the run of sub before it learned
// (D-M2-26-89).
func (s *Deliveries) newChain(sub ids.ID, scheduledAt time.Time) *chain {
	now := s.clock.Now()
	return &chain{sub: sub, start: now, scheduledAt: scheduledAt, sendLimit: s.paces.get(sub, now)}
}

// stepper runs the next unit of work of the run c of subscriptionID: the
// record of last, the batch the run sent, and the claim of the next (last
// nil: the claim alone). It returns the committed step.
type stepper func(ctx context.Context, subscriptionID ids.ID, c *chain, last *sentBatch) (*step, error)

// stepAlone is the stepper of a run in a unit of work of its own. When
// the claim of the next batch fails after the record of the previous one,
// it writes the record alone, so the answers that arrived stay recorded,
// and returns the error for River to retry the run. When a record that
// went with its COMMIT wrote nothing because the subscription changed
// (recordLast), it records the batch again in a step of its own.
func (s *Deliveries) stepAlone(ctx context.Context, subscriptionID ids.ID, c *chain, last *sentBatch) (*step, error) {
	var st *step
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		st = c.begin()
		return s.step(ctx, subscriptionID, st, last)
	})
	if err != nil && st != nil && st.recorded {
		return nil, errors.Join(err, s.recordAlone(ctx, subscriptionID, c, last))
	}
	if err != nil {
		return nil, err
	}
	s.committed(ctx, st)
	if st.recordAgain {
		// The record that was to end the run wrote nothing: the batch is
		// recorded in a step that reads the subscription under its lock.
		last.alone = true
		return s.stepAlone(ctx, subscriptionID, c, last)
	}
	return st, nil
}

// run goes on with the run c of subscriptionID from st, its committed
// first step: the sends of the batch each step claimed, and the next
// step, which next runs, until a step claims nothing.
func (s *Deliveries) run(ctx context.Context, subscriptionID ids.ID, c *chain, st *step, next stepper) error {
	for {
		if st.next == nil && !st.rateWait.IsZero() {
			// The rate limit holds a due head (ADR 0081): the run waits
			// for the window, at most a second, and claims again. A worker
			// that stops meanwhile leaves the head to the run's wake-up.
			if clock.Sleep(ctx, s.clock, st.rateWait.Sub(s.clock.Now())) != nil {
				return nil
			}
			var err error
			if st, err = next(ctx, subscriptionID, c, nil); err != nil {
				return err
			}
			continue
		}
		if st.next == nil && st.claimAgain {
			var err error
			if st, err = next(ctx, subscriptionID, c, nil); err != nil {
				return err
			}
			continue
		}
		if st.next == nil {
			return nil
		}
		last := s.sendBatch(ctx, c, st.next)
		if last == nil {
			// The worker stops, the job ran out of time or the lease ran
			// out before the first send: not the receiver's failure. The
			// lease wake-up sends the batch again.
			return ctx.Err()
		}
		if c.stop {
			ctx = context.WithoutCancel(ctx)
		}
		var err error
		if st, err = next(ctx, subscriptionID, c, last); err != nil {
			return err
		}
	}
}

// step is one unit of work of a run, under the subscription's row lock:
// the record of last, the batch the previous step sent (nil for the run's
// first step and after a wait for the rate), and the claim of the next
// batch when the record lets the run go on.
func (s *Deliveries) step(ctx context.Context, subscriptionID ids.ID, st *step, last *sentBatch) error {
	if last == nil {
		locked, err := s.lockFirst(ctx, []ids.ID{subscriptionID}, []ids.ID{subscriptionID})
		if err != nil || len(locked) == 0 {
			return err
		}
		return s.claimLocked(ctx, st, locked[0])
	}
	if st.c.ownJob {
		// The claim of the batch committed with its lease, whose wake-up
		// takes the subscription on after a failure or a crash of the run
		// from here: the job's row started in process goes with this
		// commit instead of in a transaction of its own (D-M2-26-87).
		if err := s.scheduler.EndStartedJob(ctx); err != nil {
			return err
		}
	}
	// The record takes the row lock in its own statement.
	t, heads, err := s.record(ctx, st, last)
	if err != nil || t == nil {
		return err
	}
	st.recorded = true
	st.next, err = s.claim(ctx, t, st, heads)
	return err
}

// claimLocked is the first step of a run after the lock l: the claim of
// its first batch.
func (s *Deliveries) claimLocked(ctx context.Context, st *step, l LockedTarget) error {
	var err error
	st.next, err = s.claim(ctx, &l.Target, st, l.Heads)
	return err
}

// lockTarget locks the app subscription id with up to heads of its
// pending deliveries (DeliveryStore.LockDeliveryTargets); false when
// there is no app subscription id.
func (s *Deliveries) lockTarget(ctx context.Context, id ids.ID, heads int) (LockedTarget, bool, error) {
	locked, err := s.store.LockDeliveryTargets(ctx, []ids.ID{id}, heads)
	if err != nil || len(locked) == 0 {
		return LockedTarget{}, false, err
	}
	return locked[0], true, nil
}

// sendBatch sends the attempts of b one after the other, outside any
// transaction (ADR 0088): each only after the one before it was accepted
// (a 2xx), and one after the first only while a whole attempt
// (webhook.delivery_timeout) fits before its deadline, so no send is cut
// short by the batch. The first failure, a job whose context ended or
// the batch's time ends the sends; the heads left are unsent and get
// their attempt back in the record. It returns nil when the first send
// got no answer because the job's own context ended, or the lease ran out
// before it.
func (s *Deliveries) sendBatch(ctx context.Context, c *chain, b *batch) *sentBatch {
	out := &sentBatch{batch: b}
	defer s.learnSendLimit(c, out, s.clock.Now())
	for i, a := range b.attempts {
		if i > 0 && (c.stop || s.attemptTime(a) < s.opts.DeliveryTimeout || !accepted(out.sent[i-1])) {
			out.unsent = headsOf(b.attempts[i:])
			break
		}
		r, ok := s.send(ctx, c, a)
		if !ok {
			if i == 0 {
				return nil
			}
			// A send the cancellation cut off is left as it is: its
			// attempt counts a request that may have left, and after the
			// record, which the run still writes, the next claim sends it
			// again with the same webhook-id.
			c.stop = true
			out.unsent = headsOf(b.attempts[i+1:])
			break
		}
		out.sent = append(out.sent, r)
	}
	return out
}

// learnSendLimit sets how many heads the next claim of the run c takes
// from the sends of out, which began at start (D-M2-26-88): as many as the
// batch's time holds at the pace of its answers, the sends it made and,
// when its time was not up, as many more as the time left holds, at most
// webhook.batch_max_deliveries. With a receiver that takes longer than
// webhook.batch_max_duration allows for a whole batch, a claim then takes
// no heads the batch has no time to send, which the claim would sign and
// the record give back for nothing. A batch that ended at a failure or a
// stop tells nothing of the pace and leaves the limit as it was. The next
// run of the subscription in this worker starts from the limit
// (sendPaces, D-M2-26-89).
func (s *Deliveries) learnSendLimit(c *chain, out *sentBatch, start time.Time) {
	n := len(out.sent)
	if n == 0 || c.stop || !accepted(out.sent[n-1]) || s.opts.BatchMaxDeliveries == 1 {
		return
	}
	now := s.clock.Now()
	sendable := n
	// A send starts only while a whole attempt fits before the lease's end
	// less the record's allowance (sendBatch): the batch's time ends then.
	ends := out.attempts[0].head.LeaseUntil.Add(-s.opts.LeaseRecordAllowance - s.opts.DeliveryTimeout)
	if left := ends.Sub(now); left > 0 {
		pace := now.Sub(start) / time.Duration(n)
		if pace <= 0 || left/pace >= time.Duration(s.opts.BatchMaxDeliveries) {
			sendable = s.opts.BatchMaxDeliveries
		} else {
			sendable += int(left / pace)
		}
	}
	c.sendLimit = min(sendable, s.opts.BatchMaxDeliveries)
	kept := c.sendLimit
	if kept == s.opts.BatchMaxDeliveries {
		kept = 0
	}
	s.paces.set(c.sub, kept, now)
}

// headsOf returns the claimed heads of attempts.
func headsOf(attempts []*attempt) []ClaimedHead {
	out := make([]ClaimedHead, len(attempts))
	for i, a := range attempts {
		out[i] = a.head
	}
	return out
}

// accepted reports whether the receiver accepted r (a 2xx), after which a
// batch goes on with its next attempt.
func accepted(r sent) bool {
	return webhook.Classify(r.res.StatusCode, r.err).Kind == webhook.OutcomeSuccess
}

// attemptTime is how long the lease of a leaves for an attempt from now:
// until the end of the lease less webhook.lease_record_allowance, measured
// after the claim committed, so the lease always outlives the attempt it
// covers (D-M2-26-38) and its record (D-M2-26-58). send caps it at
// webhook.delivery_timeout.
func (s *Deliveries) attemptTime(a *attempt) time.Duration {
	return a.head.LeaseUntil.Add(-s.opts.LeaseRecordAllowance).Sub(s.clock.Now())
}

// send sends a claimed attempt outside any transaction with the deadline
// attemptTime, at most webhook.delivery_timeout: no other job can claim
// the subscription while the request may still be on its way or its
// answer is being recorded. It returns false when the job's own context
// ended before an answer arrived or the lease ran out before the send; an
// answer that arrived while the context ended is returned with c.stop
// set, to be recorded.
func (s *Deliveries) send(ctx context.Context, c *chain, a *attempt) (sent, bool) {
	remaining := min(s.attemptTime(a), s.opts.DeliveryTimeout)
	if remaining <= 0 {
		// The commit outlasted the lease: nothing is sent, and the run's
		// lease wake-up, or any job after the lease, claims the head again.
		return sent{}, false
	}
	sendCtx, cancel := context.WithTimeout(ctx, remaining)
	defer cancel()
	start := time.Now()
	res, err := s.sender.Send(sendCtx, a.req)
	if ctx.Err() != nil {
		if err != nil {
			return sent{}, false
		}
		c.stop = true
	}
	s.metrics.sentAttempt(ctx, res, err, time.Since(start))
	return sent{attempt: a, res: res, err: err}, true
}

// recordAlone records last in a unit of work of its own, after the claim
// of the next head failed in the unit of work the record shared with it;
// this record never travels with the COMMIT (sentBatch.alone), so one
// that finds the subscription changed is computed again under its lock.
func (s *Deliveries) recordAlone(ctx context.Context, subscriptionID ids.ID, c *chain, last *sentBatch) error {
	last.alone = true
	var st *step
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		st = c.begin()
		_, _, err := s.record(ctx, st, last)
		return err
	})
	if err != nil {
		return err
	}
	s.committed(ctx, st)
	return nil
}

// committed takes over what the committed step st did: its counts go to
// the chain, its finished deliveries to the metrics, its failures and
// transitions to the log.
func (s *Deliveries) committed(ctx context.Context, st *step) {
	st.c.commit(st)
	s.metrics.flush(ctx, &st.tally)
	for _, f := range st.failures {
		s.logFailure(ctx, f)
	}
	for _, tr := range st.changes {
		s.logTransition(ctx, tr)
	}
}
