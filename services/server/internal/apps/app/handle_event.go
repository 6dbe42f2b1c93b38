package app

import (
	"context"
	"strings"
	"sync"
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
	eventsync "bothy/server/internal/sync"
)

// round is the memo of one consumer round (one transaction): the
// candidates per event type and reach, loaded once; the open count of each active
// subscription, counted once and then tracked; the state each subscription
// has in this round; and the subscriptions already woken.
type round struct {
	mu         sync.Mutex
	candidates map[candidateKey][]Candidate
	pending    map[ids.ID]int
	states     map[ids.ID]apps.SubscriptionState
	scheduled  map[ids.ID]bool
}

var roundKey = txn.NewKey[*round]("apps.webhooks.round")

// roundOf returns the memo of the round in ctx, creating it on first use.
// Outside a unit of work the memo lives for one call only, which stays
// correct (every count is read again) but slower.
func roundOf(ctx context.Context) *round {
	if r, ok := roundKey.Get(ctx); ok {
		return r
	}
	r := &round{
		candidates: map[candidateKey][]Candidate{},
		pending:    map[ids.ID]int{},
		states:     map[ids.ID]apps.SubscriptionState{},
		scheduled:  map[ids.ID]bool{},
	}
	roundKey.Set(ctx, r)
	return r
}

