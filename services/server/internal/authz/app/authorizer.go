package app

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"bothy/server/internal/authz"
	"bothy/server/internal/authz/domain"
	"bothy/server/internal/chat"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/kernel/watched"
	"bothy/server/internal/platform/otel/attr"
)

// Options configure the Authorizer.
type Options struct {
	// StepUpMaxAge is identity.step_up_max_age: how long a step-up counts
	// for the actions that require one. Positive.
	StepUpMaxAge time.Duration
	// StandingCacheTTL and StandingCacheEntries are
	// authz.standing_cache_ttl and authz.standing_cache_entries: how long
	// and for how many persons the Authorizer keeps a person's standing in
	// memory (ADR 0103); 0 keeps none.
	StandingCacheTTL     time.Duration
	StandingCacheEntries int
}

// Deps are the collaborators of the Authorizer.
type Deps struct {
	// Grants reads the grants of a principal. Required.
	Grants GrantStore
	// Memberships reads the space memberships of a person. Required.
	Memberships chat.Memberships
	// Recorder writes denial audit entries. Required.
	Recorder auditing.Recorder
	// Clock tells the time for step-up ages. Required.
	Clock clock.Clock
	// Meter provides the counter bothy.authz.decisions; nil records
	// nothing.
	Meter metric.MeterProvider
	// Changes is the process's hub of watched facts (ADR 0103): the cache
	// of standings joins it. Nil keeps nothing in memory.
	Changes *watched.Hub
}

// Authorizer implements kernel/authorize.Authorizer: it loads the facts a
// decision needs, runs domain.Decide and, in normal mode, audits denials.
type Authorizer struct {
	grants      GrantStore
	memberships chat.Memberships
	recorder    auditing.Recorder
	clock       clock.Clock
	opts        Options
	decisions   metric.Int64Counter
	// persons keeps the standing of persons across units of work (ADR
	// 0103); an app's standing is always read, so the check before every
	// delivery attempt sees the app's grants of that moment.
	persons *watched.Cache[ids.ID, standing]
}

var _ authorize.Authorizer = (*Authorizer)(nil)

// NewAuthorizer returns an Authorizer. It returns an error for a missing
// dependency or a non-positive StepUpMaxAge.
func NewAuthorizer(d Deps, o Options) (*Authorizer, error) {
	if d.Grants == nil || d.Memberships == nil || d.Recorder == nil || d.Clock == nil {
		return nil, errors.New("authz: NewAuthorizer needs grants, memberships, a recorder and a clock")
	}
	if o.StepUpMaxAge <= 0 {
		return nil, errors.New("authz: identity.step_up_max_age must be positive")
	}
	mp := d.Meter
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	decisions, err := mp.Meter("bothy/server/internal/authz").Int64Counter("bothy.authz.decisions",
		metric.WithUnit("{decision}"), metric.WithDescription("Authorization decisions in normal mode, by outcome and reason (filter-mode decisions are not counted)."))
	if err != nil {
		return nil, err
	}
	persons := watched.NewCache(o.StandingCacheTTL, o.StandingCacheEntries, func(id ids.ID, _ standing) ids.ID { return id })
	if persons.On() {
		d.Changes.Add(persons)
	}
	return &Authorizer{grants: d.Grants, memberships: d.Memberships, recorder: d.Recorder, clock: d.Clock,
		opts: o, decisions: decisions, persons: persons}, nil
}

// Authorize implements authorize.Authorizer.
//
// Facts: the step-up age needs only the clock; the level requirement needs
// the principal's grants (one query) and, for persons, its memberships (one
// query through chat.Memberships, in the same round trip as the grants:
// txn.Together). Both are loaded only when the decision may consult them
// and are memoised for the unit of work of ctx, so a use case that filters
// a list by visibility pays them once, and Preload can load them ahead.
//
// In normal mode a denial is audited with RecordDetached: the use case
// returns the denial as an error and rolls back, and the entry must stay
// (R-AZ-04). In filter mode (authorize.InFilterMode) nothing is written and
// nothing is counted (AZ-P13).
//
// Errors: the internal errors of domain.Decide (unknown or deferred action,
// malformed resource), failures to load facts, and a failure to write the
// denial entry; the decision is not returned then.
func (a *Authorizer) Authorize(ctx context.Context, p actor.Principal, action authorize.Action, r authorize.Resource) (authorize.Decision, error) {
	f := domain.Facts{Now: a.clock.Now(), StepUpMaxAge: a.opts.StepUpMaxAge}
	if domain.NeedsStanding(p, action) {
		s, err := a.standing(ctx, p)
		if err != nil {
			return authorize.Decision{}, err
		}
		f.Memberships, f.Grants = s.memberships, s.grants
	}
	d, err := domain.Decide(p, action, r, f)
	if err != nil {
		return authorize.Decision{}, err
	}
	if authorize.InFilterMode(ctx) {
		return d, nil
	}
	a.count(ctx, d)
	if d.Allowed() {
		return d, nil
	}
	kind := r.Kind
	if kind == "" {
		e, _ := domain.Lookup(action)
		kind = e.ResourceKind
	}
	if err := a.recorder.RecordDetached(ctx, auditing.Entry{
		Action: string(action), Actor: p, ResourceKind: string(kind), ResourceID: r.ID,
		Outcome: auditing.Deny, Reason: d.Reason,
	}); err != nil {
		return authorize.Decision{}, err
	}
	return d, nil
}

