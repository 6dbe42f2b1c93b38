package app_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/authz/authztest"
	"bothy/server/internal/identity"
	"bothy/server/internal/identity/identitytest"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// stepUpMaxAge is identity.step_up_max_age of the real authorizer of the tests.
const stepUpMaxAge = authztest.StepUpMaxAge

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

// setup is newBundle with the watch of credential changes reporting to
// the Service: every test of the use cases runs with the cache of token
// owners and its watch (ADR 0102), as an api process does.
func setup(t testing.TB) *testBundle {
	t.Helper()
	b := newBundle(t)
	b.env.WatchChanges(t, nil)
	return b
}

// newBundle is the identity module over a fresh database with the cache of
// token owners on, without its watch (so the cache serves nothing yet).
func newBundle(t testing.TB) *testBundle {
	t.Helper()
	b := &testBundle{db: pgtest.New(t), clock: clock.NewFake(t0), facts: &appFacts{facts: map[ids.ID]identity.AppFacts{}}}
	b.env = identitytest.New(t, b.db, b.clock, authztest.NewAuthorizer(t, b.db, b.clock, nil), b.facts,
		identitytest.WithTokenCache(identitytest.Options()))
	return b
}

// as returns a context carrying p, the way the HTTP chain passes it.
func as(p actor.Principal) context.Context { return actor.With(context.Background(), p) }

func requireCode(t *testing.T, err error, code errs.Code) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, code, errs.CodeOf(err), "%v", err)
}