// HandleEvent implements sync.ConsumerHandler for the consumer webhooks
// (ADR 0051). It runs in the round's transaction once per event in seq
// order and writes only delivery rows, jobs and the audit entries of
// system transitions; it calls nothing outside the process and appends no
// durable event.
//
// For an event an app may subscribe to, the rows go only to the apps that
// can see it now (routing by rights, D-M2-26-35): authz.DeliveryRouter
// names the apps that may see the event's place (its channel or space, the
// audience of a personal event, every app for the instance), the
// candidates are the subscriptions of those apps with the event's type
// (read once per type and place in a round), and webhook_out.deliver
// decides each in filter mode with the grants loaded in one statement. A
// candidate it does not allow gets no row. A suspended installation is
// routed like an active one, because suspension holds deliveries back and
// is not a right: its rows wait for the resume. Then an active
// subscription whose open deliveries reach
// webhook.max_pending_per_subscription with this row is paused (system
// transition max_pending, audited), and every active subscription of an
// active installation that got a new row is scheduled once per round. A
// disabled subscription gets no rows (D-M2-26-1). Errors roll the round
// back.
func (s *Deliveries) HandleEvent(ctx context.Context, ev eventsync.Event) error {
	if !domain.AppSubscribable(string(ev.Type)) {
		return nil
	}
	r := roundOf(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	res := eventResource(ev)
	cands, err := s.candidatesOf(ctx, r, ev.Type, res)
	if err != nil {
		return err
	}
	var routed []Candidate
	var principals []actor.Principal
	for _, c := range cands {
		if !ev.AudiencePrincipalID.IsZero() && c.AppPrincipalID != ev.AudiencePrincipalID {
			continue
		}
		routed = append(routed, c)
		principals = append(principals, actor.Principal{ID: c.AppPrincipalID, Kind: actor.KindApp,
			InstallationID: c.InstallationID, InstallationActive: true, GrantedScopes: c.GrantedScopes})
	}
	if len(routed) == 0 {
		return nil
	}
	allowed, err := s.router.Deliverable(ctx, principals, res)
	if err != nil {
		return err
	}
	now := s.now()
	byID := make(map[ids.ID]Candidate, len(routed))
	var subs, deliveryIDs []ids.ID
	for i, c := range routed {
		if !allowed[i] {
			continue
		}
		id, err := newID(now)
		if err != nil {
			return err
		}
		byID[c.SubscriptionID] = c
		subs, deliveryIDs = append(subs, c.SubscriptionID), append(deliveryIDs, id)
	}
	if len(subs) == 0 {
		return nil
	}
	inserted, err := s.store.InsertDeliveries(ctx, ev, subs, deliveryIDs, now)
	if err != nil {
		return err
	}
	if err := s.applyQuota(ctx, r, byID, inserted, now); err != nil {
		return err
	}
	for _, id := range inserted {
		c := byID[id]
		if r.scheduled[id] || r.states[id] != apps.SubscriptionActive || c.InstallationState != apps.InstallationActive {
			continue
		}
		if err := s.scheduler.Schedule(ctx, id, now); err != nil {
			return err
		}
		r.scheduled[id] = true
	}
	return nil
}

// candidatesOf returns the candidates of type t for an event on res: the
// subscriptions of the apps authz.DeliveryRouter.Reach names, or of every
// app for an event any principal may see; read once per type and reach in
// a round.
func (s *Deliveries) candidatesOf(ctx context.Context, r *round, t eventlog.Type, res authorize.Resource) ([]Candidate, error) {
	reach, err := s.router.Reach(ctx, res)
	if err != nil {
		return nil, err
	}
	key := candidateKey{typ: t, everyone: reach.Everyone}
	if !reach.Everyone {
		var b strings.Builder
		for _, p := range reach.Principals {
			b.WriteString(p.String())
		}
		key.principals = b.String()
	}
	if cands, ok := r.candidates[key]; ok {
		return cands, nil
	}
	var cands []Candidate
	if reach.Everyone {
		cands, err = s.store.DeliveryCandidates(ctx, t)
	} else {
		cands, err = s.store.DeliveryCandidatesOf(ctx, t, reach.Principals)
	}
	if err != nil {
		return nil, err
	}
	r.candidates[key] = cands
	for _, c := range cands {
		if _, seen := r.states[c.SubscriptionID]; !seen {
			r.states[c.SubscriptionID] = c.State
		}
	}
	return cands, nil
}

// candidateKey names one read of candidates in a round: a type and the
// apps that may see the event.
type candidateKey struct {
	typ        eventlog.Type
	everyone   bool
	principals string
}

// applyQuota tracks the open count of every active subscription that got a
// new row and pauses one whose count crosses the quota
// (webhook.max_pending_per_subscription) with this row, from below to at
// or above (D-M2-26-2). The
// first time a round sees a subscription it counts its pending rows, the
// new one included, bounded one above the quota so that a backlog already
// above it is never mistaken for a crossing.
func (s *Deliveries) applyQuota(ctx context.Context, r *round, byID map[ids.ID]Candidate, inserted []ids.ID, now time.Time) error {
	quota := s.opts.MaxPendingPerSubscription
	var uncounted []ids.ID
	for _, id := range inserted {
		if _, ok := r.pending[id]; !ok && r.states[id] == apps.SubscriptionActive {
			uncounted = append(uncounted, id)
		}
	}
	if len(uncounted) > 0 {
		counts, err := s.store.CountPending(ctx, uncounted, quota+1)
		if err != nil {
			return err
		}
		for _, id := range uncounted {
			// The count includes the row just inserted; tracking goes on
			// from the count before it.
			r.pending[id] = counts[id] - 1
		}
	}
	for _, id := range inserted {
		if r.states[id] != apps.SubscriptionActive {
			continue
		}
		before := r.pending[id]
		r.pending[id] = before + 1
		if before >= quota || before+1 < quota {
			continue
		}
		if err := s.pauseForQuota(ctx, r, byID[id], now); err != nil {
			return err
		}
	}
	return nil
}

// pauseForQuota pauses c for the quota under its row lock: the round's view
// of the state may be stale, so the state is read again and an owner's
// change made meanwhile wins (NextSubscriptionState rejects max_pending on
// anything but active).
func (s *Deliveries) pauseForQuota(ctx context.Context, r *round, c Candidate, now time.Time) error {
	t, ok, err := s.store.LockDeliveryTarget(ctx, c.SubscriptionID)
	if err != nil || !ok {
		return err
	}
	tr, ok, err := s.setState(ctx, c.SubscriptionID, c.AppID, t.standing(), webhook.EventMaxPending, now)
	if err != nil {
		return err
	}
	r.states[c.SubscriptionID] = t.State
	if !ok {
		return nil
	}
	if err := s.recordTransition(ctx, tr); err != nil {
		return err
	}
	r.states[c.SubscriptionID] = tr.To
	s.logTransition(ctx, tr)
	return nil
}
