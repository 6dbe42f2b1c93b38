package app

import (
	"context"
	"time"

	"bothy/server/internal/kernel/ids"
)

// attempt is a claimed and signed delivery, kept in memory only between
// its claim and its record: the body and the signatures are never stored
// or logged.
type attempt struct {
	head      ClaimedHead
	eventType string
	// kid is the active key that signed (signing_key_kid on success).
	kid string
	req SignedRequest
}

// batch is what one claim leased (ADR 0088): consecutive heads of one
// subscription, claimed and signed, sent one after the other under one
// lease, which names the first.
type batch struct {
	attempts []*attempt
	// target is the subscription as the claim left it, which the batch's
	// record expects to find (D-M2-26-68).
	target DeliveryTarget
	// host is the target's host, for the log line of a failure.
	host string
	// drained is set when the claim found no pending head of the
	// subscription beyond the batch's: the batch's record then expects to
	// end the run and travels with its COMMIT (D-M2-26-86).
	drained bool
}

// sent is an attempt with what the receiver answered.
type sent struct {
	*attempt
	res SendResult
	err error
}

// sentBatch is a batch after its sends: the attempts that were sent, in
// order, with their answers, and the heads it claimed and did not send,
// which get their attempt back in the record.
type sentBatch struct {
	*batch
	sent   []sent
	unsent []ClaimedHead
	// alone is set when the batch is recorded in a unit of work of its
	// own that may need a statement after the record: after a record
	// with its COMMIT found the subscription changed and wrote nothing
	// (recordLast), and after the claim that followed the record failed
	// (recordAlone). Such a record never travels with the COMMIT.
	alone bool
}

// chain is one run of the job and its budget (D-M2-26-3): after a finished
// delivery the run goes on with the subscription's next due head until
// webhook.chain_max_deliveries deliveries are finished or
// webhook.chain_max_duration has passed, instead of paying a queue round
// trip per delivery. What a unit of work of the run changes lives in its
// step until the unit of work committed.
type chain struct {
	// sub is the subscription the run serves.
	sub   ids.ID
	start time.Time
	// ownJob is set for a run of a job of its own subscription alone
	// (Deliver), whose first record ends the job's row when the job was
	// started in process (D-M2-26-87).
	ownJob bool
	// finished counts the deliveries the committed steps finished.
	finished int
	// coverUntil is when the lease wake-up a committed step of the run
	// scheduled is due (ADR 0067): every lease that ends by then is covered
	// by it. Zero before.
	coverUntil time.Time
	// stop is set when the job's context ended after an answer arrived:
	// the answer is still recorded, and the next head is left to a new job.
	stop bool
	// scheduledAt is when the job of the run was due; zero when unknown.
	scheduledAt time.Time
	// sendLimit is the most heads the run's next claim takes: what its
	// last batch sent without a failure showed the batch's time
	// (webhook.batch_max_duration) holds at the pace of the receiver's
	// answers (learnSendLimit, D-M2-26-88). A run starts with the limit
	// the run of its subscription before it learned in this worker
	// (sendPaces, D-M2-26-89); zero when there is none:
	// webhook.batch_max_deliveries.
	sendLimit int
}

// step is what one unit of work of a run does: the record of the previous
// attempt and the claim of the next. The unit of work may run its function
// again after a deadlock, so every run of the function starts with a fresh
// step from the chain as the last commit left it (begin), and only a
// committed step changes the chain (commit): a rolled back run leaves no
// count, no wake-up, no log line and no metric behind.
type step struct {
	c *chain
	// finished is the chain's count of finished deliveries including the
	// ones this step finished; coverUntil is when the latest lease wake-up
	// of the run, scheduled by an earlier step or this one, is due.
	finished   int
	coverUntil time.Time
	// recorded is set once the step recorded the previous batch.
	recorded bool
	// next is the batch the step claimed; nil when nothing is to be sent.
	next *batch
	// claimAgain is set when the step's claim found its heads changed
	// after it may have committed with them (txn.Last, D-M2-26-80): the
	// run takes its next step afresh instead of ending.
	claimAgain bool
	// recordAgain is set when the step's record went with its COMMIT and
	// found the subscription changed, so it wrote nothing (recordLast):
	// the run records the batch again in a step of its own.
	recordAgain bool
	// rateWait is set when the head was due and the rate limit held it:
	// when the subscription's rate window opens (ADR 0081).
	rateWait time.Time
	// together is set while the step runs in a unit of work of several
	// runs, whose records wait in recording until recordPending writes
	// them with one statement (D-M2-26-78), and whose claims wait in
	// pending until claimPending makes them with one (D-M2-26-77).
	together  bool
	recording *pendingRecord
	pending   *pendingClaim
	// failures and changes are logged, and tally recorded, after the
	// commit.
	failures []failure
	changes  []transition
	tally    deliveryTally
}

