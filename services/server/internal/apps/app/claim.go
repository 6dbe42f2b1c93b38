package app

import (
	"context"
	"maps"
	"slices"
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
	eventsync "bothy/server/internal/sync"
)

// claim claims the next batch of t (ADR 0088): from heads, the pending
// heads in seq order its lock or its record read, the due ones consecutive
// from the head, at most batchLimit, and prepares their requests, in the
// unit of work of ctx. The events of the batch and the app's rights are
// read together in one round trip, and the claim travels with the run's
// lease wake-up or, without one, with the COMMIT (D-M2-26-80), after
// which a claim that found its heads changed ends the step with
// st.claimAgain instead of reading them again. A head that must not be
// sent (its event left the log, webhook_out.deliver does not allow it,
// it is no longer routed) ends without a request when it comes first,
// and the next heads are tried within the chain budget; after a head
// that is sent it ends the batch, and the next claim finds it first. It returns nil when nothing is to be
// sent now: an attempt of the subscription is in flight (its run or its
// lease wake-up goes on), no head is pending, or the head is not due, in
// which case a job that was due at or after the head's time leaves a job
// for that time (D-M2-26-40), because River made it available early by
// the database's clock.
func (s *Deliveries) claim(ctx context.Context, t *DeliveryTarget, st *step, heads []PendingHead) (*batch, error) {
	if t.State != apps.SubscriptionActive || t.Installation.State != apps.InstallationActive {
		// Paused, disabled or a suspended installation: the rows wait.
		return nil, nil
	}
	host := domain.TargetHost(t.URL)
	for {
		now := s.now()
		if t.Lease.InForce(now) {
			if st.c.dueBy(t.Lease.Until) {
				// A lease wake-up that finds its lease in force ran early:
				// it leaves a job for the lease's end, so the lease stays
				// covered (D-M2-26-72).
				return nil, s.scheduler.Schedule(ctx, t.SubscriptionID, t.Lease.Until)
			}
			return nil, nil
		}
		if len(heads) == 0 {
			return nil, nil
		}
		if s.exhausted(ctx, st, now) {
			return nil, s.scheduler.Schedule(ctx, t.SubscriptionID, now)
		}
		if due := heads[0].NextAttemptAt; due.After(now) {
			if !st.c.dueBy(due) {
				// A job that ran before the head's time on purpose: the
				// job of the head's failure is still ahead.
				return nil, nil
			}
			// A job for the head's time that ran early (D-M2-26-40).
			return nil, s.scheduler.Schedule(ctx, t.SubscriptionID, due)
		}
		window := t.rateWindow()
		if opensAt := window.OpensAt(t.MaxPerSecond); opensAt.After(now) {
			// The head is due and the rate limit holds it (ADR 0081): the
			// run waits for the window to open. Waiting is no failure; the
			// run's wake-up covers a worker that stops meanwhile.
			return nil, s.waitForRate(ctx, t, st, opensAt)
		}
		due := duePrefix(heads, now, s.batchLimit(t, st))
		evs, err := s.readBatch(ctx, t, due)
		if err != nil {
			return nil, err
		}
		var send []PendingHead
		for _, h := range due {
			ev, found := evs[h.Event.Seq]
			if !found && len(send) == 0 {
				st.tally.finished(apps.DeliveryDead, apps.LastErrorEventExpired, h.Event.OccurredAt, now)
				return nil, s.gap(ctx, t, st, h, now)
			}
			code := apps.LastError("")
			if found {
				if code, err = s.admissible(ctx, t, ev); err != nil {
					return nil, err
				}
			}
			if !found || (code != "" && len(send) > 0) {
				// The next claim finds this head first.
				break
			}
			if code != "" {
				finished, err := s.store.FinishUnsent(ctx, h.ID, code, now)
				if err != nil {
					return nil, err
				}
				if !finished {
					// The heads were read before the row lock waited for
					// another transaction, which finished this one.
					break
				}
				st.failed(failure{subscriptionID: t.SubscriptionID, seq: h.Event.Seq,
					eventType: string(ev.Type), reason: code, host: host})
				st.tally.finished(apps.DeliveryDead, code, h.Event.OccurredAt, now)
				st.finished++
				continue
			}
			send = append(send, h)
		}
		if len(send) > 0 {
			// Every head read is in the batch, and the read was not cut
			// short by its limit: nothing else was pending (D-M2-26-86).
			drained := len(send) == len(heads) && len(heads) < s.opts.BatchMaxDeliveries
			b, err := s.claimBatch(ctx, t, st, send, drained, evs, window, now, host)
			if err != nil || b != nil || st.pending != nil || st.claimAgain {
				return b, err
			}
		}
		// Every due head ended without a request, and the run goes on with
		// the heads after them; or the heads were read before the row lock
		// waited for another transaction, which changed them. Either way
		// the run reads them again.
		if heads, err = s.store.PendingHeads(ctx, t.SubscriptionID, s.opts.BatchMaxDeliveries); err != nil {
			return nil, err
		}
	}
}

