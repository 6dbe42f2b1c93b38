package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/authz"
	azpg "bothy/server/internal/authz/adapters/postgres"
	azapp "bothy/server/internal/authz/app"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

func grantsOf(t *testing.T, b *testBundle) *azapp.Grants {
	t.Helper()
	g, err := azapp.NewGrants(azpg.NewGrants(b.db.App), b.clock, nil)
	require.NoError(t, err)
	return g
}

func TestGrantAndRevoke(t *testing.T) {
	t.Parallel()
	b := setup(t)
	g := grantsOf(t, b)
	w := b.world

	list, err := g.ListForPrincipal(background, w.Tracker.ID)
	require.NoError(t, err)
	require.Equal(t, []authz.Grant{w.G6}, list)

	b.clock.Advance(time.Second)
	space, err := g.Grant(background, authz.NewGrant{SubjectID: w.Tracker.ID, Level: authz.LevelRead, SpaceID: w.Marketing, CreatedBy: w.Robin.ID})
	require.NoError(t, err)
	require.True(t, space.ChannelID.IsZero(), "a grant without channel covers the whole space")
	require.Equal(t, b.clock.Now(), space.CreatedAt)

	list, err = g.ListForPrincipal(background, w.Tracker.ID)
	require.NoError(t, err)
	require.Equal(t, []authz.Grant{w.G6, space}, list, "ordered by created_at")

	require.Equal(t, errs.NotFound(), g.Revoke(background, w.Alex.ID, space.ID), "a grant of another principal answers like an unknown one")
	require.NoError(t, g.Revoke(background, w.Tracker.ID, space.ID))
	require.Equal(t, errs.NotFound(), g.Revoke(background, w.Tracker.ID, space.ID))

	none, err := g.ListForPrincipal(background, w.Alex.ID)
	require.NoError(t, err)
	require.Equal(t, []authz.Grant{}, none)
}

func TestGrantRefusesBadInputAndChangesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	g := grantsOf(t, b)
	w := b.world
	for _, tc := range []struct {
		name     string
		in       authz.NewGrant
		code     errs.Code
		reason   string
		pointers []string
	}{
		{"an unknown level", authz.NewGrant{Level: "owner", SpaceID: w.Support}, errs.CodeValidationFailed, "", []string{"/level"}},
		{"no space", authz.NewGrant{Level: authz.LevelRead}, errs.CodeValidationFailed, "", []string{"/space_id"}},
		{"an unknown space", authz.NewGrant{Level: authz.LevelRead, SpaceID: ids.New()}, errs.CodeValidationFailed, "", []string{"/space_id"}},
		{"a channel of another space", authz.NewGrant{Level: authz.LevelRead, SpaceID: w.Marketing, ChannelID: w.Eskalation},
			errs.CodeValidationFailed, "", []string{"/channel_id"}},
		{"an unknown channel", authz.NewGrant{Level: authz.LevelRead, SpaceID: w.Support, ChannelID: ids.New()},
			errs.CodeValidationFailed, "", []string{"/channel_id"}},
		{"a second grant on the same place", authz.NewGrant{Level: authz.LevelRead, SpaceID: w.Support, ChannelID: w.Eskalation},
			errs.CodeConflict, "grant_exists", nil},
		{"an unknown subject", authz.NewGrant{SubjectID: ids.New(), Level: authz.LevelRead, SpaceID: w.Support},
			errs.CodeNotFound, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := tc.in
			if in.SubjectID.IsZero() {
				in.SubjectID = w.Tracker.ID
			}
			in.CreatedBy = w.Robin.ID
			_, err := g.Grant(background, in)
			e, ok := errs.As(err)
			require.True(t, ok, "got %v", err)
			require.Equal(t, tc.code, e.Code)
			require.Equal(t, tc.reason, e.Reason)
			var pointers []string
			for _, f := range e.Fields {
				pointers = append(pointers, f.Pointer)
			}
			require.Equal(t, tc.pointers, pointers)
		})
	}
	t.Cleanup(func() {
		var n int
		require.NoError(t, b.db.App.QueryRow(context.Background(), `SELECT count(*) FROM grants`).Scan(&n))
		require.Equal(t, 1, n, "only G-6 exists")
	})
}

func TestGrantNeedsSubjectAndCreator(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := grantsOf(t, b).Grant(background, authz.NewGrant{Level: authz.LevelRead, SpaceID: b.world.Support})
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
}
