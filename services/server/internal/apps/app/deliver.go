package app

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	eventsync "bothy/server/internal/sync"
)

// attempt is a claimed and signed delivery, kept in memory only between
// its claim and its record: the body and the signatures are never stored
// or logged.
type attempt struct {
	head      ClaimedHead
	eventType string
	host      string
	// kid is the active key that signed (signing_key_kid on success).
	kid string
	req SignedRequest
}

// sent is an attempt with what the receiver answered.
type sent struct {
	attempt
	res SendResult
	err error
}

// chain is the budget of one run of the job (issue 6 item 4): after a
// finished delivery the run goes on with the subscription's next due head
// until webhook.chain_max_deliveries deliveries are finished or
// webhook.chain_max_duration has passed, instead of paying a queue round
// trip per delivery.
type chain struct {
	start    time.Time
	finished int
	epoch    ids.ID
	hasEpoch bool
	// stop is set when the job's context ended after an answer arrived:
	// the answer is still recorded, and the next head is left to a new job.
	stop bool
	// wakeUp is set once the run's lease wake-up is scheduled (ADR 0067).
	wakeUp bool
	// scheduledAt is when the job of the run was due; zero when unknown.
	scheduledAt time.Time
	// tally collects the deliveries the current unit of work finished.
	tally deliveryTally
}

// wakeUpAt returns when the lease wake-up of a run must run: the latest
// time a lease of the run can end (ADR 0067). A claim after the first one
// happens only while less than webhook.chain_max_duration has passed since
// the run started and at least one webhook.delivery_timeout is left before
// the job's deadline (exhausted), so its lease, one
// webhook.delivery_timeout from the claim, ends by start +
// webhook.chain_max_duration + webhook.delivery_timeout and by the
// deadline. The first claim is never refused, so its own lease is the
// lower bound.
func (s *Deliveries) wakeUpAt(ctx context.Context, c *chain, firstLease time.Time) time.Time {
	at := c.start.Add(s.opts.ChainMaxDuration + s.opts.DeliveryTimeout)
	if deadline, ok := ctx.Deadline(); ok && deadline.Before(at) {
		at = deadline
	}
	if at.Before(firstLease) {
		return firstLease
	}
	return at
}

// exhausted reports whether the run must leave the next head to a new job:
// the run is stopping, the budget is spent, or the job's own deadline
// leaves less than one attempt (webhook.delivery_timeout), so a send never
// runs into the job timeout. Otherwise the first claim of a run is never
// refused.
func (s *Deliveries) exhausted(ctx context.Context, c *chain, now time.Time) bool {
	if c.stop {
		return true
	}
	if c.finished == 0 {
		return false
	}
	if c.finished >= s.opts.ChainMaxDeliveries || now.Sub(c.start) >= s.opts.ChainMaxDuration {
		return true
	}
	deadline, ok := ctx.Deadline()
	return ok && deadline.Sub(s.clock.Now()) < s.opts.DeliveryTimeout
}

// Deliver runs the job apps.webhook_deliver for subscriptionID (ADR 0051,
// D-M2-26-3): it claims the subscription's head when it is due and no
// attempt of the subscription is in flight, checks the event,
// webhook_out.deliver with the app's current rights and the routing,
// signs, takes the subscription's lease for webhook.delivery_timeout,
// commits, sends outside any transaction with the lease's end as the
// attempt's deadline, and records the outcome; then it goes on with the
// next due head within the chain budget. The record of one attempt and the
// claim of the next share one transaction; when the claim fails, the
// record is written alone before the error is returned, so an answer that
// arrived is never lost to a failure of the next head (D-M2-26-39). The
// run's first claim schedules its one lease wake-up, at the latest time any
// lease of the run can end (ADR 0067).
//
// Every trigger (a round, the chain, a retry, the lease wake-up, a resume,
// a redelivery) runs the same job; the subscription's lease keeps every
// other job from claiming while an attempt is in flight, whatever made a
// head due meanwhile, so at most one attempt per subscription is in flight
// and deliveries go out strictly in seq order (D-M2-26-37). A job that
// finds the head not due yet leaves a job for the head's time (D-M2-26-40).
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
	c := &chain{start: s.clock.Now(), scheduledAt: scheduledAt}
	var last *sent
	for {
		var (
			next     *attempt
			failures []failure
			changes  []transition
			recorded bool
		)
		finished, wakeUp := c.finished, c.wakeUp
		err := s.uow.Do(ctx, func(ctx context.Context) error {
			// The unit of work may run this again after a deadlock, and a
			// rolled back run inserted no wake-up.
			next, failures, changes, recorded, c.finished, c.wakeUp = nil, nil, nil, false, finished, wakeUp
			c.tally.reset()
			t, ok, err := s.store.LockDeliveryTarget(ctx, subscriptionID)
			if err != nil || !ok {
				// A subscription deleted during the attempt: its result is
				// discarded.
				return err
			}
			if last != nil {
				goOn, err := s.record(ctx, &t, c, last, &failures, &changes)
				if err != nil || !goOn {
					return err
				}
				recorded = true
			}
			next, err = s.claim(ctx, &t, c, &failures, &changes)
			return err
		})
		if err != nil && recorded {
			// The claim of the next head failed after the record of the
			// previous attempt: write the record alone, so the answer that
			// arrived stays recorded, then let River retry the run.
			return errors.Join(err, s.recordAlone(ctx, subscriptionID, c, last))
		}
		if err != nil {
			return err
		}
		s.metrics.flush(ctx, &c.tally)
		s.logAll(ctx, failures, changes)
		if next == nil {
			return nil
		}
		last = s.send(ctx, c, next)
		if last == nil {
			// The worker stops, the job ran out of time or the lease ran
			// out before the send: not the receiver's failure. The lease
			// wake-up sends the head again.
			return ctx.Err()
		}
		if c.stop {
			ctx = context.WithoutCancel(ctx)
		}
	}
}