// dueBy reports whether the run's job was due at or after at. Such a job
// that finds at still ahead ran early, because River makes a scheduled job
// available by the database's clock, which may run ahead of the worker's;
// it leaves a job for at instead of ending (D-M2-26-40 for a head's time,
// D-M2-26-72 for a lease's end). A job due earlier (a round's, a chain's,
// an owner's) ran before at on purpose, and one whose time is unknown is
// taken as such.
func (c *chain) dueBy(at time.Time) bool {
	return !c.scheduledAt.IsZero() && !c.scheduledAt.Before(at)
}

// begin returns a fresh step of c.
func (c *chain) begin() *step {
	return &step{c: c, finished: c.finished, coverUntil: c.coverUntil}
}

// commit takes over what the committed step st counted.
func (c *chain) commit(st *step) {
	c.finished, c.coverUntil = st.finished, st.coverUntil
}

// failed notes a delivery that did not succeed, for the log line after the
// commit.
func (st *step) failed(f failure) { st.failures = append(st.failures, f) }

// transitioned notes a system transition, for the log line and the metric
// after the commit.
func (st *step) transitioned(tr transition) { st.changes = append(st.changes, tr) }

// wakeUpAt returns when the lease wake-up of a run must run: the latest
// time a lease of the run can end (ADR 0067). A claim after the first one
// happens only while less than webhook.chain_max_duration has passed since
// the run started and at least one lease (leaseLength) is left before the
// job's deadline (exhausted), so its lease ends by start +
// webhook.chain_max_duration + leaseLength and by the deadline. The first claim is never refused, so its own lease is the
// lower bound.
func (s *Deliveries) wakeUpAt(ctx context.Context, c *chain, firstLease time.Time) time.Time {
	at := c.start.Add(s.opts.ChainMaxDuration + s.leaseLength())
	if deadline, ok := ctx.Deadline(); ok && deadline.Before(at) {
		at = deadline
	}
	if at.Before(firstLease) {
		return firstLease
	}
	return at
}

// exhausted reports whether the run of st must leave the next head to a
// new job: the run is stopping, the budget is spent, or the job's own
// deadline leaves less than one lease (leaseLength), so a send and its
// record never run into the job timeout. Otherwise the first claim of a run
// is never refused.
func (s *Deliveries) exhausted(ctx context.Context, st *step, now time.Time) bool {
	if st.c.stop {
		return true
	}
	if st.finished == 0 {
		return false
	}
	if st.finished >= s.opts.ChainMaxDeliveries || now.Sub(st.c.start) >= s.opts.ChainMaxDuration {
		return true
	}
	deadline, ok := ctx.Deadline()
	return ok && deadline.Sub(s.clock.Now()) < s.leaseLength()
}

// leaseLength is how long a claim leases its batch (ADR 0088): the time in
// which a batch starts its sends after the first
// (webhook.batch_max_duration, when batches hold more than one head), one
// attempt (webhook.delivery_timeout) and the time to record the answers
// (webhook.lease_record_allowance). Every send of a batch ends the
// allowance before the lease ends (D-M2-26-58), and one after the first
// starts only while a whole attempt fits before that (sendBatch).
func (s *Deliveries) leaseLength() time.Duration {
	d := s.opts.DeliveryTimeout + s.opts.LeaseRecordAllowance
	if s.opts.BatchMaxDeliveries > 1 {
		d += s.opts.BatchMaxDuration
	}
	return d
}
