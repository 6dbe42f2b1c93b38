// Package instancetest builds the instance module over a pgtest database for
// tests of this and other modules: the Service (Ensure, Load, rotation) and
// Keys with a master key file of their own in a temporary directory.
//
//	env := instancetest.New(t, db, clk, instancetest.DefaultConfig())
//	env.Ensure(t) // instance row and one active key per purpose
//	signers, err := env.Keys.Signers(ctx, instance.PurposeWebhookOut)
package instancetest

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"bothy/server/internal/instance"
	"bothy/server/internal/instance/adapters/masterkey"
	"bothy/server/internal/instance/adapters/postgres"
	"bothy/server/internal/instance/app"
	"bothy/server/internal/instance/domain"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/platform/auditpg"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/platform/secrets"
)

// Config is the test configuration of an Env.
type Config struct {
	// Name is instance.name.
	Name string
	// Rotation holds agent.jwks_max_age and instance.signing_key_max_age.
	Rotation domain.Policy
	// CacheTTL is instance.key_cache_ttl.
	CacheTTL time.Duration
}

// DefaultConfig returns windows that are easy to step through with a fake
// clock: keys published an hour ahead, rotated every 90 days, signers
// cached for ten minutes.
func DefaultConfig() Config {
	return Config{
		Name:     "bothy test",
		Rotation: domain.Policy{PublishAhead: time.Hour, MaxAge: 90 * 24 * time.Hour},
		CacheTTL: 10 * time.Minute,
	}
}

// Env is the instance module over one test database.
type Env struct {
	// Service runs Ensure, Load and the rotations.
	Service *app.Service
	// Keys implements instance.Keys.
	Keys *app.Keys
	// Store is the PostgreSQL store.
	Store *postgres.Store
	// MasterPath is the file of the master key (hex, like `bothy secrets
	// init` writes it); MasterRef references it.
	MasterPath, MasterRef string

	master *masterkey.MasterKey
}

// New returns an Env over db with clk and a fresh random master key. It
// does not call Ensure. The master key file is read on every use (no
// secrets cache), so a test may replace it.
func New(t testing.TB, db *pgtest.DB, clk clock.Clock, c Config) *Env {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "signing_keys_master_key")
	WriteMasterKey(t, path, nil)
	return NewWithMaster(t, db, clk, c, "file:"+path)
}

// NewWithMaster is New with the master key behind ref, for tests that share
// one key between two Envs (two processes) or use a wrong one.
func NewWithMaster(t testing.TB, db *pgtest.DB, clk clock.Clock, c Config, ref string) *Env {
	t.Helper()
	provider, err := secrets.NewProvider(secrets.Options{Clock: clk})
	if err != nil {
		t.Fatalf("instancetest: %v", err)
	}
	master := masterkey.New(provider, ref)
	store := postgres.New(db.App)
	keys, err := app.NewKeys(store, master, clk, app.KeysOptions{CacheTTL: c.CacheTTL})
	if err != nil {
		t.Fatalf("instancetest: %v", err)
	}
	svc, err := app.New(app.Deps{
		UnitOfWork: pg.NewUnitOfWork(db.App, 3, 5*time.Second),
		Store:      store,
		Keys:       keys,
		Master:     master,
		Audit:      auditpg.New(db.App, clk),
		Clock:      clk,
	}, app.Options{Name: c.Name, Rotation: c.Rotation})
	if err != nil {
		t.Fatalf("instancetest: %v", err)
	}
	path, _ := filepath.Abs(ref[len("file:"):])
	return &Env{Service: svc, Keys: keys, Store: store, MasterPath: path, MasterRef: ref, master: master}
}

// Ensure runs Service.Ensure and fails the test on an error.
func (e *Env) Ensure(t testing.TB) {
	t.Helper()
	if err := e.Service.Ensure(context.Background()); err != nil {
		t.Fatalf("instancetest: Ensure: %v", err)
	}
}

// WriteMasterKey writes key (32 random bytes when nil) hex-encoded to path
// with mode 0600, the form of the generated secret.
func WriteMasterKey(t testing.TB, path string, key []byte) {
	t.Helper()
	if key == nil {
		key = make([]byte, domain.MasterKeySize)
		if _, err := rand.Read(key); err != nil {
			t.Fatalf("instancetest: %v", err)
		}
	}
	if err := os.WriteFile(path, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatalf("instancetest: writing the master key: %v", err)
	}
}

// AddKey stores a new key of purpose p that reaches state at the given
// times, bypassing the rotation rules, for tests that need a particular key
// set (two signers, a retiring key with not_after ahead). created is the
// creation (and, unless next, activation) time; notAfter is set for
// retiring and retired keys. Add keys in life-cycle order: a retiring key
// passes through active, so add it before the purpose's active key. It
// returns the kid and fails the test on an error.
func (e *Env) AddKey(t testing.TB, p instance.Purpose, state instance.KeyState, created, notAfter time.Time) string {
	t.Helper()
	ctx := context.Background()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatalf("instancetest: %v", err)
	}
	kid, err := domain.KeyID(pub)
	if err != nil {
		t.Fatalf("instancetest: %v", err)
	}
	master, err := e.master.Key(ctx)
	if err != nil {
		t.Fatalf("instancetest: master key: %v", err)
	}
	sealed, err := domain.SealPrivateKey(master, kid, p, priv, rand.Reader)
	if err != nil {
		t.Fatalf("instancetest: %v", err)
	}
	k := app.StoredKey{Key: domain.Key{KID: kid, State: instance.KeyActive, CreatedAt: created, ActivatedAt: created},
		Purpose: p, PublicKey: pub, Sealed: sealed}
	if state == instance.KeyNext {
		k.State, k.ActivatedAt = instance.KeyNext, time.Time{}
	}
	steps := []func() error{func() error { return e.Store.InsertKey(ctx, k) }}
	if state == instance.KeyRetiring || state == instance.KeyRetired {
		steps = append(steps, func() error { return e.Store.StartRetiring(ctx, kid, notAfter) })
	}
	if state == instance.KeyRetired {
		steps = append(steps, func() error { return e.Store.RetireKey(ctx, kid, notAfter) })
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("instancetest: AddKey: %v", err)
		}
	}
	e.Keys.Invalidate()
	return kid
}
