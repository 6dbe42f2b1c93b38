package harness_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	chatapp "bothy/server/internal/chat/app"
	identityapp "bothy/server/internal/identity/app"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/test/harness"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestMatrixWorld proves the world: the principals carry what their
// tokens authenticate as, and the rules of 07 11.1 hold through the real
// Authenticator, authorizer and use cases.
func TestMatrixWorld(t *testing.T) {
	t.Parallel()
	w := harness.BuildMatrixWorld(t, pgtest.New(t))
	s := w.Services

	t.Run("the people are who their sessions say", func(t *testing.T) {
		require.True(t, w.Robin.Principal.IsOwner())
		require.Equal(t, harness.Start, w.Robin.Principal.SteppedUpAt, "Robin's step-up is fresh")
		for _, p := range []harness.Person{w.Alex, w.Sam} {
			require.Equal(t, actor.KindPerson, p.Principal.Kind)
			require.Equal(t, actor.RoleMember, p.Principal.Role)
		}
	})

	t.Run("Tracker is installed with its scopes, event subscriptions and G-6", func(t *testing.T) {
		p := w.Tracker.Principal
		require.Equal(t, actor.KindApp, p.Kind)
		require.Equal(t, w.Tracker.PrincipalID, p.ID)
		require.Equal(t, w.Tracker.InstallationID, p.InstallationID)
		require.True(t, p.InstallationActive)
		require.Equal(t, harness.TrackerScopes, p.GrantedScopes)
		inst, ok, err := s.AppsStore.Installation(context.Background(), w.Tracker.InstallationID, apps.NoLock)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, apps.InstallationActive, inst.State)
		require.Equal(t, []string{"message.created"}, inst.EventSubscriptions)
		require.Equal(t, w.Support, w.G6.SpaceID)
		require.Equal(t, w.Eskalation, w.G6.ChannelID)
		require.Equal(t, w.Tracker.PrincipalID, w.G6.SubjectID)
	})

	t.Run("Tracker posts in Support/Eskalation with its app token", func(t *testing.T) {
		posted, err := s.Chat.PostMessage(w.As(t, w.Tracker.Token), chatapp.PostMessage{ChannelID: w.Eskalation, Text: "Ticket opened for Sam"})
		require.NoError(t, err)
		require.Equal(t, w.Tracker.PrincipalID, posted.Message.AuthorID)
	})

	t.Run("Tracker cannot see Support/Allgemein", func(t *testing.T) {
		ctx := w.As(t, w.Tracker.Token)
		_, err := s.Chat.PostMessage(ctx, chatapp.PostMessage{ChannelID: w.Allgemein, Text: "Hello Alex"})
		require.Equal(t, errs.CodeNotFound, errs.CodeOf(err))
		_, err = s.Chat.ListMessages(ctx, chatapp.ListMessages{ChannelID: w.Allgemein})
		require.Equal(t, errs.CodeNotFound, errs.CodeOf(err))
	})

	t.Run("Alex cannot see Marketing but sees Support", func(t *testing.T) {
		ctx := w.As(t, w.Alex.Token)
		_, err := s.Chat.ListChannels(ctx, w.Marketing)
		require.Equal(t, errs.CodeNotFound, errs.CodeOf(err))
		channels, err := s.Chat.ListChannels(ctx, w.Support)
		require.NoError(t, err)
		require.Len(t, channels, 2)
		spaces, err := s.Chat.ListSpaces(ctx)
		require.NoError(t, err)
		require.Len(t, spaces, 1, "Support only")
		require.Equal(t, w.Support, spaces[0].ID)
	})

	t.Run("a personal token of Robin never passes step-up", func(t *testing.T) {
		p := w.Authenticate(t, w.RobinPersonalToken)
		require.Equal(t, w.Robin.ID, p.ID)
		require.True(t, p.ViaPersonalToken)
		d, err := s.Authorizer.Authorize(authorize.Filter(context.Background()), p, authorize.PersonManage, authorize.Resource{Kind: authorize.KindPerson})
		require.NoError(t, err)
		require.False(t, d.Allowed())
		_, err = s.Identity.CreatePerson(actor.With(context.Background(), p), identityapp.CreatePerson{
			Email: "robin.two@example.com", DisplayName: "Robin", Password: harness.Password})
		require.Equal(t, errs.CodeNotFound, errs.CodeOf(err), "owner-only actions are invisible to a personal token")
		// Even a principal that claims a fresh step-up does not pass when
		// it came through a personal token.
		p.SteppedUpAt = w.Clock.Now()
		d, err = s.Authorizer.Authorize(authorize.Filter(context.Background()), p, authorize.AppInstall, authorize.Resource{Kind: authorize.KindApp, ID: w.Tracker.ID})
		require.NoError(t, err)
		require.False(t, d.Allowed())
	})

	t.Run("Robin's session passes step-up", func(t *testing.T) {
		d, err := s.Authorizer.Authorize(authorize.Filter(context.Background()), w.Authenticate(t, w.Robin.Token),
			authorize.AppInstall, authorize.Resource{Kind: authorize.KindApp, ID: w.Tracker.ID})
		require.NoError(t, err)
		require.True(t, d.Allowed())
	})
}

// TestMatrixWorldsAreIndependent: two worlds in two databases share
// nothing, so tests using them run in parallel.
func TestMatrixWorldsAreIndependent(t *testing.T) {
	t.Parallel()
	a := harness.BuildMatrixWorld(t, pgtest.New(t))
	b := harness.BuildMatrixWorld(t, pgtest.New(t))
	require.NotEqual(t, a.Tracker.ID, b.Tracker.ID)
	_, err := b.Services.Identity.Authenticate(context.Background(), a.Tracker.Token)
	require.Equal(t, errs.CodeUnauthorized, errs.CodeOf(err), "a token of one world is unknown in the other")
}

// BenchmarkBuildMatrixWorld measures one world, the database clone
// included: the cost every test that uses it pays once.
func BenchmarkBuildMatrixWorld(b *testing.B) {
	for b.Loop() {
		harness.BuildMatrixWorld(b, pgtest.New(b))
	}
}
