package harness

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	appsapp "bothy/server/internal/apps/app"
	appsdomain "bothy/server/internal/apps/domain"
	"bothy/server/internal/authz"
	chatapp "bothy/server/internal/chat/app"
	chatdomain "bothy/server/internal/chat/domain"
	identityapp "bothy/server/internal/identity/app"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/wire"
)

// Password is the password of Robin, Alex and Sam.
const Password = "correct horse battery staple"

// TrackerScopes are the scopes Tracker requests and is granted.
var TrackerScopes = []string{"events:subscribe", "messages:read", "messages:write"}

// TrackerEvents are Tracker's manifest events and event subscriptions.
var TrackerEvents = []string{"message.created"}

// TrackerManifest returns the manifest of Tracker: TrackerScopes,
// TrackerEvents and webhook delivery to
// https://hooks.example.com/bothy/events.
func TrackerManifest() appsdomain.Manifest {
	return appsdomain.Manifest{
		Name:        "Tracker",
		Description: "Turns escalations into tickets.",
		Scopes:      append([]string(nil), TrackerScopes...),
		Events:      append([]string(nil), TrackerEvents...),
		Delivery:    appsdomain.Delivery{Mode: appsdomain.DeliveryWebhook, EventsURL: "https://hooks.example.com/bothy/events"},
	}
}

// Person is a person of the world with an open session.
type Person struct {
	// ID is the person's principal ID; Email the sign-in address.
	ID    ids.ID
	Email string
	// Token is the session token (signed in at the clock's start, so the
	// session counts as stepped up then).
	Token string
	// Principal is what Token authenticated as when the world was built.
	// Use World.As for a principal with the facts of now.
	Principal actor.Principal
}

// App is an installed app of the world.
type App struct {
	// ID is the app; PrincipalID its principal; InstallationID its
	// installation.
	ID, PrincipalID, InstallationID ids.ID
	// Token is the app token returned once by installApp.
	Token string
	// Principal is what Token authenticated as when the world was built.
	Principal actor.Principal
}

// World is the test world of docs/spec/07-permissions.md 10 and 11.1.
type World struct {
	// Services are the real services the world was built with.
	Services *Services
	// Clock is the fake clock of every service; it starts at Start unless
	// WithClock gave another one.
	Clock *clock.Fake
	// Robin is the owner, Alex and Sam are members of Support (write).
	Robin, Alex, Sam Person
	// RobinPersonalToken is a personal token of Robin: it authenticates as
	// Robin but never satisfies step-up and never reaches owner-only
	// actions.
	RobinPersonalToken string
	// Support (channels Allgemein and Eskalation) and Marketing (no
	// channel, no members) are the spaces.
	Support, Allgemein, Eskalation, Marketing ids.ID
	// Tracker is registered, installed with TrackerScopes and the event
	// subscriptions TrackerEvents, and holds the grant G6.
	Tracker App
	// G6 is Tracker's grant: write on Support/Eskalation.
	G6 authz.Grant
}

type options struct {
	clock    *clock.Fake
	config   func(*wire.Config)
	hooks    func(*Services) appsapp.InstallationHooks
	delivery *appsdomain.Delivery
}

// Option changes how BuildMatrixWorld builds the world.
type Option func(*options)

// WithClock makes every service read clk (default: a fake clock at Start).
func WithClock(clk *clock.Fake) Option { return func(o *options) { o.clock = clk } }

// WithConfig changes the test configuration (the defaults with TestConfig
// applied) before the modules are built, for example
// Webhook.AllowedHosts for a TLS test receiver on 127.0.0.1.
func WithConfig(change func(*wire.Config)) Option { return func(o *options) { o.config = change } }

// WithHooks gives the apps use cases the installation hooks of the webhook
// work, built from the assembled services, so Tracker's install already
// runs them.
func WithHooks(build func(*Services) appsapp.InstallationHooks) Option {
	return func(o *options) { o.hooks = build }
}

// WithTrackerDelivery replaces the delivery member of Tracker's manifest,
// for example with the events_url of a TLS test receiver on 127.0.0.1
// (listed with WithConfig in AllowedHosts).
func WithTrackerDelivery(d appsdomain.Delivery) Option {
	return func(o *options) { o.delivery = &d }
}