// send sends a claimed attempt outside any transaction. Its deadline is the
// end of its lease, measured after the claim committed, so the lease
// always outlives the attempt it covers (D-M2-26-38): no other job can
// claim the subscription while the request may still be on its way. It
// returns nil when the job's own context ended before an answer arrived;
// an answer that arrived while the context ended is returned with c.stop
// set, to be recorded.
func (s *Deliveries) send(ctx context.Context, c *chain, a *attempt) *sent {
	remaining := a.head.LeaseUntil.Sub(s.clock.Now())
	if remaining <= 0 {
		// The commit outlasted the lease: nothing is sent, and the run's
		// lease wake-up, or any job after the lease, claims the head again.
		return nil
	}
	sendCtx, cancel := context.WithTimeout(ctx, remaining)
	defer cancel()
	start := time.Now()
	res, err := s.sender.Send(sendCtx, a.req)
	if ctx.Err() != nil {
		if err != nil {
			return nil
		}
		c.stop = true
	}
	s.metrics.sentAttempt(ctx, res, err, time.Since(start))
	return &sent{attempt: *a, res: res, err: err}
}

// recordAlone records last in a unit of work of its own, after the claim
// of the next head failed in the unit of work the record shared with it.
func (s *Deliveries) recordAlone(ctx context.Context, subscriptionID ids.ID, c *chain, last *sent) error {
	var failures []failure
	var changes []transition
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		failures, changes = nil, nil
		c.tally.reset()
		t, ok, err := s.store.LockDeliveryTarget(ctx, subscriptionID)
		if err != nil || !ok {
			return err
		}
		_, err = s.record(ctx, &t, c, last, &failures, &changes)
		return err
	})
	if err != nil {
		return err
	}
	s.metrics.flush(ctx, &c.tally)
	s.logAll(ctx, failures, changes)
	return nil
}

// logAll logs the failures and transitions of a committed unit of work.
func (s *Deliveries) logAll(ctx context.Context, failures []failure, changes []transition) {
	for _, f := range failures {
		s.logFailure(ctx, f)
	}
	for _, tr := range changes {
		s.logTransition(ctx, tr)
	}
}

