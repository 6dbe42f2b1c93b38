// Package identitytest builds the identity module over a pgtest database for
// tests of this and other modules: the Service, the Bootstrap, the Store and
// helpers that add people and sign them in.
//
//	env := identitytest.New(t, db, clk, authztest.NewAuthorizer(t, db, clk, nil), facts, identitytest.Options())
//	robin := env.AddPerson(t, "robin@example.com", "Robin", actor.RoleOwner)
//	token, principal := env.SignIn(t, "robin@example.com")
package identitytest

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"bothy/server/internal/identity"
	"bothy/server/internal/identity/adapters/postgres"
	"bothy/server/internal/identity/app"
	"bothy/server/internal/identity/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/watched"
	"bothy/server/internal/platform/auditpg"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

// Password is the password AddPerson gives every person.
const Password = "correct horse battery staple"

// PasswordParams are the cheapest argon2id parameters, so tests under the
// race detector stay fast; the rules do not depend on the cost.
var PasswordParams = domain.Params{MemoryKiB: domain.MinMemoryKiB, Iterations: 1, Parallelism: 1}

// Options returns the test configuration: sessions of a day, passwords of
// at least 12 characters, PasswordParams.
func Options() app.Options {
	return app.Options{SessionTTL: 24 * time.Hour, PasswordMinLength: 12, PasswordParams: PasswordParams}
}

// WithTokenCache returns o with the cache of token owners on (ADR 0102):
// entries live a minute, at most 100. The cache serves only while a watch
// runs (Env.WatchChanges).
func WithTokenCache(o app.Options) app.Options {
	o.TokenCacheTTL = time.Minute
	o.TokenCacheEntries = 100
	return o
}

// Env is the identity module over one test database.
type Env struct {
	// Service runs the use cases; it is the Authenticator and Principals.
	Service *app.Service
	// Bootstrap creates owners without a principal.
	Bootstrap *app.Bootstrap
	// Store is the PostgreSQL store.
	Store *postgres.Store

	// Changes is the hub the Service's cache joins (ADR 0103).
	Changes *watched.Hub

	clock clock.Clock
	db    *pgtest.DB
}

// New returns an Env over db with clk, deciding with az and reading app
// facts from facts, configured with o (usually Options()).
func New(t testing.TB, db *pgtest.DB, clk clock.Clock, az authorize.Authorizer, facts identity.AppFactsSource, o app.Options) *Env {
	t.Helper()
	store := postgres.New(db.App)
	uow := pg.NewUnitOfWork(db.App, 3, 5*time.Second)
	audit := auditpg.New(db.App, clk)
	changes := &watched.Hub{}
	svc, err := app.New(app.Deps{UnitOfWork: uow, Store: store, Authorizer: az, Audit: audit, AppFacts: facts, Clock: clk,
		Changes: changes}, o)
	if err != nil {
		t.Fatalf("identitytest: %v", err)
	}
	boot, err := app.NewBootstrap(uow, store, audit, clk, nil, o)
	if err != nil {
		t.Fatalf("identitytest: %v", err)
	}
	return &Env{Service: svc, Bootstrap: boot, Store: store, Changes: changes, clock: clk, db: db}
}

// WatchChanges runs the watch of changes (pg.WatchChanges) for the rest
// of the test and returns once it listens. It reports to events, or to the
// Env's hub (Changes) when events is nil (a test that observes the reports
// passes a wrapper of Changes).
func (e *Env) WatchChanges(t testing.TB, events watched.Events) {
	t.Helper()
	if events == nil {
		events = e.Changes
	}
	e.db.WatchChanges(t, events)
}

// AddPerson stores a person with Password and role directly, without
// authorization or audit, and fails the test on an error.
func (e *Env) AddPerson(t testing.TB, email, name string, role actor.Role) app.Person {
	t.Helper()
	hash, err := domain.HashPassword(Password, PasswordParams, rand.Reader)
	if err != nil {
		t.Fatalf("identitytest: %v", err)
	}
	p := app.Person{ID: ids.New(), Email: email, DisplayName: name, Role: role, CreatedAt: e.clock.Now()}
	if err := e.Store.CreatePerson(context.Background(), p, hash); err != nil {
		t.Fatalf("identitytest: AddPerson: %v", err)
	}
	return p
}

// SignIn signs the person with email and Password in and returns the
// session token and the principal it authenticates as.
func (e *Env) SignIn(t testing.TB, email string) (string, actor.Principal) {
	t.Helper()
	ctx := context.Background()
	s, err := e.Service.SignIn(ctx, app.SignIn{Email: email, Password: Password})
	if err != nil {
		t.Fatalf("identitytest: SignIn: %v", err)
	}
	p, err := e.Service.Authenticate(ctx, s.Token)
	if err != nil {
		t.Fatalf("identitytest: Authenticate: %v", err)
	}
	return s.Token, p
}
