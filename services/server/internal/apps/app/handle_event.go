package app

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/authz"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
	eventsync "bothy/server/internal/sync"
)

// round is the memo of one consumer round (one transaction): the events
// it handled, routed at its end; the candidates per event type and app,
// loaded once; the open count of each active subscription, read with its
// candidates and then tracked; the highest event seq of each
// subscription's rows before the round; and the state each subscription
// has in this round.
type round struct {
	mu      sync.Mutex
	events  []eventsync.Event
	cands   map[eventlog.Type]*typeCandidates
	pending map[ids.ID]int
	last    map[ids.ID]int64
	states  map[ids.ID]apps.SubscriptionState
}

// typeCandidates are the candidates of one event type the round has read:
// those of every app when an event any principal may see needed them, and
// those of each app read for a reach.
type typeCandidates struct {
	every     []Candidate
	everyRead bool
	ofApp     map[ids.ID][]Candidate
}

// roundRow is a row the round creates at its end, with the candidate it
// goes to.
type roundRow struct {
	cand Candidate
	row  NewDelivery
}

// app returns the principal of c's app as the round decides for it: its
// installation counted active (a suspended one is routed like an active
// one, route).
func (c Candidate) app() actor.Principal {
	return actor.Principal{ID: c.AppPrincipalID, Kind: actor.KindApp,
		InstallationID: c.InstallationID, InstallationActive: true, GrantedScopes: c.GrantedScopes}
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
		cands:   map[eventlog.Type]*typeCandidates{},
		pending: map[ids.ID]int{},
		last:    map[ids.ID]int64{},
		states:  map[ids.ID]apps.SubscriptionState{},
	}
	roundKey.Set(ctx, r)
	return r
}