// duePrefix returns the heads at the start of heads, at most limit, that
// are due at now: a batch never skips a head that is not due.
func duePrefix(heads []PendingHead, now time.Time, limit int) []PendingHead {
	n := 0
	for n < len(heads) && n < limit && !heads[n].NextAttemptAt.After(now) {
		n++
	}
	return heads[:n]
}

// batchLimit is the most heads the next claim of t takes (ADR 0088):
// webhook.batch_max_deliveries, or fewer when the run's last batch showed
// that its time holds fewer sends (chain.sendLimit, D-M2-26-88), within
// what is left of the chain budget, and one for a subscription with a
// rate limit, whose window counts every attempt as it ends (ADR 0081).
func (s *Deliveries) batchLimit(t *DeliveryTarget, st *step) int {
	if t.MaxPerSecond > 0 {
		return 1
	}
	limit := s.opts.BatchMaxDeliveries
	if st.c != nil && st.c.sendLimit > 0 {
		limit = min(limit, st.c.sendLimit)
	}
	return max(1, min(limit, s.opts.ChainMaxDeliveries-st.finished))
}

// readBatch reads the events of heads and the rights of t's app for
// webhook_out.deliver (authorize.Authorizer.Preload) in one round trip
// (txn.Together, ADR 0085), or takes them from what readAhead read in the
// unit of work. It returns the events by seq; a head whose event is not in
// the log has none.
func (s *Deliveries) readBatch(ctx context.Context, t *DeliveryTarget, heads []PendingHead) (map[int64]eventsync.Event, error) {
	keys := make([]eventsync.EventKey, len(heads))
	for i, h := range heads {
		keys[i] = h.Event
	}
	ahead, _ := eventsAheadKey.Get(ctx)
	if evs, ok := ahead.take(keys); ok {
		return evs, s.az.Preload(authorize.Filter(ctx), authorize.WebhookOutDeliver, appPrincipal(t))
	}
	return s.readEvents(ctx, keys, appPrincipal(t))
}

// readEvents reads the events of keys, by seq, and loads the rights of
// principals for webhook_out.deliver into the unit of work of ctx, one
// statement each in one round trip.
func (s *Deliveries) readEvents(ctx context.Context, keys []eventsync.EventKey, principals ...actor.Principal) (map[int64]eventsync.Event, error) {
	var evs map[int64]eventsync.Event
	err := txn.Together(ctx,
		func(ctx context.Context) error {
			var err error
			evs, err = s.events.EventsByKey(ctx, keys)
			return err
		},
		func(ctx context.Context) error {
			return s.az.Preload(authorize.Filter(ctx), authorize.WebhookOutDeliver, principals...)
		})
	return evs, err
}

// lockFirst locks subs, in the order of their ids, with up to
// webhook.batch_max_deliveries of their pending heads
// (DeliveryStore.LockDeliveryTargets) for the first steps of the runs of
// first (among subs), and returns the locked subscriptions of first. When
// a round of this process left firstReads for first, their events and the
// rights of their apps travel in the round trip of the lock (txn.Together,
// ADR 0104), read after it in that order, as a claim reads them: into the
// unit of work's eventsAhead, which readBatch and readAhead take from, and
// the authorizer's memo.
func (s *Deliveries) lockFirst(ctx context.Context, subs, first []ids.ID) ([]LockedTarget, error) {
	keys, principals := s.firstReads.take(first)
	var all []LockedTarget
	lock := func(ctx context.Context) (err error) {
		all, err = s.store.LockDeliveryTargets(ctx, subs, s.opts.BatchMaxDeliveries)
		return err
	}
	if len(keys) == 0 {
		if err := lock(ctx); err != nil {
			return nil, err
		}
	} else {
		var evs map[int64]eventsync.Event
		err := txn.Together(ctx, lock, func(ctx context.Context) (err error) {
			evs, err = s.readEvents(ctx, keys, principals...)
			return err
		})
		if err != nil {
			return nil, err
		}
		aheadOf(ctx).add(keys, evs)
	}
	locked := make([]LockedTarget, 0, len(first))
	for _, l := range all {
		if slices.Contains(first, l.Target.SubscriptionID) {
			locked = append(locked, l)
		}
	}
	return locked, nil
}

