package app

import (
	"context"
	"maps"
	"sync"

	"bothy/server/internal/authz"
	"bothy/server/internal/authz/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
)

var _ authz.DeliveryRouter = (*Authorizer)(nil)

// reaches memoises Reach per place for one unit of work, with the grants
// of every holder it read, which Deliverable decides with (D-M2-26-81).
type reaches struct {
	mu    sync.Mutex
	by    map[domain.Place][]ids.ID
	facts map[ids.ID][]domain.GrantFact
}

var reachesKey = txn.NewKey[*reaches]("authz.reaches")

// Reach implements authz.DeliveryRouter with the place of domain.PlaceOf,
// the rules of domain.StandingOn for apps (docs/spec/07-permissions.md
// 4.3): an app sees a channel and what is in it with a grant on the
// channel or its space, a space with any grant in it, the instance always,
// and nothing else.
func (a *Authorizer) Reach(ctx context.Context, rs []authorize.Resource) ([]authz.Reach, error) {
	memo := reachesOf(ctx)
	out := make([]authz.Reach, len(rs))
	// placeOf holds the place of each resource (by index) that a place
	// narrows; the others are answered in the first pass.
	placeOf := map[int]domain.Place{}
	var missing []domain.Place
	memo.mu.Lock()
	for i, r := range rs {
		if !r.Audience.IsZero() {
			out[i] = authz.Reach{Principals: []ids.ID{r.Audience}}
			continue
		}
		at, narrowed := domain.PlaceOf(r)
		if !narrowed {
			// The instance, a collection, or a resource only owners see:
			// the decision tells; nothing narrows it here.
			out[i] = authz.Reach{Everyone: true}
			continue
		}
		placeOf[i] = at
		if _, found := memo.by[at]; !found {
			missing = append(missing, at)
		}
	}
	memo.mu.Unlock()
	if len(missing) > 0 {
		holders, err := a.grants.HoldersIn(ctx, missing)
		if err != nil {
			return nil, err
		}
		memo.mu.Lock()
		maps.Copy(memo.by, holders.ByPlace)
		maps.Copy(memo.facts, holders.Facts)
		memo.mu.Unlock()
	}
	memo.mu.Lock()
	defer memo.mu.Unlock()
	for i, at := range placeOf {
		out[i] = authz.Reach{Principals: memo.by[at]}
	}
	return out, nil
}

// reachesOf returns the memo of Reach of the unit of work of ctx.
func reachesOf(ctx context.Context) *reaches {
	memo, _ := reachesKey.GetOrSet(ctx, &reaches{by: map[domain.Place][]ids.ID{}, facts: map[ids.ID][]domain.GrantFact{}})
	return memo
}

// Deliverable implements authz.DeliveryRouter: domain.Decide of
// webhook_out.deliver for each app of each question with the facts of the
// unit of work's memo (the same memo Authorize uses); the grants of the
// apps not in it are those Reach read with their holders (D-M2-26-81),
// else loaded with one statement. Nothing is audited or counted
// (filter mode). Only loading the grants can fail: a resource the
// decision rejects as malformed routes to every app (the attempt's check
// reports it).
func (a *Authorizer) Deliverable(ctx context.Context, qs []authz.DeliveryQuestion) ([][]bool, error) {
	var all []actor.Principal
	for _, q := range qs {
		all = append(all, q.Apps...)
	}
	if err := a.preload(ctx, all); err != nil {
		return nil, err
	}
	out := make([][]bool, len(qs))
	for qi, q := range qs {
		out[qi] = make([]bool, len(q.Apps))
		for i, p := range q.Apps {
			s, err := a.standing(ctx, p)
			if err != nil {
				return nil, err
			}
			f := domain.Facts{Now: a.clock.Now(), StepUpMaxAge: a.opts.StepUpMaxAge, Memberships: s.memberships, Grants: s.grants}
			d, err := domain.Decide(p, authorize.WebhookOutDeliver, q.Resource, f)
			if err != nil {
				// A resource the decision rejects as malformed (a data
				// fault of the stored event) is routed: the check before
				// the attempt fails the same way and the head names
				// internal_error, where an error here would stop the
				// consumer for every app.
				out[qi][i] = true
				continue
			}
			out[qi][i] = d.Allowed()
		}
	}
	return out, nil
}

// preload puts the grants of the apps among ps that the unit of work's memo
// lacks into it: those Reach read with the holders of a place, the others
// with one statement. Persons are left to standing, which also reads
// their memberships.
func (a *Authorizer) preload(ctx context.Context, ps []actor.Principal) error {
	memo, ok := standingsKey.Get(ctx)
	if !ok {
		memo = &standings{by: map[ids.ID]standing{}}
		standingsKey.Set(ctx, memo)
	}
	held := reachesOf(ctx)
	held.mu.Lock()
	memo.mu.Lock()
	var missing []ids.ID
	seen := map[ids.ID]bool{}
	for _, p := range ps {
		if _, found := memo.by[p.ID]; found || p.Kind != actor.KindApp || seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		if g, read := held.facts[p.ID]; read {
			// An app holds grants only through this table, so all its
			// grants are all its standing.
			memo.by[p.ID] = standing{grants: g}
			continue
		}
		missing = append(missing, p.ID)
	}
	memo.mu.Unlock()
	held.mu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	facts, err := a.grants.GrantFactsOf(ctx, missing)
	if err != nil {
		return err
	}
	memo.mu.Lock()
	defer memo.mu.Unlock()
	for id, g := range facts {
		memo.by[id] = standing{grants: g}
	}
	return nil
}
