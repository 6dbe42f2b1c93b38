// Package harness builds the shared test world of
// docs/spec/07-permissions.md 10 and 11.1 (M1-71) through the real use
// cases of identity, chat, authz and apps, over a pgtest database, so that
// tests of every package act as Alex, Sam, Robin or the app Tracker with
// real tokens, real decisions and real rows:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//		w := harness.BuildMatrixWorld(t, pgtest.New(t))
//		ctx := w.As(t, w.Tracker.Token)   // authenticated now, current facts
//		_, err := w.Services.Chat.PostMessage(ctx, chatapp.PostMessage{ChannelID: w.Eskalation, Text: "Hello Sam"})
//	}
//
// NewServices builds the same modules without the world, with
// wire.BuildModules as the role assembly does, for tests that build their
// own.
package harness

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"bothy/server/internal/apps/adapters/deliveryjobs"
	appspg "bothy/server/internal/apps/adapters/postgres"
	appsapp "bothy/server/internal/apps/app"
	identitypg "bothy/server/internal/identity/adapters/postgres"
	identityapp "bothy/server/internal/identity/app"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/platform/jobs"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/platform/secrets/stack"
	syncpg "bothy/server/internal/sync/adapters/postgres"
	"bothy/server/internal/wire"
)

// Start is the instant the fake clock of a world shows first.
var Start = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// TestConfig changes a loaded configuration into the test configuration:
// the cheapest argon2id parameters (identity.password_hash_memory,
// identity.password_hash_iterations, identity.password_hash_parallelism),
// so a world builds fast under the race detector; webhook.allowed_hosts
// holding hooks.example.com (port 443), the host of Tracker's events_url;
// and event log partitions of a day (sync.partition_interval) a week ahead
// (sync.partition_ahead), so a test may move the fake clock that far and
// still append events. Every other value is the default.
func TestConfig(cfg *wire.Config) {
	cfg.Identity.PasswordHashMemory = 8 * 1024
	cfg.Identity.PasswordHashIterations = 1
	cfg.Identity.PasswordHashParallelism = 1
	hosts, err := hostlist.Parse([]string{"hooks.example.com"})
	if err != nil {
		panic(err)
	}
	cfg.Webhook.AllowedHosts = hosts
	cfg.Sync.PartitionInterval = 24 * time.Hour
	cfg.Sync.PartitionAhead = 7 * 24 * time.Hour
}

// Services are the modules over one test database, built by
// wire.BuildModules exactly as the role assembly builds them, plus what
// tests need beside them.
type Services struct {
	// Modules are the modules as production wires them: UnitOfWork,
	// Audit, Events, Log, Instance, Keys, Authorizer, Grants, Chat,
	// Identity (the Authenticator and identity.Principals) and Apps.
	*wire.Modules
	// DB is the test database.
	DB *pgtest.DB
	// Config is the configuration the modules were built with.
	Config *wire.Config
	// IdentityBootstrap creates owners, as `bothy owner create` does.
	IdentityBootstrap *identityapp.Bootstrap
	// AppsStore is the apps store (also apps.Installations and
	// identity.AppFactsSource), for reads in tests.
	AppsStore *appspg.Store
	// SubscriptionStore is the store of the owner side of the webhook
	// tables (app.SubscriptionStore, app.RecoveryStore), for use cases a
	// test builds itself.
	SubscriptionStore *appspg.SubscriptionStore
	// Jobs is the job runtime in role api through which the modules insert
	// their jobs (apps.webhook_deliver). Nothing works them: tests that
	// deliver build a worker runtime of their own.
	Jobs *jobs.Runtime
}

// errNotWorked is what a job handler of the api-role runtime would return;
// a runtime of role api never runs one.
var errNotWorked = errors.New("harness: the api-role runtime works no job")

