package app_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/app"
	"bothy/server/internal/authz"
	chatapp "bothy/server/internal/chat/app"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// grantOn is the createAppGrant input for a space-wide grant to Tracker.
func grantOn(b *testBundle, spaceID ids.ID, level authz.Level) app.CreateAppGrant {
	return app.CreateAppGrant{AppID: b.Tracker.ID, SpaceID: spaceID, Level: level}
}

func TestAppGrants(t *testing.T) {
	t.Parallel()
	b := setup(t)
	list, err := b.svc.ListAppGrants(b.robin(t), b.Tracker.ID)
	require.NoError(t, err)
	require.Equal(t, []authz.Grant{b.G6}, list)
	require.Equal(t, authz.LevelWrite, b.G6.Level)

	b.Clock.Advance(time.Minute) // grants list by created_at, then id
	g, err := b.svc.CreateAppGrant(b.robin(t), grantOn(b, b.Support, authz.LevelRead))
	require.NoError(t, err)
	require.Equal(t, b.Tracker.PrincipalID, g.SubjectID)
	require.Equal(t, b.Support, g.SpaceID)
	require.True(t, g.ChannelID.IsZero(), "space-wide")
	require.Equal(t, b.Robin.ID, g.CreatedBy)

	list, err = b.svc.ListAppGrants(b.robin(t), b.Tracker.ID)
	require.NoError(t, err)
	require.Equal(t, []authz.Grant{b.G6, g}, list, "oldest first")

	t.Run("the new grant applies at the next request", func(t *testing.T) {
		_, err := b.Services.Chat.ListMessages(b.As(t, b.Tracker.Token), chatapp.ListMessages{ChannelID: b.Allgemein})
		require.NoError(t, err, "read on Support makes Allgemein readable")
	})

	t.Run("a second grant on the same place is a conflict", func(t *testing.T) {
		_, err := b.svc.CreateAppGrant(b.robin(t), grantOn(b, b.Support, authz.LevelWrite))
		require.Equal(t, errs.CodeConflict, errs.CodeOf(err))
	})

	t.Run("a bad level or an unknown space is refused", func(t *testing.T) {
		_, err := b.svc.CreateAppGrant(b.robin(t), grantOn(b, b.Support, "owner"))
		requireField(t, err, errs.CodeValidationFailed, "/level", "enum")
		_, err = b.svc.CreateAppGrant(b.robin(t), grantOn(b, ids.New(), authz.LevelRead))
		require.Equal(t, errs.CodeValidationFailed, errs.CodeOf(err))
	})

	require.NoError(t, b.svc.DeleteAppGrant(b.robin(t), b.Tracker.ID, b.G6.ID))

	t.Run("a revoked grant ends at once", func(t *testing.T) {
		_, err := b.Services.Chat.PostMessage(b.As(t, b.Tracker.Token), chatapp.PostMessage{ChannelID: b.Eskalation, Text: "Ticket"})
		require.Equal(t, errs.CodeForbidden, errs.CodeOf(err), "read on Support remains, write on Eskalation is gone")
	})

	t.Run("an unknown or already revoked grant is not found", func(t *testing.T) {
		require.Equal(t, errs.CodeNotFound, errs.CodeOf(b.svc.DeleteAppGrant(b.robin(t), b.Tracker.ID, b.G6.ID)))
		require.Equal(t, errs.CodeNotFound, errs.CodeOf(b.svc.DeleteAppGrant(b.robin(t), b.Tracker.ID, ids.New())))
	})

	t.Run("a grant of another app is not found through this one", func(t *testing.T) {
		helper := b.helper(t)
		_, err := b.svc.InstallApp(b.robin(t), app.InstallApp{AppID: helper.ID})
		require.NoError(t, err)
		require.Equal(t, errs.CodeNotFound, errs.CodeOf(b.svc.DeleteAppGrant(b.robin(t), helper.ID, g.ID)))
	})

	t.Run("grant changes are audited", func(t *testing.T) {
		entries := b.allows(t, "app.grant.manage", b.Tracker.ID)
		require.Len(t, entries, 3, "G-6 by the world, read on Support, the revocation of G-6")
		details := make([]map[string]any, 0, len(entries))
		for _, e := range entries {
			details = append(details, e.Details)
		}
		// Entries of one instant of the fake clock have no order.
		require.ElementsMatch(t, []map[string]any{
			{"grant_id": b.G6.ID.String(), "change": "created", "level": "write",
				"space_id": b.Support.String(), "channel_id": b.Eskalation.String()},
			{"grant_id": g.ID.String(), "change": "created", "level": "read", "space_id": b.Support.String()},
			{"grant_id": b.G6.ID.String(), "change": "deleted", "level": "write",
				"space_id": b.Support.String(), "channel_id": b.Eskalation.String()},
		}, details)
	})
}
