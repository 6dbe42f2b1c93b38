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
// NewServices assembles the same services without the world, for tests
// that build their own.
package harness

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	appspg "bothy/server/internal/apps/adapters/postgres"
	appsapp "bothy/server/internal/apps/app"
	azpg "bothy/server/internal/authz/adapters/postgres"
	azapp "bothy/server/internal/authz/app"
	chatpg "bothy/server/internal/chat/adapters/postgres"
	chatapp "bothy/server/internal/chat/app"
	identitypg "bothy/server/internal/identity/adapters/postgres"
	identityapp "bothy/server/internal/identity/app"
	identitydomain "bothy/server/internal/identity/domain"
	"bothy/server/internal/kernel/auditing/auditpg"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
	syncpg "bothy/server/internal/sync/adapters/postgres"
)

// Start is the instant the fake clock of a world shows first.
var Start = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// Config is the test configuration of the services: small, fast values
// named after their configuration keys. Tests that need other values pass
// WithConfig.
type Config struct {
	// StepUpMaxAge is identity.step_up_max_age.
	StepUpMaxAge time.Duration
	// SessionTTL is identity.session_ttl.
	SessionTTL time.Duration
	// PasswordMinLength is identity.password_min_length.
	PasswordMinLength int
	// PasswordParams are identity.password_hash_*: the cheapest argon2id
	// parameters, so a world builds fast under the race detector.
	PasswordParams identitydomain.Params
	// MessageMaxBytes, NameMaxChars, PageSizeDefault and PageSizeMax are
	// chat.message_max_bytes, chat.name_max_chars,
	// chat.page_size_default and chat.page_size_max.
	MessageMaxBytes, NameMaxChars, PageSizeDefault, PageSizeMax int
	// PayloadTextMaxBytes is sync.payload_text_max_bytes.
	PayloadTextMaxBytes int
	// PartitionInterval, PartitionAhead and EventRetention are
	// sync.partition_interval, sync.partition_ahead and
	// sync.event_retention. Partitions are created once, from the clock's
	// time to PartitionAhead after it, so a test may move the fake clock
	// that far and still append events.
	PartitionInterval, PartitionAhead, EventRetention time.Duration
	// AllowedHosts is webhook.allowed_hosts.
	AllowedHosts hostlist.List
}

// DefaultConfig returns the test configuration. AllowedHosts holds
// hooks.example.com (port 443), the host of Tracker's events_url.
func DefaultConfig() Config {
	hosts, err := hostlist.Parse([]string{"hooks.example.com"})
	if err != nil {
		panic(err)
	}
	return Config{
		StepUpMaxAge:        10 * time.Minute,
		SessionTTL:          24 * time.Hour,
		PasswordMinLength:   12,
		PasswordParams:      identitydomain.Params{MemoryKiB: identitydomain.MinMemoryKiB, Iterations: 1, Parallelism: 1},
		MessageMaxBytes:     4096,
		NameMaxChars:        80,
		PageSizeDefault:     50,
		PageSizeMax:         200,
		PayloadTextMaxBytes: 4096,
		PartitionInterval:   24 * time.Hour,
		PartitionAhead:      7 * 24 * time.Hour,
		EventRetention:      30 * 24 * time.Hour,
		AllowedHosts:        hosts,
	}
}

// Services are the real services over one test database, assembled as the
// role assembly does.
type Services struct {
	// DB is the test database; Clock the fake clock every service reads.
	DB    *pgtest.DB
	Clock *clock.Fake
	// Config is the configuration the services were built with.
	Config Config
	// UnitOfWork, Audit and Events are the kernel ports over PostgreSQL.
	UnitOfWork *pg.UnitOfWork
	Audit      *auditpg.Recorder
	Events     *syncpg.Appender
	// Authorizer decides every action (internal/authz).
	Authorizer *azapp.Authorizer
	// Grants gives and revokes grants (authz.Grants).
	Grants *azapp.Grants
	// Identity is the identity use cases, the Authenticator and
	// identity.Principals; IdentityBootstrap creates owners.
	Identity          *identityapp.Service
	IdentityBootstrap *identityapp.Bootstrap
	// Chat is the chat use cases.
	Chat *chatapp.Service
	// Apps is the apps use cases; AppsStore its store (also
	// apps.Installations and identity.AppFactsSource).
	Apps      *appsapp.Service
	AppsStore *appspg.Store
}