// claim claims the next due head of t and prepares its request, in the
// unit of work of ctx. A head that must not be sent (its event left the
// log, webhook_out.deliver does not allow it, it is no longer routed) ends
// without a request and the next head is tried within the chain budget. It
// returns nil when nothing is to be sent now: an attempt of the
// subscription is in flight (its run or its lease wake-up goes on), no head
// is pending, or the head is not due, in which case a job that was due at
// or after the head's time leaves a job for that time (D-M2-26-40),
// because River made it available early by the database's clock.
func (s *Deliveries) claim(ctx context.Context, t *DeliveryTarget, c *chain, failures *[]failure, changes *[]transition) (*attempt, error) {
	if t.State != apps.SubscriptionActive || t.Installation.State != apps.InstallationActive {
		// Paused, disabled or a suspended installation: the rows wait.
		return nil, nil
	}
	host := hostOf(t.URL)
	for {
		now := s.now()
		if t.Lease.InForce(now) {
			return nil, nil
		}
		if s.exhausted(ctx, c, now) {
			return nil, s.scheduler.Schedule(ctx, t.SubscriptionID, now)
		}
		lease := now.Add(s.opts.DeliveryTimeout)
		hc, err := s.store.ClaimHead(ctx, t.SubscriptionID, now, lease)
		if err != nil {
			return nil, err
		}
		if !hc.Claimed {
			if hc.DueAt.IsZero() || (!c.scheduledAt.IsZero() && c.scheduledAt.Before(hc.DueAt)) {
				// No head, or a job that ran before the head's time on
				// purpose: the job of the head's failure is still ahead.
				return nil, nil
			}
			return nil, s.scheduler.Schedule(ctx, t.SubscriptionID, hc.DueAt)
		}
		head := hc.Head
		ev, found, err := s.events.EventByKey(ctx, eventsync.EventKey{Seq: head.EventSeq, OccurredAt: head.EventOccurredAt})
		if err != nil {
			return nil, err
		}
		if !found {
			c.tally.finished(apps.DeliveryDead, apps.LastErrorEventExpired, head.EventOccurredAt, now)
			return nil, s.gap(ctx, t, head, now, failures, changes)
		}
		code, err := s.admissible(ctx, t, ev)
		if err != nil {
			return nil, err
		}
		if code != "" {
			if err := s.store.FinishUnsent(ctx, head.ID, head.Attempt-1, code, now); err != nil {
				return nil, err
			}
			*failures = append(*failures, failure{subscriptionID: t.SubscriptionID, seq: head.EventSeq,
				eventType: string(ev.Type), reason: code, host: host})
			c.tally.finished(apps.DeliveryDead, code, head.EventOccurredAt, now)
			c.finished++
			continue
		}
		a, err := s.sign(ctx, t, c, head, ev, now)
		if err != nil {
			return nil, err
		}
		a.host = host
		// The lease wake-up (ADR 0067): an attempt whose send or record
		// ends with an error, a cancellation or a crash is sent again once
		// its lease has run out. One wake-up per run, scheduled at its
		// first claim for the latest end of any lease of the run, serves
		// every claim of the run; later claims insert nothing.
		if !c.wakeUp {
			if err := s.scheduler.Schedule(ctx, t.SubscriptionID, s.wakeUpAt(ctx, c, lease)); err != nil {
				return nil, err
			}
			c.wakeUp = true
		}
		t.Lease = Lease{DeliveryID: head.ID, Until: lease}
		return a, nil
	}
}

// admissible returns "" when the event may go to t now, or the last_error
// of a head that ends without a request: not_authorized when
// webhook_out.deliver does not allow it with the app's current
// installation, scopes and grants (AZ-M49), else not_subscribed when its
// type left the subscription's event_types or the installation's
// event_subscriptions (docs/spec/11-extensions.md 4.2). The rights come
// first because setAppScopes narrows the event subscriptions together with
// a removed scope (M2-24): the head then ends as not_authorized, the code
// that names the cause. The check runs in filter mode, so a denial writes
// no audit entry and counts no decision (AZ-P13); an error that is not a
// decision is returned.
func (s *Deliveries) admissible(ctx context.Context, t *DeliveryTarget, ev eventsync.Event) (apps.LastError, error) {
	inst := t.Installation
	app := actor.Principal{
		ID:                 inst.PrincipalID,
		Kind:               actor.KindApp,
		InstallationID:     inst.ID,
		InstallationActive: inst.State == apps.InstallationActive,
		GrantedScopes:      inst.GrantedScopes,
	}
	d, err := s.az.Authorize(authorize.Filter(ctx), app, authorize.WebhookOutDeliver, eventResource(ev))
	if err != nil {
		return "", err
	}
	if !d.Allowed() {
		return apps.LastErrorNotAuthorized, nil
	}
	typ := string(ev.Type)
	if !slices.Contains(t.EventTypes, typ) || !slices.Contains(t.Installation.EventSubscriptions, typ) {
		return apps.LastErrorNotSubscribed, nil
	}
	return "", nil
}

// gap handles a head whose event left the log (Design note 5 e,
// D-M2-26-5): the subscription is disabled with cause gap, the head and
// every pending row below the lowest retained seq become dead with
// event_expired, and the audit entry names the first and last lost seq. A
// re-enable then goes on with the first retained pending row.
func (s *Deliveries) gap(ctx context.Context, t *DeliveryTarget, head ClaimedHead, now time.Time, failures *[]failure, changes *[]transition) error {
	minRetained, err := s.events.MinRetainedSeq(ctx)
	if err != nil {
		return err
	}
	if err := s.store.FinishUnsent(ctx, head.ID, head.Attempt-1, apps.LastErrorEventExpired, now); err != nil {
		return err
	}
	exp, err := s.store.ExpirePending(ctx, t.SubscriptionID, minRetained, now)
	if err != nil {
		return err
	}
	*failures = append(*failures, failure{subscriptionID: t.SubscriptionID, seq: head.EventSeq,
		reason: apps.LastErrorEventExpired, host: hostOf(t.URL)})
	tr, ok, err := applyTransition(t.SubscriptionID, t.Installation.AppID, t.State, domain.EventGap)
	if err != nil || !ok {
		return err
	}
	tr.fromSeq, tr.toSeq = head.EventSeq, max(head.EventSeq, exp.LastSeq)
	if err := s.store.SetSubscriptionState(ctx, t.SubscriptionID, tr.to, disabledAt(tr.to, now), now); err != nil {
		return err
	}
	if err := s.recordTransition(ctx, tr); err != nil {
		return err
	}
	t.State = tr.to
	*changes = append(*changes, tr)
	return nil
}

