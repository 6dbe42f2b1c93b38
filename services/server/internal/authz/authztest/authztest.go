// Package authztest builds the permission test world of
// docs/spec/07-permissions.md 10 and 11.1 in a pgtest database, and a real
// Authorizer over it, for the integration tests of authz and chat.
//
// Temporary: principals and people are created with plain SQL inserts into
// the tables of migration 00010, because the identity module is built in
// parallel. When the shared test world (BuildMatrixWorld in
// services/server/test/harness) exists, it replaces this package.
package authztest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric"

	"bothy/server/internal/authz"
	azpg "bothy/server/internal/authz/adapters/postgres"
	azapp "bothy/server/internal/authz/app"
	chatpg "bothy/server/internal/chat/adapters/postgres"
	chatdomain "bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/watched"
	"bothy/server/internal/platform/auditpg"
	"bothy/server/internal/platform/pg/pgtest"
)

// StepUpMaxAge is the identity.step_up_max_age of the test authorizer.
const StepUpMaxAge = 10 * time.Minute

// TrackerScopes are the scopes of the app Tracker.
var TrackerScopes = []string{"events:subscribe", "messages:read", "messages:write"}

// World names the principals and rows of the test world.
type World struct {
	// Robin is the owner (in a session, without step-up); Alex and Sam are
	// members with write on Support.
	Robin, Alex, Sam actor.Principal
	// Tracker is an app principal with an active installation, the scopes
	// TrackerScopes and the grant G6.
	Tracker actor.Principal
	// Support (channels Allgemein and Eskalation) and Marketing (no
	// channel) are the spaces.
	Support, Allgemein, Eskalation, Marketing ids.ID
	// G6 is Tracker's grant: write on Support/Eskalation.
	G6 authz.Grant
}

// InsertPerson creates a person principal with role and returns it as an
// actor principal in a session. SQL inserts stand in for the identity
// module (see the package comment).
func InsertPerson(t testing.TB, db *pgtest.DB, name, email string, role actor.Role) actor.Principal {
	t.Helper()
	ctx := context.Background()
	id := ids.New()
	now := time.Now().UTC()
	_, err := db.App.Exec(ctx, `INSERT INTO principals (id, kind, display_name, created_at) VALUES ($1, 'person', $2, $3)`, id, name, now)
	require.NoError(t, err)
	_, err = db.App.Exec(ctx, `INSERT INTO people (principal_id, email, password_hash, role, created_at, updated_at)
		VALUES ($1, $2, 'unusable', $3, $4, $4)`, id, email, string(role), now)
	require.NoError(t, err)
	return actor.Principal{ID: id, Kind: actor.KindPerson, Role: role, SessionID: ids.New()}
}

// InsertApp creates an app principal and returns it with an active
// installation and scopes.
func InsertApp(t testing.TB, db *pgtest.DB, name string, scopes ...string) actor.Principal {
	t.Helper()
	id := ids.New()
	_, err := db.App.Exec(context.Background(),
		`INSERT INTO principals (id, kind, display_name, created_at) VALUES ($1, 'app', $2, $3)`, id, name, time.Now().UTC())
	require.NoError(t, err)
	return actor.Principal{ID: id, Kind: actor.KindApp, InstallationID: ids.New(), InstallationActive: true,
		GrantedScopes: append([]string(nil), scopes...)}
}

// BuildWorld creates the world in db through the real chat and authz
// stores, stamped with clk.
func BuildWorld(t testing.TB, db *pgtest.DB, clk clock.Clock) World {
	t.Helper()
	ctx := context.Background()
	w := World{
		Robin:   InsertPerson(t, db, "Robin", "robin@example.com", actor.RoleOwner),
		Alex:    InsertPerson(t, db, "Alex", "alex@example.com", actor.RoleMember),
		Sam:     InsertPerson(t, db, "Sam", "sam@example.com", actor.RoleMember),
		Tracker: InsertApp(t, db, "Tracker", TrackerScopes...),
	}
	chat := chatpg.NewStore(db.App)
	now := clock.Stamp(clk)
	space := func(name string) ids.ID {
		sp := chatdomain.Space{ID: ids.New(), Name: name, CreatedBy: w.Robin.ID, CreatedAt: now}
		require.NoError(t, chat.InsertSpace(ctx, sp))
		return sp.ID
	}
	channel := func(space ids.ID, name string) ids.ID {
		c := chatdomain.Channel{ID: ids.New(), SpaceID: space, Name: name, CreatedBy: w.Robin.ID, CreatedAt: now}
		require.NoError(t, chat.InsertChannel(ctx, c))
		return c.ID
	}
	w.Support, w.Marketing = space("Support"), space("Marketing")
	w.Allgemein, w.Eskalation = channel(w.Support, "Allgemein"), channel(w.Support, "Eskalation")
	for _, p := range []actor.Principal{w.Alex, w.Sam} {
		require.NoError(t, chat.InsertMember(ctx, chatdomain.Member{SpaceID: w.Support, PersonID: p.ID,
			Level: chatdomain.LevelWrite, CreatedAt: now}))
	}
	grants, err := azapp.NewGrants(azpg.NewGrants(db.App), clk, nil)
	require.NoError(t, err)
	w.G6, err = grants.Grant(ctx, authz.NewGrant{SubjectID: w.Tracker.ID, Level: authz.LevelWrite,
		SpaceID: w.Support, ChannelID: w.Eskalation, CreatedBy: w.Robin.ID})
	require.NoError(t, err)
	return w
}

// NewAuthorizer returns the real Authorizer over db: grants from the
// grants table, memberships from the chat store, denials into
// audit_events, step-up ages against clk and StepUpMaxAge. meter may be
// nil.
func NewAuthorizer(t testing.TB, db *pgtest.DB, clk clock.Clock, meter metric.MeterProvider) *azapp.Authorizer {
	t.Helper()
	return newAuthorizer(t, db, clk, meter, nil, azapp.Options{StepUpMaxAge: StepUpMaxAge})
}

// NewCachingAuthorizer is NewAuthorizer with the cache of persons'
// standings on (a minute, 100 persons; ADR 0103), joined to changes. It
// serves only while a watch reports to changes (pgtest.DB.WatchChanges).
func NewCachingAuthorizer(t testing.TB, db *pgtest.DB, clk clock.Clock, changes *watched.Hub) *azapp.Authorizer {
	t.Helper()
	return newAuthorizer(t, db, clk, nil, changes,
		azapp.Options{StepUpMaxAge: StepUpMaxAge, StandingCacheTTL: time.Minute, StandingCacheEntries: 100})
}

func newAuthorizer(t testing.TB, db *pgtest.DB, clk clock.Clock, meter metric.MeterProvider, changes *watched.Hub, o azapp.Options) *azapp.Authorizer {
	t.Helper()
	az, err := azapp.NewAuthorizer(azapp.Deps{
		Grants:      azpg.NewGrants(db.App),
		Memberships: chatpg.NewStore(db.App),
		Recorder:    auditpg.New(db.App, clk),
		Clock:       clk,
		Meter:       meter,
		Changes:     changes,
	}, o)
	require.NoError(t, err)
	return az
}
