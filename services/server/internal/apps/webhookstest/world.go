// Package webhookstest builds the test world of docs/spec/07-permissions.md
// 10 and 11.1 for the integration tests of the owner side of outgoing
// webhooks: every module assembled by wire.BuildModules exactly as a process
// assembles it (the webhook use cases included, as the installation hooks of
// the apps module), over a pgtest database, a fake clock and generated
// secrets; then Robin, Alex and Sam signed in, the spaces and channels, and
// the app Tracker registered with webhook delivery, installed and granted
// G-6, all through the real use cases.
//
// It stands in for services/server/test/harness (BuildMatrixWorld of M1-71)
// until that one assembles the webhook work too; the fields carry the
// harness's names so tests move over unchanged.
package webhookstest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric/noop"

	appsjobs "bothy/server/internal/apps/adapters/jobs"
	appsapp "bothy/server/internal/apps/app"
	appsdomain "bothy/server/internal/apps/domain"
	"bothy/server/internal/authz"
	chatapp "bothy/server/internal/chat/app"
	chatdomain "bothy/server/internal/chat/domain"
	idpg "bothy/server/internal/identity/adapters/postgres"
	idapp "bothy/server/internal/identity/app"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/jobs"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/platform/secrets/stack"
	"bothy/server/internal/wire"
)

// Start is the instant the fake clock shows first.
var Start = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// Password is the password of Robin, Alex and Sam.
const Password = "correct horse battery staple"

// TrackerEventsURL is the events_url of Tracker's manifest.
const TrackerEventsURL = "https://hooks.example.com/bothy/events"

// TrackerScopes and TrackerEvents are Tracker's requested and granted
// scopes and event subscriptions.
var (
	TrackerScopes = []string{"events:subscribe", "messages:read", "messages:write"}
	TrackerEvents = []string{"message.created"}
)

// Person is a person of the world with a session opened at Start (so its
// step-up is fresh until identity.step_up_max_age after Start).
type Person struct {
	ID    ids.ID
	Token string
}

// App is an installed app of the world.
type App struct {
	ID, PrincipalID, InstallationID ids.ID
	// Token is the app token returned once by installApp.
	Token string
}

// World is the test world.
type World struct {
	// DB is the test database; Clock the fake clock of every module.
	DB    *pgtest.DB
	Clock *clock.Fake
	// Config is the configuration the modules were built with.
	Config *wire.Config
	// Modules are the modules as wire.BuildModules built them: Webhooks
	// is the webhook use cases, Apps calls them as its hooks.
	Modules *wire.Modules
	// Jobs is the job runtime in role api: apps.webhook_deliver is
	// registered, so the use cases insert jobs, and nothing works them.
	Jobs *jobs.Runtime
	// Robin is the owner; Alex and Sam are members of Support (write).
	Robin, Alex, Sam Person
	// RobinPersonalToken authenticates as Robin but never satisfies
	// step-up and never reaches owner-only actions.
	RobinPersonalToken string
	// Support (channels Allgemein and Eskalation) and Marketing.
	Support, Allgemein, Eskalation, Marketing ids.ID
	// Tracker delivers by webhook to TrackerEventsURL; its install created
	// one subscription.
	Tracker App
	// G6 is Tracker's grant: write on Support/Eskalation.
	G6 authz.Grant
}