// sign builds the request of a claimed head (Design notes 4 e and 11): the
// envelope of the event with the delivery field sync_epoch, the timestamp
// of this attempt, v1a signatures of every webhook_out signer (active key
// first) and, with HMAC, v1 signatures of the current generation and, inside
// webhook.secret_rotation_overlap, the previous one.
func (s *Deliveries) sign(ctx context.Context, t *DeliveryTarget, c *chain, head ClaimedHead, ev eventsync.Event, now time.Time) (*attempt, error) {
	epoch, err := s.syncEpoch(ctx, c)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(ev.Envelope(eventsync.DeliveryFields{SyncEpoch: epoch}))
	if err != nil {
		return nil, errs.Wrap(err, "apps: encoding the webhook body failed")
	}
	ts := now.Unix()
	sig, kid, err := signWebhook(ctx, s.keys, s.master, s.opts.SecretRotationOverlap, webhookSigning{
		SubscriptionID: t.SubscriptionID, HMACEnabled: t.HMACEnabled, HMACGeneration: t.HMACGeneration,
		HMACRotatedAt: t.HMACRotatedAt, WebhookID: ev.ID, Timestamp: ts, Body: body,
	}, now)
	if err != nil {
		return nil, err
	}
	return &attempt{
		head:      head,
		eventType: string(ev.Type),
		kid:       kid,
		req: SignedRequest{
			SubscriptionID: t.SubscriptionID,
			URL:            t.URL,
			WebhookID:      ev.ID,
			Timestamp:      ts,
			Signature:      sig,
			Body:           body,
		},
	}, nil
}

// syncEpoch returns instance.sync_epoch, read once per run of the job: it
// changes only when the event log restarts (restore, which runs with the
// workers stopped), never between two deliveries of one run.
func (s *Deliveries) syncEpoch(ctx context.Context, c *chain) (ids.ID, error) {
	if c.hasEpoch {
		return c.epoch, nil
	}
	rec, err := s.state.Load(ctx)
	if err != nil {
		return ids.Zero, err
	}
	c.epoch, c.hasEpoch = rec.SyncEpoch, true
	return rec.SyncEpoch, nil
}

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
func (s *Deliveries) record(ctx context.Context, t *DeliveryTarget, c *chain, last *sent, failures *[]failure, changes *[]transition) (bool, error) {
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
		*changes = append(*changes, tr)
	}
	t.State, t.DisabledAt, t.ConsecutiveFailures = change.State, change.DisabledAt, change.ConsecutiveFailures
	c.tally.finished(rec.Status, o.LastError, last.head.EventOccurredAt, now)
	if rec.Status != apps.DeliverySucceeded {
		*failures = append(*failures, failure{subscriptionID: t.SubscriptionID, seq: last.head.EventSeq,
			eventType: last.eventType, reason: o.LastError, host: last.host})
	}
	switch {
	case t.State != apps.SubscriptionActive:
		return false, nil
	case rec.Status == apps.DeliveryPending:
		return false, s.scheduler.Schedule(ctx, t.SubscriptionID, rec.NextAttemptAt)
	}
	c.finished++
	return true, nil
}

// refusedBeforeSending reports whether an outcome is the egress guard's
// refusal of the target before any byte left (D-M2-26-43): such a try is a
// counted failure but not an attempt, since attempt counts requests.
func refusedBeforeSending(code apps.LastError) bool {
	return code == apps.LastErrorAddressBlocked || code == apps.LastErrorHostNotAllowed
}

// eventResource is the resource of webhook_out.deliver for ev: the event's
// resource with its place, its receive action and its audience.
func eventResource(ev eventsync.Event) authorize.Resource {
	return authorize.Resource{
		Kind:       ev.ResourceKind,
		ID:         ev.ResourceID,
		SpaceID:    ev.SpaceID,
		ChannelID:  ev.ChannelID,
		ThreadID:   ev.ThreadID,
		DeliveryOf: ev.ReceiveAction,
		Audience:   ev.AudiencePrincipalID,
	}
}