// readAhead reads, in one round trip, the events of the due heads that
// the claims of the locked runs will read and the rights of their apps,
// each kind with one statement for all runs (D-M2-26-76): the events into
// the unit of work's memo (eventsAhead), which readBatch takes them from,
// the rights into the authorizer's (authorize.Authorizer.Preload). A run
// whose claim will send nothing now (not active, an attempt in flight, no
// head due) reads nothing; a claim that ends up taking fewer heads than
// read ahead, or none, leaves only a read unused. A run reads as many
// heads as its chain's first claim takes (batchLimit).
func (s *Deliveries) readAhead(ctx context.Context, locked map[ids.ID]LockedTarget, chains map[ids.ID]*chain) error {
	now := s.now()
	// What the lock's round trip read (lockFirst) is not read again.
	ahead := aheadOf(ctx)
	var keys []eventsync.EventKey
	asked := map[int64]bool{}
	var principals []actor.Principal
	for _, l := range locked {
		t := l.Target
		if !t.mayClaim(l.Heads, now) {
			continue
		}
		// A run's first step has finished nothing yet.
		for _, h := range duePrefix(l.Heads, now, s.batchLimit(&t, &step{c: chains[t.SubscriptionID]})) {
			// The runs of a fan-out share their events: each is read once.
			if _, read := ahead.read[h.Event.Seq]; !read && !asked[h.Event.Seq] {
				asked[h.Event.Seq] = true
				keys = append(keys, h.Event)
			}
		}
		principals = append(principals, appPrincipal(&t))
	}
	if len(keys) == 0 {
		// The rights of an app the lock's round trip read are in the
		// authorizer's memo already; those of another are read now.
		return s.az.Preload(authorize.Filter(ctx), authorize.WebhookOutDeliver, principals...)
	}
	evs, err := s.readEvents(ctx, keys, principals...)
	if err != nil {
		return err
	}
	ahead.add(keys, evs)
	return nil
}

// mayClaim reports whether a claim of t with its pending heads may send
// at now: t and its installation active, no attempt in flight, the first
// head due (the rate limit aside).
func (t *DeliveryTarget) mayClaim(heads []PendingHead, now time.Time) bool {
	return t.State == apps.SubscriptionActive && t.Installation.State == apps.InstallationActive &&
		!t.Lease.InForce(now) && len(heads) > 0 && !heads[0].NextAttemptAt.After(now)
}

// eventsAhead are the events readAhead read in a unit of work: the key of
// every event it asked for (seq to occurred_at), and the events found.
type eventsAhead struct {
	read   map[int64]time.Time
	events map[int64]eventsync.Event
}

var eventsAheadKey = txn.NewKey[*eventsAhead]("apps.events_ahead")

// aheadOf returns the events read ahead in the unit of work of ctx,
// starting them empty on first use.
func aheadOf(ctx context.Context) *eventsAhead {
	ahead, _ := eventsAheadKey.GetOrSet(ctx, &eventsAhead{read: map[int64]time.Time{}, events: map[int64]eventsync.Event{}})
	return ahead
}

// add notes keys as read in the unit of work and evs as the events found
// of them.
func (a *eventsAhead) add(keys []eventsync.EventKey, evs map[int64]eventsync.Event) {
	for _, k := range keys {
		a.read[k.Seq] = k.OccurredAt
	}
	maps.Copy(a.events, evs)
}

// take returns the events of keys when every key was read ahead, and
// false otherwise (nothing was read ahead, or a key was not among them).
// The log's rows never change, so a read made earlier in the unit of work
// is what a read now would find.
func (a *eventsAhead) take(keys []eventsync.EventKey) (map[int64]eventsync.Event, bool) {
	if a == nil {
		return nil, false
	}
	out := make(map[int64]eventsync.Event, len(keys))
	for _, k := range keys {
		if at, read := a.read[k.Seq]; !read || !at.Equal(k.OccurredAt) {
			return nil, false
		}
		if ev, found := a.events[k.Seq]; found {
			out[k.Seq] = ev
		}
	}
	return out, true
}