// Build builds the world in db. env adds BOTHY_ variables to the test
// configuration (webhook.allowed_hosts lists hooks.example.com and
// hooks.example.com:8443; the cheapest password hashing; sessions that
// outlive ExpireLog). It fails the test on any error.
func Build(t testing.TB, db *pgtest.DB, env ...string) *World {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "secrets")
	require.NoError(t, os.Mkdir(dir, 0o700))
	_, err := stack.Init(dir, nil)
	require.NoError(t, err)
	cfg, err := wire.Load("", append([]string{
		"BOTHY_DATABASE_URL=" + db.AppURL,
		"BOTHY_SECRETS_DIR=" + dir,
		"BOTHY_WEBHOOK_ALLOWED_HOSTS=hooks.example.com,hooks.example.com:8443",
		"BOTHY_IDENTITY_PASSWORD_HASH_MEMORY=8MiB",
		"BOTHY_IDENTITY_PASSWORD_HASH_ITERATIONS=1",
		"BOTHY_IDENTITY_SESSION_TTL=365d",
	}, env...))
	require.NoError(t, err)
	secretsProvider, err := wire.NewSecretsProvider(cfg)
	require.NoError(t, err)

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rt, err := jobs.New(jobs.Options{Role: string(wire.RoleAPI), FetchPollInterval: time.Second,
		FetchCooldown: time.Millisecond, JobTimeout: time.Minute, ShutdownTimeout: time.Second}, jobs.Deps{Pool: db.App, Log: log})
	require.NoError(t, err)
	require.NoError(t, jobs.Register(rt, func(context.Context, jobs.Job[appsjobs.WebhookDeliver]) error {
		t.Error("webhookstest: a job ran in role api")
		return nil
	}, jobs.HandlerOptions{Queue: jobs.QueueDelivery}))

	clk := clock.NewFake(Start)
	m, err := wire.BuildModules(cfg, wire.ModuleDeps{Pool: db.App, Secrets: secretsProvider, Clock: clk,
		Meter: noop.NewMeterProvider(), Jobs: rt.Inserter()})
	require.NoError(t, err)
	require.NoError(t, m.Instance.Ensure(ctx))
	w := &World{DB: db, Clock: clk, Config: cfg, Modules: m, Jobs: rt}
	w.maintainLog(t)
	idOpts, err := wire.IdentityOptions(cfg)
	require.NoError(t, err)
	boot, err := idapp.NewBootstrap(m.UnitOfWork, idpg.New(db.App), m.Audit, clk, nil, idOpts)
	require.NoError(t, err)
	_, err = boot.CreateOwner(ctx, idapp.CreatePerson{Email: "robin@example.com", DisplayName: "Robin", Password: Password})
	require.NoError(t, err)
	w.Robin = w.signIn(t, "robin@example.com")
	robin := w.As(t, w.Robin.Token)
	for _, p := range []struct {
		into        *Person
		email, name string
	}{{&w.Alex, "alex@example.com", "Alex"}, {&w.Sam, "sam@example.com", "Sam"}} {
		_, err := m.Identity.CreatePerson(robin, idapp.CreatePerson{Email: p.email, DisplayName: p.name, Password: Password, Role: actor.RoleMember})
		require.NoError(t, err)
		*p.into = w.signIn(t, p.email)
	}

	space := func(name string) ids.ID {
		s, err := m.Chat.CreateSpace(robin, chatapp.CreateSpace{Name: name})
		require.NoError(t, err)
		return s.ID
	}
	channel := func(spaceID ids.ID, name string) ids.ID {
		c, err := m.Chat.CreateChannel(robin, chatapp.CreateChannel{SpaceID: spaceID, Name: name})
		require.NoError(t, err)
		return c.ID
	}
	w.Support, w.Marketing = space("Support"), space("Marketing")
	w.Allgemein, w.Eskalation = channel(w.Support, "Allgemein"), channel(w.Support, "Eskalation")
	for _, p := range []Person{w.Alex, w.Sam} {
		_, err := m.Chat.AddSpaceMember(robin, chatapp.AddSpaceMember{SpaceID: w.Support, PersonID: p.ID, Level: chatdomain.LevelWrite})
		require.NoError(t, err)
	}

	tracker, err := m.Apps.RegisterApp(robin, appsapp.RegisterApp{Manifest: appsdomain.Manifest{
		Name: "Tracker", Description: "Turns escalations into tickets.",
		Scopes: TrackerScopes, Events: TrackerEvents,
		Delivery: appsdomain.Delivery{Mode: appsdomain.DeliveryWebhook, EventsURL: TrackerEventsURL},
	}})
	require.NoError(t, err)
	installed, err := m.Apps.InstallApp(robin, appsapp.InstallApp{AppID: tracker.ID, Scopes: TrackerScopes, EventSubscriptions: TrackerEvents})
	require.NoError(t, err)
	w.Tracker = App{ID: tracker.ID, PrincipalID: tracker.PrincipalID, InstallationID: installed.Installation.ID, Token: installed.AppToken}
	w.G6, err = m.Grants.Grant(ctx, authz.NewGrant{SubjectID: tracker.PrincipalID, Level: authz.LevelWrite,
		SpaceID: w.Support, ChannelID: w.Eskalation, CreatedBy: w.Robin.ID})
	require.NoError(t, err)

	pt, err := m.Identity.CreatePersonalToken(robin, idapp.CreatePersonalToken{Name: "Robin's script"})
	require.NoError(t, err)
	w.RobinPersonalToken = pt.Token
	return w
}

// signIn opens a session for email with Password.
func (w *World) signIn(t testing.TB, email string) Person {
	t.Helper()
	s, err := w.Modules.Identity.SignIn(context.Background(), idapp.SignIn{Email: email, Password: Password})
	require.NoError(t, err)
	return Person{ID: w.Authenticate(t, s.Token).ID, Token: s.Token}
}

// Authenticate returns the principal token authenticates as now (role,
// step-up time, installation facts), through the real authenticator.
func (w *World) Authenticate(t testing.TB, token string) actor.Principal {
	t.Helper()
	p, err := w.Modules.Identity.Authenticate(context.Background(), token)
	require.NoError(t, err)
	return p
}

// As returns a context acting as the principal token authenticates as now.
func (w *World) As(t testing.TB, token string) context.Context {
	t.Helper()
	return actor.With(context.Background(), w.Authenticate(t, token))
}
