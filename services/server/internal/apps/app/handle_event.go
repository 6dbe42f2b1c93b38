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
// has in this round; and the rows the round creates at its end, in seq
// order.
type round struct {
	mu         sync.Mutex
	candidates map[candidateKey][]Candidate
	pending    map[ids.ID]int
	states     map[ids.ID]apps.SubscriptionState
	rows       []roundRow
}

// roundRow is a row the round creates at its end, with the candidate it
// goes to.
type roundRow struct {
	cand Candidate
	row  NewDelivery
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
	}
	roundKey.Set(ctx, r)
	return r
}

// HandleEvent implements sync.ConsumerHandler for the consumer webhooks
// (ADR 0051). It runs in the round's transaction once per event in seq
// order and decides which subscriptions get a row for the event; EndRound
// writes the rows of the whole round, applies the quota and schedules the
// jobs (D-M2-26-63). Neither calls anything outside the process or
// appends a durable event.
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
// is not a right: its rows wait for the resume. A disabled subscription
// gets no rows (D-M2-26-1). Errors roll the round back.
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
	for i, c := range routed {
		if !allowed[i] {
			continue
		}
		id, err := newID(now)
		if err != nil {
			return err
		}
		r.rows = append(r.rows, roundRow{cand: c, row: NewDelivery{ID: id, SubscriptionID: c.SubscriptionID,
			Event: eventsync.EventKey{Seq: ev.Seq, OccurredAt: ev.OccurredAt}, EventID: ev.ID}})
	}
	return nil
}

// EndRound implements sync.ConsumerRoundEnder for the consumer webhooks
// (D-M2-26-63): it writes what the round's events called for, in as few
// statements as the round allows. The open count of every active
// subscription the round serves is read once; the rows of every event go
// in one insert; then, in seq order, the quota pauses a subscription
// whose open deliveries reach webhook.max_pending_per_subscription with
// a new row; last, every subscription of an active installation that got
// a row and is still active is scheduled, once, in one job insert. One
// statement each, instead of one per event or per subscription, keeps the
// round's cost close to the rows it creates.
func (s *Deliveries) EndRound(ctx context.Context) error {
	r := roundOf(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	rows := r.rows
	r.rows = nil
	if len(rows) == 0 {
		return nil
	}
	now := s.now()
	if err := s.countPending(ctx, r, rows); err != nil {
		return err
	}
	news := make([]NewDelivery, len(rows))
	for i, rr := range rows {
		news[i] = rr.row
	}
	created, err := s.store.InsertDeliveries(ctx, news, now)
	if err != nil {
		return err
	}
	for _, rr := range rows {
		if created[rr.row.ID] {
			if err := s.applyQuota(ctx, r, rr.cand, now); err != nil {
				return err
			}
		}
	}
	woken := map[ids.ID]bool{}
	var due []ids.ID
	for _, rr := range rows {
		id := rr.cand.SubscriptionID
		if !created[rr.row.ID] || woken[id] || rr.cand.InstallationState != apps.InstallationActive ||
			r.states[id] != apps.SubscriptionActive {
			continue
		}
		woken[id] = true
		due = append(due, id)
	}
	return s.scheduler.ScheduleAll(ctx, due, now)
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

// countPending reads the open count of every active subscription among
// rows that the round has not counted yet, before the round's rows are
// inserted, bounded one above the quota (webhook.max_pending_per_subscription)
// so that a backlog already above it is never mistaken for a crossing;
// applyQuota tracks it from there.
func (s *Deliveries) countPending(ctx context.Context, r *round, rows []roundRow) error {
	var uncounted []ids.ID
	seen := map[ids.ID]bool{}
	for _, rr := range rows {
		id := rr.cand.SubscriptionID
		if _, ok := r.pending[id]; !ok && !seen[id] && r.states[id] == apps.SubscriptionActive {
			seen[id] = true
			uncounted = append(uncounted, id)
		}
	}
	if len(uncounted) == 0 {
		return nil
	}
	counts, err := s.store.CountPending(ctx, uncounted, s.opts.MaxPendingPerSubscription+1)
	if err != nil {
		return err
	}
	for _, id := range uncounted {
		r.pending[id] = counts[id]
	}
	return nil
}

// applyQuota counts one new row of c and pauses c when the row brings its
// open count from below the quota (webhook.max_pending_per_subscription)
// to it (D-M2-26-2). Only an active subscription is counted and paused.
func (s *Deliveries) applyQuota(ctx context.Context, r *round, c Candidate, now time.Time) error {
	id := c.SubscriptionID
	if r.states[id] != apps.SubscriptionActive {
		return nil
	}
	quota := s.opts.MaxPendingPerSubscription
	before := r.pending[id]
	r.pending[id] = before + 1
	if before >= quota || before+1 < quota {
		return nil
	}
	return s.pauseForQuota(ctx, r, c, now)
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