// claimBatch signs the requests of heads, due and allowed, and claims
// them as one batch with one lease; drained tells that no other head of
// the subscription was pending (batch.drained). The claim and the lease wake-up, when
// the claim needs one, do not depend on one another: their statements
// travel in one round trip (ADR 0085). A claim without a wake-up is the
// last statement of its unit of work and travels with the COMMIT
// (txn.Last, D-M2-26-80); the signing before it reads what it reads
// before that commit. The wake-up (ADR 0067) sends an attempt
// again once its lease has run out when its send or record ends with an
// error, a cancellation or a crash. A wake-up is due at the latest end of
// any lease of the run that inserts it and stays after the run; every
// later claim whose lease ends by then, of this run or of a later one,
// inserts nothing (ADR 0087). In a unit of work of several runs
// (st.together) the claim and its wake-up wait in st.pending for the
// claims of the others, and claimPending makes them all with one statement
// (D-M2-26-77).
func (s *Deliveries) claimBatch(ctx context.Context, t *DeliveryTarget, st *step, heads []PendingHead, drained bool,
	evs map[int64]eventsync.Event, window webhook.RateWindow, now time.Time, host string) (*batch, error) {
	lease := now.Add(s.leaseLength())
	wakeUp := s.wakeUpFor(ctx, t, st, lease)
	p := &pendingClaim{target: t, host: host, drained: drained, signed: make(map[int64]*attempt, len(heads)),
		req: HeadClaimRequest{SubscriptionID: t.SubscriptionID, Now: now, LeaseUntil: lease, RateWindow: window, WakeUpAt: wakeUp}}
	for _, h := range heads {
		// Signed before the claim, so whatever signing reads (the sync
		// epoch, the keys) is read before a claim that commits (D-M2-26-80).
		a, err := s.sign(ctx, t, evs[h.Event.Seq], now)
		if err != nil {
			return nil, err
		}
		p.signed[h.Event.Seq] = a
		p.req.Heads = append(p.req.Heads, h.ID)
	}
	if st.together {
		st.pending = p
		return nil, nil
	}
	claim := func(ctx context.Context) error {
		claimed, err := s.store.ClaimHeads(ctx, p.req)
		if err != nil {
			return err
		}
		p.claimed = claimed[0]
		return nil
	}
	if !wakeUp.IsZero() {
		// The wake-up's insert is River's, which may send a statement of
		// its own after it: the COMMIT waits for the unit of work's end.
		err := txn.Together(ctx, claim, func(ctx context.Context) error { return s.scheduleWakeUp(ctx, t, st, wakeUp) })
		if err != nil {
			return nil, err
		}
		return p.batch(), nil
	}
	// The claim is the unit of work's last statement: it travels with the
	// COMMIT (D-M2-26-80), so the batch goes out one round trip sooner.
	if err := txn.Last(ctx, claim); err != nil {
		return nil, err
	}
	b := p.batch()
	// A claim that found its heads changed may have committed: the run
	// takes its next step in a unit of work of its own.
	st.claimAgain = b == nil
	return b, nil
}

// pendingClaim is the claim of a batch a run decided on (claimBatch): the
// target it claims for, the request, the signed requests of its heads by
// event seq, the target's host, whether its heads were all that was
// pending (batch.drained), and the heads the claim got.
type pendingClaim struct {
	target  *DeliveryTarget
	req     HeadClaimRequest
	signed  map[int64]*attempt
	host    string
	drained bool
	claimed []ClaimedHead
}

// batch makes the batch the run sends of the heads claimed for p, and
// returns nil when none was claimed: the heads were read before the row
// lock waited for another transaction, which changed them.
func (p *pendingClaim) batch() *batch {
	if len(p.claimed) == 0 {
		return nil
	}
	// The claim wrote the window, which counts an attempt whose lease ran
	// out unrecorded; that lease is over, and the batch's begins.
	t := p.target
	t.Lease, t.RateWindow = Lease{DeliveryID: p.claimed[0].ID, Until: p.req.LeaseUntil}, p.req.RateWindow
	b := &batch{target: *t, host: p.host, drained: p.drained}
	for _, head := range p.claimed {
		a := p.signed[head.EventSeq]
		a.head = head
		b.attempts = append(b.attempts, a)
	}
	return b
}