// BuildMatrixWorld builds the world in db through the real use cases, as
// the people of the world would with the API:
//
//  1. Robin is created as the first owner (the CLI bootstrap) and signs in;
//     Robin creates the members Alex and Sam, who sign in.
//  2. Robin creates the spaces Support and Marketing and the channels
//     Allgemein and Eskalation in Support, and adds Alex and Sam to Support
//     with level write.
//  3. Robin registers Tracker (TrackerManifest), installs it with
//     TrackerScopes and the event subscriptions TrackerEvents (which gives
//     the app token) and grants it G-6: write on Support/Eskalation.
//  4. Robin creates a personal token.
//
// Everything happens at the clock's current time, so Robin's step-up is
// fresh for identity.step_up_max_age. It fails the test on any error. One call
// per test; it costs a few dozen statements and three cheap password
// hashes.
func BuildMatrixWorld(t testing.TB, db *pgtest.DB, opts ...Option) *World {
	t.Helper()
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	if o.clock == nil {
		o.clock = clock.NewFake(Start)
	}
	s := NewServices(t, db, o.clock, o.config, o.hooks)
	w := &World{Services: s, Clock: o.clock}
	bg := context.Background()

	_, err := s.IdentityBootstrap.CreateOwner(bg, identityapp.CreatePerson{Email: "robin@example.com", DisplayName: "Robin", Password: Password})
	require.NoError(t, err)
	w.Robin = w.signIn(t, "robin@example.com")
	robin := actor.With(bg, w.Robin.Principal)
	for _, m := range []struct {
		into        *Person
		email, name string
	}{{&w.Alex, "alex@example.com", "Alex"}, {&w.Sam, "sam@example.com", "Sam"}} {
		_, err := s.Identity.CreatePerson(robin, identityapp.CreatePerson{Email: m.email, DisplayName: m.name, Password: Password, Role: actor.RoleMember})
		require.NoError(t, err)
		*m.into = w.signIn(t, m.email)
	}

	space := func(name string) ids.ID {
		sp, err := s.Chat.CreateSpace(robin, chatapp.CreateSpace{Name: name})
		require.NoError(t, err)
		return sp.ID
	}
	channel := func(spaceID ids.ID, name string) ids.ID {
		c, err := s.Chat.CreateChannel(robin, chatapp.CreateChannel{SpaceID: spaceID, Name: name})
		require.NoError(t, err)
		return c.ID
	}
	w.Support, w.Marketing = space("Support"), space("Marketing")
	w.Allgemein, w.Eskalation = channel(w.Support, "Allgemein"), channel(w.Support, "Eskalation")
	for _, p := range []Person{w.Alex, w.Sam} {
		_, err := s.Chat.AddSpaceMember(robin, chatapp.AddSpaceMember{SpaceID: w.Support, PersonID: p.ID, Level: chatdomain.LevelWrite})
		require.NoError(t, err)
	}

	manifest := TrackerManifest()
	if o.delivery != nil {
		manifest.Delivery = *o.delivery
	}
	tracker, err := s.Apps.RegisterApp(robin, appsapp.RegisterApp{Manifest: manifest})
	require.NoError(t, err)
	installed, err := s.Apps.InstallApp(robin, appsapp.InstallApp{AppID: tracker.ID, Scopes: TrackerScopes, EventSubscriptions: TrackerEvents})
	require.NoError(t, err)
	w.G6, err = s.Apps.CreateAppGrant(robin, appsapp.CreateAppGrant{AppID: tracker.ID, SpaceID: w.Support, ChannelID: w.Eskalation, Level: authz.LevelWrite})
	require.NoError(t, err)
	w.Tracker = App{
		ID: tracker.ID, PrincipalID: tracker.PrincipalID, InstallationID: installed.Installation.ID,
		Token: installed.AppToken, Principal: w.Authenticate(t, installed.AppToken),
	}

	pt, err := s.Identity.CreatePersonalToken(robin, identityapp.CreatePersonalToken{Name: "Robin's script"})
	require.NoError(t, err)
	w.RobinPersonalToken = pt.Token
	return w
}

// signIn signs the person with email in with Password.
func (w *World) signIn(t testing.TB, email string) Person {
	t.Helper()
	sess, err := w.Services.Identity.SignIn(context.Background(), identityapp.SignIn{Email: email, Password: Password})
	require.NoError(t, err)
	p := w.Authenticate(t, sess.Token)
	return Person{ID: p.ID, Email: email, Token: sess.Token, Principal: p}
}

// Authenticate returns the principal of token through the real
// Authenticator, with the facts of now (role, step-up time, installation
// state and scopes). It fails the test when the token does not
// authenticate; use Services.Identity.Authenticate to test that.
func (w *World) Authenticate(t testing.TB, token string) actor.Principal {
	t.Helper()
	p, err := w.Services.Identity.Authenticate(context.Background(), token)
	require.NoError(t, err)
	return p
}

// As returns a context acting as the principal token authenticates as now,
// the way the HTTP chain puts it into a request.
func (w *World) As(t testing.TB, token string) context.Context {
	t.Helper()
	return actor.With(context.Background(), w.Authenticate(t, token))
}