// Preload implements authorize.Authorizer: the facts Authorize would load
// for action by each of ps, into the memo of the unit of work of ctx
// (standing), in one round trip whatever their number (load).
func (a *Authorizer) Preload(ctx context.Context, action authorize.Action, ps ...actor.Principal) error {
	memo, _ := standingsKey.GetOrSet(ctx, &standings{by: map[ids.ID]standing{}})
	var need []actor.Principal
	seen := map[ids.ID]bool{}
	for _, p := range ps {
		if !domain.NeedsStanding(p, action) || seen[p.ID] || memo.has(p.ID) || a.remembered(ctx, memo, p) {
			continue
		}
		seen[p.ID] = true
		need = append(need, p)
	}
	if len(need) == 0 {
		return nil
	}
	return a.load(ctx, memo, need)
}

func (a *Authorizer) count(ctx context.Context, d authorize.Decision) {
	attrs := []attribute.KeyValue{attr.Outcome.String(string(d.Outcome))}
	if d.Reason != "" {
		attrs = append(attrs, attr.Reason.String(d.Reason))
	}
	a.decisions.Add(ctx, 1, metric.WithAttributes(attrs...))
}

// standing holds the facts of one principal.
type standing struct {
	memberships map[ids.ID]authz.Level
	grants      []domain.GrantFact
}

// standings memoises the facts per principal for one unit of work.
type standings struct {
	mu sync.Mutex
	by map[ids.ID]standing
}

var standingsKey = txn.NewKey[*standings]("authz.standings")

// has reports whether the facts of id are in the memo.
func (m *standings) has(id ids.ID) bool {
	_, found := m.get(id)
	return found
}

// get returns the facts of id from the memo.
func (m *standings) get(id ids.ID) (standing, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, found := m.by[id]
	return s, found
}

// set keeps the facts of id in the memo.
func (m *standings) set(id ids.ID, s standing) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.by[id] = s
}

// standing returns the facts of p, from the memo of the unit of work of
// ctx when they were loaded before in it.
func (a *Authorizer) standing(ctx context.Context, p actor.Principal) (standing, error) {
	memo, _ := standingsKey.GetOrSet(ctx, &standings{by: map[ids.ID]standing{}})
	if s, found := memo.get(p.ID); found {
		return s, nil
	}
	if a.remembered(ctx, memo, p) {
		s, _ := memo.get(p.ID)
		return s, nil
	}
	if err := a.load(ctx, memo, []actor.Principal{p}); err != nil {
		return standing{}, err
	}
	s, _ := memo.get(p.ID)
	return s, nil
}

// remembered copies the standing of p from the cache of persons into memo
// when the cache may serve it, and reports whether it did.
func (a *Authorizer) remembered(ctx context.Context, memo *standings, p actor.Principal) bool {
	if p.Kind != actor.KindPerson {
		return false
	}
	s, ok := a.persons.Get(ctx, p.ID, a.clock.Now())
	if ok {
		memo.set(p.ID, s)
	}
	return ok
}

// load reads the facts of ps into memo in one round trip (txn.Together),
// with one statement for the grants of all of them and one for the
// memberships of the persons among them (an app's standing is its grants
// alone), so a group of posts pays for its authors what one post pays.
func (a *Authorizer) load(ctx context.Context, memo *standings, ps []actor.Principal) error {
	all := make([]ids.ID, 0, len(ps))
	var persons []ids.ID
	for _, p := range ps {
		all = append(all, p.ID)
		if p.Kind == actor.KindPerson {
			persons = append(persons, p.ID)
		}
	}
	var grants map[ids.ID][]domain.GrantFact
	var memberships map[ids.ID][]chat.Membership
	loads := []func(context.Context) error{func(ctx context.Context) error {
		var err error
		grants, err = a.grants.GrantFactsOf(ctx, all)
		return err
	}}
	if len(persons) > 0 {
		loads = append(loads, func(ctx context.Context) error {
			var err error
			if memberships, err = a.memberships.MembershipsOf(ctx, persons); err != nil {
				return errs.Wrap(err, "authz: loading memberships failed")
			}
			return nil
		})
	}
	generation := a.persons.Begin()
	if err := txn.Together(ctx, loads...); err != nil {
		return err
	}
	now := a.clock.Now()
	for _, p := range ps {
		s := standing{grants: grants[p.ID]}
		if p.Kind == actor.KindPerson {
			s.memberships = make(map[ids.ID]authz.Level, len(memberships[p.ID]))
			for _, m := range memberships[p.ID] {
				s.memberships[m.SpaceID] = authz.Level(m.Level)
			}
			a.persons.Put(ctx, generation, p.ID, s, now, time.Time{})
		}
		memo.set(p.ID, s)
	}
	return nil
}
