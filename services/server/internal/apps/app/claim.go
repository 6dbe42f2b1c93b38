package app

import (
	"context"
	"slices"
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/txn"
	eventsync "bothy/server/internal/sync"
)

// claim claims the next due head of t and prepares its request, in the
// unit of work of ctx. A head that must not be sent (its event left the
// log, webhook_out.deliver does not allow it, it is no longer routed) ends
// without a request and the next head is tried within the chain budget. It
// returns nil when nothing is to be sent now: an attempt of the
// subscription is in flight (its run or its lease wake-up goes on), no head
// is pending, or the head is not due, in which case a job that was due at
// or after the head's time leaves a job for that time (D-M2-26-40),
// because River made it available early by the database's clock.
func (s *Deliveries) claim(ctx context.Context, t *DeliveryTarget, st *step) (*attempt, error) {
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
		if s.exhausted(ctx, st, now) {
			return nil, s.scheduler.Schedule(ctx, t.SubscriptionID, now)
		}
		lease := now.Add(s.leaseLength())
		window := t.rateWindow()
		opensAt := window.OpensAt(t.MaxPerSecond)
		wakeUp := s.wakeUpFor(ctx, t, st, lease)
		hc, reads, err := s.claimHead(ctx, t, st, HeadClaimRequest{SubscriptionID: t.SubscriptionID, Now: now,
			LeaseUntil: lease, RateOpensAt: opensAt, RateWindow: window, WakeUpAt: wakeUp})
		if err != nil {
			return nil, err
		}
		if !hc.Claimed {
			if !hc.DueAt.IsZero() && !hc.DueAt.After(now) {
				// The head is due and the rate limit holds it (ADR 0081):
				// the run waits for the window to open. Waiting is no
				// failure; the run's wake-up covers a worker that stops
				// meanwhile.
				return nil, s.waitForRate(ctx, t, st, opensAt)
			}
			if hc.DueAt.IsZero() || !st.c.dueBy(hc.DueAt) {
				// No head, or a job that ran before the head's time on
				// purpose: the job of the head's failure is still ahead.
				return nil, nil
			}
			// A job for the head's time that ran early (D-M2-26-40).
			return nil, s.scheduler.Schedule(ctx, t.SubscriptionID, hc.DueAt)
		}
		head := hc.Head
		// The claim wrote the window, which counts an attempt whose lease
		// ran out unrecorded; that lease is over.
		t.Lease, t.RateWindow = Lease{}, window
		// The event, the app's rights and the lease wake-up, when the
		// claim needs one, do not depend on one another: their statements
		// travel in one round trip (ADR 0085). The wake-up (ADR 0067) sends
		// an attempt again once its lease has run out when its send or
		// record ends with an error, a cancellation or a crash. A wake-up is
		// due at the latest end of any lease of the run that inserts it and
		// stays after the run; every later claim whose lease ends by then,
		// of this run or of a later one, inserts nothing (ADR 0087).
		key := eventsync.EventKey{Seq: head.EventSeq, OccurredAt: head.EventOccurredAt}
		if reads.of(key) {
			// The event and the rights travelled with the claim.
			err = s.scheduleWakeUp(ctx, t, st, wakeUp)
		} else {
			err = txn.Together(ctx, append(s.readFor(t, &reads, key),
				func(ctx context.Context) error { return s.scheduleWakeUp(ctx, t, st, wakeUp) })...)
		}
		if err != nil {
			return nil, err
		}
		ev, found := reads.ev, reads.found
		if !found {
			st.tally.finished(apps.DeliveryDead, apps.LastErrorEventExpired, head.EventOccurredAt, now)
			return nil, s.gap(ctx, t, st, head, now)
		}
		code, err := s.admissible(ctx, t, ev)
		if err != nil {
			return nil, err
		}
		if code != "" {
			if err := s.store.FinishUnsent(ctx, head.ID, head.Attempt-1, code, now); err != nil {
				return nil, err
			}
			st.failed(failure{subscriptionID: t.SubscriptionID, seq: head.EventSeq,
				eventType: string(ev.Type), reason: code, host: host})
			st.tally.finished(apps.DeliveryDead, code, head.EventOccurredAt, now)
			st.finished++
			continue
		}
		a, err := s.sign(ctx, t, st.c, head, ev, now)
		if err != nil {
			return nil, err
		}
		a.host = host
		t.Lease = Lease{DeliveryID: head.ID, Until: lease}
		a.target = *t
		return a, nil
	}
}

// attemptRead is what an attempt reads besides its claim: the event of
// key, and the app's rights into the unit of work's memo.
type attemptRead struct {
	key   eventsync.EventKey
	ev    eventsync.Event
	found bool
	read  bool
}

// of reports whether r read the event of key.
func (r *attemptRead) of(key eventsync.EventKey) bool {
	return r.read && r.key.Seq == key.Seq && r.key.OccurredAt.Equal(key.OccurredAt)
}

// readFor returns the calls that read, into r, the event of key and the
// rights of t's app for webhook_out.deliver (authorize.Authorizer.Preload),
// to run in txn.Together with other statements (ADR 0085).
func (s *Deliveries) readFor(t *DeliveryTarget, r *attemptRead, key eventsync.EventKey) []func(ctx context.Context) error {
	*r = attemptRead{key: key, read: true}
	return []func(ctx context.Context) error{
		func(ctx context.Context) error {
			var err error
			r.ev, r.found, err = s.events.EventByKey(ctx, key)
			return err
		},
		func(ctx context.Context) error {
			return s.az.Preload(authorize.Filter(ctx), appPrincipal(t), authorize.WebhookOutDeliver)
		},
	}
}

// claimHead runs ClaimHead for c. When the record of the step st named
// the head the run claims next (D-M2-26-70), the reads of the attempt
// travel with the claim (txn.Together, ADR 0085), so a run that goes on
// pays one round trip for the claim, the event and the rights; they are
// used only when the claim claimed that very head. The expectation is
// used once.
func (s *Deliveries) claimHead(ctx context.Context, t *DeliveryTarget, st *step, c HeadClaimRequest) (HeadClaim, attemptRead, error) {
	next := st.nextEvent
	st.nextEvent = eventsync.EventKey{}
	var hc HeadClaim
	claim := func(ctx context.Context) error {
		var err error
		hc, err = s.store.ClaimHead(ctx, c)
		return err
	}
	var r attemptRead
	if next.Seq == 0 {
		err := claim(ctx)
		return hc, r, err
	}
	err := txn.Together(ctx, append([]func(ctx context.Context) error{claim}, s.readFor(t, &r, next)...)...)
	return hc, r, err
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