// HandleEvent implements sync.ConsumerHandler for the consumer webhooks
// (ADR 0051). It runs in the round's transaction once per event in seq
// order and keeps the events an app may subscribe to; EndRound routes
// them all at once, writes the rows of the whole round, applies the quota
// and schedules the jobs (D-M2-26-63). Neither calls anything outside the
// process or appends a durable event.
func (s *Deliveries) HandleEvent(ctx context.Context, ev eventsync.Event) error {
	if !domain.AppSubscribable(string(ev.Type)) {
		return nil
	}
	r := roundOf(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	return nil
}

// reach finds, for all of evs at once, the apps that can see each event
// and their candidates: authz.DeliveryRouter names, for every event in one
// statement, the apps that may see its place (its channel or space, the
// audience of a personal event, every app for the instance) with their
// grants (D-M2-26-81); the candidates are the subscriptions of those apps
// with the event's type, read once per type for every app the round
// reaches (loadCandidates). The candidates of the apps the last reach of
// each place named travel in the round trip of the reach (reachGuesses,
// ADR 0108): PostgreSQL reads them after the reach, as it would in a round
// trip of their own, and the reach alone decides. It returns each event's
// resource and reach.
func (s *Deliveries) reach(ctx context.Context, r *round, evs []eventsync.Event) ([]authorize.Resource, []authz.Reach, error) {
	res := make([]authorize.Resource, len(evs))
	for i, ev := range evs {
		res[i] = eventResource(ev)
	}
	var reaches []authz.Reach
	fns := []func(ctx context.Context) error{func(ctx context.Context) (err error) {
		reaches, err = s.router.Reach(ctx, res)
		return err
	}}
	types, expected := s.reachGuesses.expect(evs, res, r.readFor)
	// Each type's read fills its own slot: the fns run at once.
	early := make([][]Candidate, len(types))
	for i, t := range types {
		fns = append(fns, func(ctx context.Context) (err error) {
			early[i], err = s.store.DeliveryCandidatesOf(ctx, t, expected[t], s.opts.MaxPendingPerSubscription+1)
			return err
		})
	}
	if err := txn.Together(ctx, fns...); err != nil {
		return nil, nil, err
	}
	s.reachGuesses.remember(res, reaches)
	for i, t := range types {
		r.addCandidatesOf(t, expected[t], early[i])
	}
	if err := s.loadCandidates(ctx, r, evs, reaches); err != nil {
		return nil, nil, err
	}
	return res, reaches, nil
}

// route decides which subscriptions get a row for each of evs (with
// their resources res and reaches, from reach), in seq order, and returns
// the rows. The rows go only to the apps that can see the event now
// (routing by rights, D-M2-26-35): webhook_out.deliver decides each
// candidate in filter mode with the grants reach read, so with reach a
// round's routing is two statements whatever the number of its events,
// places and chunks (D-M2-26-65, D-M2-26-81; an event any principal may
// see adds one read of grants). A candidate the decision does not
// allow gets no row. A suspended installation is routed like an active
// one, because suspension holds deliveries back and is not a right: its
// rows wait for the resume. A disabled subscription gets no rows
// (D-M2-26-1).
func (s *Deliveries) route(ctx context.Context, r *round, evs []eventsync.Event, res []authorize.Resource,
	reaches []authz.Reach, now time.Time) ([]roundRow, error) {
	routed := make([][]Candidate, len(evs))
	qs := make([]authz.DeliveryQuestion, len(evs))
	for i, ev := range evs {
		qs[i].Resource = res[i]
		for _, c := range r.candidatesOf(ev.Type, reaches[i]) {
			if !ev.AudiencePrincipalID.IsZero() && c.AppPrincipalID != ev.AudiencePrincipalID {
				continue
			}
			routed[i] = append(routed[i], c)
			qs[i].Apps = append(qs[i].Apps, c.app())
		}
	}
	allowed, err := s.router.Deliverable(ctx, qs)
	if err != nil {
		return nil, err
	}
	var rows []roundRow
	for i, ev := range evs {
		for j, c := range routed[i] {
			if !allowed[i][j] {
				continue
			}
			id, err := newID(now)
			if err != nil {
				return nil, err
			}
			rows = append(rows, roundRow{cand: c, row: NewDelivery{ID: id, SubscriptionID: c.SubscriptionID,
				Event: eventsync.EventKey{Seq: ev.Seq, OccurredAt: ev.OccurredAt}, EventID: ev.ID}})
		}
	}
	return rows, nil
}

// EndRound implements sync.ConsumerRoundEnder for the consumer webhooks
// (D-M2-26-63): it routes the round's events and writes what they called
// for, in as few statements as the round allows. reach reads the apps and
// candidates of all the events at once; then the events are routed and
// their rows written in chunks of at most
// webhook.round_insert_max_deliveries candidates (an event's always
// together), so the worker's memory follows that key and not the round's
// events times their subscriptions (D-M2-26-82). Each chunk's rows go in
// one insert; then, in seq order, the quota pauses a subscription whose
// open deliveries (counted with the candidates) reach
// webhook.max_pending_per_subscription with a new row. The last chunk's
// insert travels with the round's COMMIT when it cannot pause anything
// (writeRows, D-M2-26-84). Last, every subscription of an active
// installation that got a row and is still active is scheduled, once, in
// one job insert, whose jobs start in this process right after the
// round's commit (StartGroups, ADR 0092). One statement each, instead of
// one per event or per subscription, keeps the round's cost close to the
// rows it creates.
func (s *Deliveries) EndRound(ctx context.Context) error {
	r := roundOf(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	evs := r.events
	r.events = nil
	if len(evs) == 0 {
		return nil
	}
	res, reaches, err := s.reach(ctx, r, evs)
	if err != nil {
		return err
	}
	now := s.now()
	// got lists the subscriptions of an active installation that got a
	// row, in the order of their first; whether each is still active is
	// asked at the end, after every chunk's quota.
	var got []ids.ID
	// reads are the rows each subscription of got without an open row
	// before the round was given: its heads, which the first claim of its
	// run will read (firstReads). A subscription with an open row reads its
	// heads after its lock, as its heads are older rows.
	reads := map[ids.ID]*firstRead{}
	seen := map[ids.ID]bool{}
	write := func(from, to int) error {
		rows, err := s.route(ctx, r, evs[from:to], res[from:to], reaches[from:to], now)
		if err != nil {
			return err
		}
		created, err := s.writeRows(ctx, r, rows, now, to == len(evs))
		if err != nil {
			return err
		}
		for _, rr := range rows {
			c := rr.cand
			if !created[rr.row.ID] || c.InstallationState != apps.InstallationActive {
				continue
			}
			if !seen[c.SubscriptionID] {
				seen[c.SubscriptionID] = true
				got = append(got, c.SubscriptionID)
				if c.Pending == 0 {
					reads[c.SubscriptionID] = &firstRead{app: c.app()}
				}
			}
			if fr, kept := reads[c.SubscriptionID]; kept {
				fr.keys = append(fr.keys, rr.row.Event)
			}
		}
		return nil
	}
	from, size := 0, 0
	for i, ev := range evs {
		n := r.countCandidates(ev.Type, reaches[i])
		if size > 0 && size+n > s.opts.RoundInsertMaxDeliveries {
			if err := write(from, i); err != nil {
				return err
			}
			from, size = i, 0
		}
		size += n
	}
	if err := write(from, len(evs)); err != nil {
		return err
	}
	var due, open []ids.ID
	for _, id := range got {
		if r.states[id] != apps.SubscriptionActive {
			delete(reads, id)
			continue
		}
		due = append(due, id)
		if _, fresh := reads[id]; !fresh {
			open = append(open, id)
		}
	}
	due, err = s.leaveToLeaseHolders(ctx, due, open, now)
	if err != nil {
		return err
	}
	// Kept before the jobs start in this process, which is after the
	// commit too.
	txn.AfterCommit(ctx, func() { s.firstReads.keep(reads, s.opts.BatchMaxDeliveries) })
	return s.scheduler.StartGroups(ctx, s.runGroups(due), now)
}

// leaveToLeaseHolders returns due without the subscriptions the round
// leaves to the holders of their leases (ADR 0106). Only a subscription
// of open, those that had open rows before the round, can hold a lease.
// One whose lease is in force at now and whose row the round locks in
// share mode without waiting (DeliveryStore.LockLeased) has an attempt in
// flight whose record has not begun: that record locks the row for update
// before it reads the next heads (D-M2-26-83), so it waits for the
// round's commit and reads the round's rows, and its run claims them or
// leaves a job for them. A job started now would find the lease in force
// and do nothing (claim). A holder that never records (its worker
// stopped) leaves its rows to its run's lease wake-up (ADR 0067), as it
// did that job's.
func (s *Deliveries) leaveToLeaseHolders(ctx context.Context, due, open []ids.ID, now time.Time) ([]ids.ID, error) {
	if len(open) == 0 {
		return due, nil
	}
	leased, err := s.store.LockLeased(ctx, open, now)
	if err != nil || len(leased) == 0 {
		return due, err
	}
	left := make(map[ids.ID]bool, len(leased))
	for _, id := range leased {
		left[id] = true
	}
	return slices.DeleteFunc(due, func(id ids.ID) bool { return left[id] }), nil
}

// writeRows writes rows, routed in seq order, with one insert, and then
// counts each created row toward the quota (applyQuota), from the open
// counts the candidates brought. It returns which rows were created (a
// row of a replayed round may exist already).
//
// The last chunk of a round (last) whose rows are all new, each for an
// event after every row its subscription has (Candidate.LastEventSeq),
// and can bring no subscription to its quota, needs nothing the insert
// returns: its insert travels with the round's COMMIT (txn.AtCommit, ADR
// 0093), one round trip less on the way from a post to its delivery
// (D-M2-26-84). Any other chunk is inserted at once, as a crossing of the
// quota must pause in the round and a replayed row must not count.
func (s *Deliveries) writeRows(ctx context.Context, r *round, rows []roundRow, now time.Time, last bool) (map[ids.ID]bool, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	news := make([]NewDelivery, len(rows))
	for i, rr := range rows {
		news[i] = rr.row
	}
	var created map[ids.ID]bool
	var err error
	if last && r.allNew(rows) && !r.mayReachQuota(rows, s.opts.MaxPendingPerSubscription) {
		created = make(map[ids.ID]bool, len(rows))
		for _, rr := range rows {
			created[rr.row.ID] = true
		}
		err = txn.AtCommit(ctx, func(ctx context.Context) error {
			_, err := s.store.InsertDeliveries(ctx, news, now)
			return err
		})
	} else {
		created, err = s.store.InsertDeliveries(ctx, news, now)
	}
	if err != nil {
		return nil, err
	}
	// Rows sent with the COMMIT are counted the same way; none of them
	// pauses a subscription (mayReachQuota).
	for _, rr := range rows {
		if created[rr.row.ID] {
			if err := s.applyQuota(ctx, r, rr.cand, now); err != nil {
				return nil, err
			}
		}
	}
	return created, nil
}

// allNew reports whether every row of rows is for an event after every
// row its subscription had when the round read its candidates, so that
// its insert creates it: no row for that event existed then, and none can
// come before the round commits, since only consumer rounds insert rows
// and one round at a time holds the consumer's cursor.
func (r *round) allNew(rows []roundRow) bool {
	for _, rr := range rows {
		if rr.row.Event.Seq <= r.last[rr.cand.SubscriptionID] {
			return false
		}
	}
	return true
}

// mayReachQuota reports whether rows, all created, would bring an active
// subscription from below quota to it (applyQuota's pause).
func (r *round) mayReachQuota(rows []roundRow, quota int) bool {
	added := map[ids.ID]int{}
	for _, rr := range rows {
		added[rr.cand.SubscriptionID]++
	}
	for id, n := range added {
		if r.states[id] == apps.SubscriptionActive && reachesQuota(r.pending[id], n, quota) {
			return true
		}
	}
	return false
}

// reachesQuota reports whether added rows bring open deliveries from
// below quota to it: the crossing that pauses a subscription, once (a
// backlog already at or above the quota does not cross it again).
func reachesQuota(before, added, quota int) bool {
	return before < quota && before+added >= quota
}

// loadCandidates reads the candidates the round's events need and it has
// not read yet, with at most two statements per event type: those of
// every app for the types of events any principal may see, and those of
// the apps every other reach names.
func (s *Deliveries) loadCandidates(ctx context.Context, r *round, evs []eventsync.Event, reaches []authz.Reach) error {
	// need is what one type still lacks: every app's candidates, the
	// candidates of some apps.
	type need struct {
		every bool
		apps  map[ids.ID]bool
	}
	needs := map[eventlog.Type]*need{}
	var types []eventlog.Type
	for i, ev := range evs {
		tc := r.candidatesOfType(ev.Type)
		n, listed := needs[ev.Type]
		if !listed {
			n = &need{apps: map[ids.ID]bool{}}
			needs[ev.Type] = n
			types = append(types, ev.Type)
		}
		if reaches[i].Everyone {
			n.every = n.every || !tc.everyRead
			continue
		}
		for _, p := range reaches[i].Principals {
			if _, read := tc.ofApp[p]; !read {
				n.apps[p] = true
			}
		}
	}
	for _, t := range types {
		tc, n := r.cands[t], needs[t]
		if n.every {
			cands, err := s.store.DeliveryCandidates(ctx, t, s.opts.MaxPendingPerSubscription+1)
			if err != nil {
				return err
			}
			tc.every, tc.everyRead = cands, true
			r.noteFacts(cands)
		}
		if len(n.apps) > 0 {
			ps := slices.SortedFunc(maps.Keys(n.apps), ids.Compare)
			cands, err := s.store.DeliveryCandidatesOf(ctx, t, ps, s.opts.MaxPendingPerSubscription+1)
			if err != nil {
				return err
			}
			r.addCandidatesOf(t, ps, cands)
		}
	}
	return nil
}

// candidatesOfType returns what the round has read of the candidates of
// type t, creating it empty on first use.
func (r *round) candidatesOfType(t eventlog.Type) *typeCandidates {
	tc, ok := r.cands[t]
	if !ok {
		tc = &typeCandidates{ofApp: map[ids.ID][]Candidate{}}
		r.cands[t] = tc
	}
	return tc
}

// readFor reports whether the candidates of type t of app were read in
// this round.
func (r *round) readFor(t eventlog.Type, app ids.ID) bool {
	tc, ok := r.cands[t]
	if !ok {
		return false
	}
	_, read := tc.ofApp[app]
	return read
}

// addCandidatesOf adds cands, the candidates of type t of the apps ps as
// one read found them, to what the round has read, with their states and
// counts.
func (r *round) addCandidatesOf(t eventlog.Type, ps []ids.ID, cands []Candidate) {
	tc := r.candidatesOfType(t)
	for _, p := range ps {
		tc.ofApp[p] = []Candidate{}
	}
	for _, c := range cands {
		tc.ofApp[c.AppPrincipalID] = append(tc.ofApp[c.AppPrincipalID], c)
	}
	r.noteFacts(cands)
}

// noteFacts keeps the state, the open count and the last event seq of
// each of cands the round has not met yet, as they were read.
func (r *round) noteFacts(cands []Candidate) {
	for _, c := range cands {
		if _, seen := r.states[c.SubscriptionID]; !seen {
			r.states[c.SubscriptionID] = c.State
			r.pending[c.SubscriptionID] = c.Pending
			r.last[c.SubscriptionID] = c.LastEventSeq
		}
	}
}

// candidatesOf returns the candidates of type t for an event with reach,
// from what loadCandidates read: the subscriptions of the apps the reach
// names, or of every app for an event any principal may see; ordered by
// subscription id.
func (r *round) candidatesOf(t eventlog.Type, reach authz.Reach) []Candidate {
	tc := r.cands[t]
	if reach.Everyone {
		return tc.every
	}
	var out []Candidate
	for _, p := range reach.Principals {
		out = append(out, tc.ofApp[p]...)
	}
	slices.SortFunc(out, func(a, b Candidate) int { return ids.Compare(a.SubscriptionID, b.SubscriptionID) })
	return out
}

// countCandidates returns how many candidates candidatesOf would return
// for type t and reach, without building them: what the chunks of
// EndRound are sized by.
func (r *round) countCandidates(t eventlog.Type, reach authz.Reach) int {
	tc := r.cands[t]
	if reach.Everyone {
		return len(tc.every)
	}
	n := 0
	for _, p := range reach.Principals {
		n += len(tc.ofApp[p])
	}
	return n
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
	if !reachesQuota(before, 1, quota) {
		return nil
	}
	return s.pauseForQuota(ctx, r, c, now)
}

// pauseForQuota pauses c for the quota under its row lock: the round's view
// of the state may be stale, so the state is read again and an owner's
// change made meanwhile wins (NextSubscriptionState rejects max_pending on
// anything but active).
func (s *Deliveries) pauseForQuota(ctx context.Context, r *round, c Candidate, now time.Time) error {
	l, ok, err := s.lockTarget(ctx, c.SubscriptionID, 0)
	if err != nil || !ok {
		return err
	}
	t := l.Target
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