// claimPending makes the claims the steps sts left pending (claimBatch)
// with one statement (D-M2-26-77), which travels with their lease
// wake-ups, and signs each run's batch, the runs concurrently in functions
// of txn.Together. A run whose heads the claim found changed (read before
// its row lock waited) reads them again and claims alone, as its claim
// loop would have.
func (s *Deliveries) claimPending(ctx context.Context, sts []*step) error {
	var pending []*pendingClaim
	var stepsOf []*step
	for _, st := range sts {
		st.together = false
		if st.pending != nil {
			pending, stepsOf = append(pending, st.pending), append(stepsOf, st)
			st.pending = nil
		}
	}
	if len(pending) == 0 {
		return nil
	}
	reqs := make([]HeadClaimRequest, len(pending))
	var claimed [][]ClaimedHead
	fns := []func(context.Context) error{func(ctx context.Context) error {
		var err error
		claimed, err = s.store.ClaimHeads(ctx, reqs...)
		return err
	}}
	for i, p := range pending {
		reqs[i] = p.req
		st := stepsOf[i]
		fns = append(fns, func(ctx context.Context) error { return s.scheduleWakeUp(ctx, p.target, st, p.req.WakeUpAt) })
	}
	if err := txn.Together(ctx, fns...); err != nil {
		return err
	}
	fns = make([]func(context.Context) error, len(pending))
	for i, p := range pending {
		st := stepsOf[i]
		p.claimed = claimed[i]
		fns[i] = func(ctx context.Context) error {
			if st.next = p.batch(); st.next != nil {
				return nil
			}
			heads, err := s.store.PendingHeads(ctx, p.target.SubscriptionID, s.opts.BatchMaxDeliveries)
			if err != nil {
				return err
			}
			st.next, err = s.claim(ctx, p.target, st, heads)
			return err
		}
	}
	return txn.Together(ctx, fns...)
}

// wakeUpFor returns when the lease wake-up that a lease of t ending at
// until needs is to be due, or the zero time when one that is due no
// earlier exists (ADR 0087): one the run scheduled (st.coverUntil, ADR
// 0067), or the one the subscription names (t.WakeUpAt), which an earlier
// run scheduled and left behind. A new wake-up is due at the latest time a
// lease of the run can end (wakeUpAt), so it covers the run's later claims
// too, and those of the runs after it until then.
func (s *Deliveries) wakeUpFor(ctx context.Context, t *DeliveryTarget, st *step, until time.Time) time.Time {
	if !until.After(st.coverUntil) || !until.After(t.WakeUpAt) {
		return time.Time{}
	}
	return s.wakeUpAt(ctx, st.c, until)
}

// scheduleWakeUp schedules the lease wake-up of st due at at (wakeUpFor),
// and nothing for the zero time.
func (s *Deliveries) scheduleWakeUp(ctx context.Context, t *DeliveryTarget, st *step, at time.Time) error {
	if at.IsZero() {
		return nil
	}
	if err := s.scheduler.Schedule(ctx, t.SubscriptionID, at); err != nil {
		return err
	}
	st.coverUntil = at
	return nil
}

// waitForRate leaves st waiting until opensAt, when the rate window of its
// subscription opens (ADR 0081). The run waits outside any transaction and
// holds no lease meanwhile, so another job may claim first; the one that
// locks the subscription after the window opened claims. The run's lease
// wake-up is scheduled as for a claim, so a worker that stops while it
// waits leaves a job behind.
func (s *Deliveries) waitForRate(ctx context.Context, t *DeliveryTarget, st *step, opensAt time.Time) error {
	st.rateWait = opensAt
	return s.scheduleWakeUp(ctx, t, st, s.wakeUpFor(ctx, t, st, opensAt.Add(s.leaseLength())))
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
	d, err := s.az.Authorize(authorize.Filter(ctx), appPrincipal(t), authorize.WebhookOutDeliver, eventResource(ev))
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

// appPrincipal is the app of t's installation as webhook_out.deliver
// judges it: its current installation and scopes.
func appPrincipal(t *DeliveryTarget) actor.Principal {
	inst := t.Installation
	return actor.Principal{
		ID:                 inst.PrincipalID,
		Kind:               actor.KindApp,
		InstallationID:     inst.ID,
		InstallationActive: inst.State == apps.InstallationActive,
		GrantedScopes:      inst.GrantedScopes,
	}
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
