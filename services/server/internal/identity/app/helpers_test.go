package app_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/identity"
	"bothy/server/internal/identity/identitytest"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// stepUpMaxAge is identity.step_up_max_age of the tests.
const stepUpMaxAge = 10 * time.Minute

// catalogueAuthorizer decides the identity actions as the catalogue rows
// say (public; self; owner only with step-up, where a personal token is
// never an owner). It stands in for internal/authz, which is built
// elsewhere and not merged yet; it implements the authorize.Authorizer port
// the use cases call.
type catalogueAuthorizer struct{ clock clock.Clock }

func (a catalogueAuthorizer) Authorize(_ context.Context, p actor.Principal, action authorize.Action, r authorize.Resource) (authorize.Decision, error) {
	switch action {
	case authorize.SessionCreate:
		return authorize.Decision{Outcome: authorize.Allow}, nil
	case authorize.SessionDelete, authorize.SessionStepUp, authorize.MeRead, authorize.PersonalTokenRead, authorize.PersonalTokenManage:
		switch {
		case p.Anonymous():
			return authorize.Decision{Outcome: authorize.Unauthorized}, nil
		case r.Owner != p.ID:
			return authorize.Decision{Outcome: authorize.NotFound, Reason: "not_self"}, nil
		}
		return authorize.Decision{Outcome: authorize.Allow}, nil
	case authorize.PersonManage:
		switch {
		case p.Anonymous():
			return authorize.Decision{Outcome: authorize.Unauthorized}, nil
		case !p.IsOwner() || p.ViaPersonalToken:
			return authorize.Decision{Outcome: authorize.NotFound}, nil
		case !identity.StepUpFresh(p, a.clock.Now(), stepUpMaxAge):
			return authorize.Decision{Outcome: authorize.StepUpRequired}, nil
		}
		return authorize.Decision{Outcome: authorize.Allow}, nil
	}
	return authorize.Decision{}, errors.New("unknown action")
}

// appFacts is an in-test identity.AppFactsSource (the apps module
// implements the real one).
type appFacts struct {
	mu    sync.Mutex
	facts map[ids.ID]identity.AppFacts
}

func (f *appFacts) set(principal ids.ID, facts identity.AppFacts) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.facts[principal] = facts
}

func (f *appFacts) AppFacts(_ context.Context, principal ids.ID) (identity.AppFacts, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	facts, ok := f.facts[principal]
	return facts, ok, nil
}

type testBundle struct {
	db    *pgtest.DB
	clock *clock.Fake
	facts *appFacts
	env   *identitytest.Env
}

func setup(t testing.TB) *testBundle {
	t.Helper()
	b := &testBundle{db: pgtest.New(t), clock: clock.NewFake(t0), facts: &appFacts{facts: map[ids.ID]identity.AppFacts{}}}
	b.env = identitytest.New(t, b.db, b.clock, catalogueAuthorizer{clock: b.clock}, b.facts, identitytest.Options())
	return b
}

// as returns a context carrying p, the way the HTTP chain passes it.
func as(p actor.Principal) context.Context { return actor.With(context.Background(), p) }

func requireCode(t *testing.T, err error, code errs.Code) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, code, errs.CodeOf(err), "%v", err)
}
