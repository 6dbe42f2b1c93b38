package app

import (
	"context"
	"sync"

	"bothy/server/internal/authz"
	"bothy/server/internal/authz/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
)

var _ authz.DeliveryRouter = (*Authorizer)(nil)

// reaches memoises Reach per place for one unit of work.
type reaches struct {
	mu sync.Mutex
	by map[domain.Place][]ids.ID
}

var reachesKey = txn.NewKey[*reaches]("authz.reaches")

// Reach implements authz.DeliveryRouter with the place of domain.PlaceOf,
// the rules of domain.StandingOn for apps (docs/spec/07-permissions.md
// 4.3): an app sees a channel and what is in it with a grant on the
// channel or its space, a space with any grant in it, the instance always,
// and nothing else.
func (a *Authorizer) Reach(ctx context.Context, r authorize.Resource) (authz.Reach, error) {
	if !r.Audience.IsZero() {
		return authz.Reach{Principals: []ids.ID{r.Audience}}, nil
	}
	at, narrowed := domain.PlaceOf(r)
	if !narrowed {
		// The instance, a collection, or a resource only owners see: the
		// decision tells; nothing narrows it here.
		return authz.Reach{Everyone: true}, nil
	}
	memo, ok := reachesKey.Get(ctx)
	if !ok {
		memo = &reaches{by: map[domain.Place][]ids.ID{}}
		reachesKey.Set(ctx, memo)
	}
	memo.mu.Lock()
	holders, found := memo.by[at]
	memo.mu.Unlock()
	if !found {
		var err error
		if holders, err = a.grants.HoldersIn(ctx, at.Space, at.Channel); err != nil {
			return authz.Reach{}, err
		}
		memo.mu.Lock()
		memo.by[at] = holders
		memo.mu.Unlock()
	}
	return authz.Reach{Principals: holders}, nil
}

// Deliverable implements authz.DeliveryRouter: domain.Decide of
// webhook_out.deliver for each app with the facts of the unit of work's
// memo (the same memo Authorize uses), the grants of the apps not in it
// loaded with one statement. Nothing is audited or counted (filter mode).
// Only loading the grants can fail: a resource the decision rejects as
// malformed routes to every app (the attempt's check reports it).
func (a *Authorizer) Deliverable(ctx context.Context, apps []actor.Principal, r authorize.Resource) ([]bool, error) {
	if err := a.preload(ctx, apps); err != nil {
		return nil, err
	}
	out := make([]bool, len(apps))
	for i, p := range apps {
		s, err := a.standing(ctx, p)
		if err != nil {
			return nil, err
		}
		f := domain.Facts{Now: a.clock.Now(), StepUpMaxAge: a.opts.StepUpMaxAge, Memberships: s.memberships, Grants: s.grants}
		d, err := domain.Decide(p, authorize.WebhookOutDeliver, r, f)
		if err != nil {
			// A resource the decision rejects as malformed (a data fault
			// of the stored event) is routed: the check before the attempt
			// fails the same way and the head names internal_error, where
			// an error here would stop the consumer for every app.
			out[i] = true
			continue
		}
		out[i] = d.Allowed()
	}
	return out, nil
}

// preload puts the grants of the apps among ps that the unit of work's memo
// lacks into it, with one statement. Persons are left to standing, which
// also reads their memberships.
func (a *Authorizer) preload(ctx context.Context, ps []actor.Principal) error {
	memo, ok := standingsKey.Get(ctx)
	if !ok {
		memo = &standings{by: map[ids.ID]standing{}}
		standingsKey.Set(ctx, memo)
	}
	memo.mu.Lock()
	var missing []ids.ID
	seen := map[ids.ID]bool{}
	for _, p := range ps {
		if _, found := memo.by[p.ID]; !found && p.Kind == actor.KindApp && !seen[p.ID] {
			missing = append(missing, p.ID)
			seen[p.ID] = true
		}
	}
	memo.mu.Unlock()
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