// NewJobs returns a job runtime in role api over db with every job kind of
// the modules registered, as the role assembly registers them in every
// role (the api role inserts jobs too). Its handlers never run.
func NewJobs(t testing.TB, db *pgtest.DB) *jobs.Runtime {
	t.Helper()
	rt, err := jobs.New(jobs.Options{Role: string(wire.RoleAPI), FetchPollInterval: time.Second, FetchCooldown: time.Millisecond,
		JobTimeout: time.Minute, ShutdownTimeout: time.Second}, jobs.Deps{Pool: db.App, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	require.NoError(t, jobs.Register(rt, func(context.Context, jobs.Job[deliveryjobs.WebhookDeliver]) error { return errNotWorked },
		jobs.HandlerOptions{Queue: jobs.QueueDelivery}))
	return rt
}

// LoadConfig returns the configuration of a process over db: secrets
// generated into a temporary folder (`bothy secrets init`), the defaults
// with database.url and secrets.dir set, TestConfig applied, then change
// (when not nil).
func LoadConfig(t testing.TB, db *pgtest.DB, change func(*wire.Config)) *wire.Config {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "secrets")
	require.NoError(t, os.Mkdir(dir, 0o700))
	_, err := stack.Init(dir, nil)
	require.NoError(t, err)
	cfg, err := wire.Load("", []string{"BOTHY_DATABASE_URL=" + db.AppURL, "BOTHY_SECRETS_DIR=" + dir})
	require.NoError(t, err)
	TestConfig(cfg)
	if change != nil {
		change(cfg)
	}
	return cfg
}

// CreateOwner creates Robin (robin@example.com, password Password) as the
// owner through the identity bootstrap of the modules m of a process over
// db, as `bothy owner create` does. Any error fails the test.
func CreateOwner(t testing.TB, db *pgtest.DB, cfg *wire.Config, m *wire.Modules) {
	t.Helper()
	idOpts, err := wire.IdentityOptions(cfg)
	require.NoError(t, err)
	boot, err := identityapp.NewBootstrap(m.UnitOfWork, identitypg.New(db.App), m.Audit, m.Clock, nil, idOpts)
	require.NoError(t, err)
	_, err = boot.CreateOwner(context.Background(), identityapp.CreatePerson{Email: "robin@example.com", DisplayName: "Robin", Password: Password})
	require.NoError(t, err)
}

// CreatePartitions creates the event log partitions of cfg around now, as
// the maintenance of a running process does.
func CreatePartitions(t testing.TB, db *pgtest.DB, cfg *wire.Config, now time.Time) {
	t.Helper()
	maint, err := syncpg.NewMaintainer(db.App, syncpg.MaintainerOptions{
		PartitionInterval: cfg.Sync.PartitionInterval, PartitionAhead: cfg.Sync.PartitionAhead, EventRetention: cfg.Sync.EventRetention})
	require.NoError(t, err)
	_, err = maint.Run(context.Background(), now)
	require.NoError(t, err)
}

// NewServices builds the modules over db with the fake clock clk: the
// configuration is the default with TestConfig applied, then change (when
// not nil); the secrets are generated into a temporary folder
// (`bothy secrets init`); the signing keys are ensured and the event log
// partitions created, as a starting process does. hooks, when
// not nil, gives the apps use cases installation hooks built from the
// assembled services (see WithHooks). It fails the test on any error.
func NewServices(t testing.TB, db *pgtest.DB, clk *clock.Fake, change func(*wire.Config), hooks func(*Services) appsapp.InstallationHooks) *Services {
	t.Helper()
	cfg := LoadConfig(t, db, change)
	sp, err := wire.NewSecretsProvider(cfg)
	require.NoError(t, err)
	rt := NewJobs(t, db)
	mods, err := wire.BuildModules(cfg, wire.ModuleDeps{Pool: db.App, Secrets: sp, Clock: clk, Meter: noop.NewMeterProvider(),
		Jobs: rt.Inserter(), Tracer: tracenoop.NewTracerProvider(), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	s := &Services{
		Modules: mods, DB: db, Config: cfg, AppsStore: appspg.New(db.App),
		SubscriptionStore: appspg.NewSubscriptionStore(db.App), Jobs: rt,
	}
	// The signing keys a process ensures at start: new webhook
	// subscriptions record the active webhook_out key.
	require.NoError(t, mods.Instance.Ensure(context.Background()))
	CreatePartitions(t, db, cfg, clk.Now())

	idOpts, err := wire.IdentityOptions(cfg)
	require.NoError(t, err)
	s.IdentityBootstrap, err = identityapp.NewBootstrap(mods.UnitOfWork, identitypg.New(db.App), mods.Audit, clk, nil, idOpts)
	require.NoError(t, err)

	if hooks != nil {
		// The same apps use cases as BuildModules builds, with the hooks.
		s.Apps, err = appsapp.New(appsapp.Deps{
			UnitOfWork: mods.UnitOfWork, Authorizer: mods.Authorizer, Audit: mods.Audit, Events: mods.Events,
			Principals: mods.Identity, Grants: mods.Grants, Store: s.AppsStore, Clock: clk, Hooks: hooks(s),
		}, appsapp.Options{AllowedHosts: cfg.Webhook.AllowedHosts})
		require.NoError(t, err)
	}
	return s
}