// NewServices assembles the services over db with the fake clock clk and
// configuration cfg, and creates the event log partitions. hooks, when not
// nil, builds the webhook work's installation hooks from the assembled
// services (see WithHooks). It fails the test on any error.
func NewServices(t testing.TB, db *pgtest.DB, clk *clock.Fake, cfg Config, hooks func(*Services) appsapp.InstallationHooks) *Services {
	t.Helper()
	s := &Services{
		DB: db, Clock: clk, Config: cfg,
		UnitOfWork: pg.NewUnitOfWork(db.App, 3, 5*time.Second),
		Audit:      auditpg.New(db.App, clk),
		AppsStore:  appspg.New(db.App),
	}
	maint, err := syncpg.NewMaintainer(db.App, syncpg.MaintainerOptions{
		PartitionInterval: cfg.PartitionInterval, PartitionAhead: cfg.PartitionAhead, EventRetention: cfg.EventRetention})
	require.NoError(t, err)
	_, err = maint.Run(context.Background(), clk.Now())
	require.NoError(t, err)
	s.Events, err = syncpg.NewAppender(clk, syncpg.AppenderOptions{PayloadTextMaxBytes: cfg.PayloadTextMaxBytes})
	require.NoError(t, err)

	chatStore := chatpg.NewStore(db.App)
	s.Authorizer, err = azapp.NewAuthorizer(azapp.Deps{
		Grants: azpg.NewGrants(db.App), Memberships: chatStore, Recorder: s.Audit, Clock: clk,
	}, azapp.Options{StepUpMaxAge: cfg.StepUpMaxAge})
	require.NoError(t, err)
	s.Grants, err = azapp.NewGrants(azpg.NewGrants(db.App), clk)
	require.NoError(t, err)

	idOpts := identityapp.Options{SessionTTL: cfg.SessionTTL, PasswordMinLength: cfg.PasswordMinLength, PasswordParams: cfg.PasswordParams}
	idStore := identitypg.New(db.App)
	s.Identity, err = identityapp.New(identityapp.Deps{
		UnitOfWork: s.UnitOfWork, Store: idStore, Authorizer: s.Authorizer, Audit: s.Audit, AppFacts: s.AppsStore, Clock: clk,
	}, idOpts)
	require.NoError(t, err)
	s.IdentityBootstrap, err = identityapp.NewBootstrap(s.UnitOfWork, idStore, s.Audit, clk, nil, idOpts)
	require.NoError(t, err)

	s.Chat, err = chatapp.NewService(chatapp.Deps{
		Store: chatStore, UnitOfWork: s.UnitOfWork, Authorizer: s.Authorizer, Events: s.Events, Audit: s.Audit, Clock: clk,
	}, chatapp.Options{MessageMaxBytes: cfg.MessageMaxBytes, NameMaxChars: cfg.NameMaxChars,
		PageSizeDefault: cfg.PageSizeDefault, PageSizeMax: cfg.PageSizeMax})
	require.NoError(t, err)

	deps := appsapp.Deps{
		UnitOfWork: s.UnitOfWork, Authorizer: s.Authorizer, Audit: s.Audit, Events: s.Events,
		Principals: s.Identity, Grants: s.Grants, Store: s.AppsStore, Clock: clk,
	}
	if hooks != nil {
		deps.Hooks = hooks(s)
	}
	s.Apps, err = appsapp.New(deps, appsapp.Options{AllowedHosts: cfg.AllowedHosts})
	require.NoError(t, err)
	return s
}
