package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/authz"
	azpg "bothy/server/internal/authz/adapters/postgres"
	azapp "bothy/server/internal/authz/app"
	"bothy/server/internal/authz/authztest"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/watched"
	"bothy/server/internal/kernel/watched/watchedtest"
)

// cachedBundle is setup with the cache of standings on and its hub, whose
// watch the test starts.
type cachedBundle struct {
	*testBundle
	changes *watched.Hub
	grants  *azapp.Grants
}

func setupCached(t *testing.T) *cachedBundle {
	t.Helper()
	b := setup(t)
	changes := &watched.Hub{}
	grants, err := azapp.NewGrants(azpg.NewGrants(b.db.App), b.clock, changes)
	require.NoError(t, err)
	b.az = authztest.NewCachingAuthorizer(t, b.db, b.clock, changes)
	return &cachedBundle{testBundle: b, changes: changes, grants: grants}
}

// allowed decides p's action on r in a unit of work of its own.
func (b *cachedBundle) allowed(t *testing.T, p actor.Principal, action authorize.Action, r authorize.Resource) bool {
	t.Helper()
	var d authorize.Decision
	require.NoError(t, b.uow.Do(background, func(ctx context.Context) error {
		var err error
		d, err = b.az.Authorize(authorize.Filter(ctx), p, action, r)
		return err
	}))
	return d.Allowed()
}

// TestStandingCacheAnswersFromMemory: while the watch listens, a person's
// standing is read once; a change the cache does not hear leaves the
// decision as it was, and a reported change ends it. An app's standing is
// always read (the check before every delivery attempt, AZ-M49).
func TestStandingCacheAnswersFromMemory(t *testing.T) {
	t.Parallel()
	b := setupCached(t)
	w := b.world
	reported := watchedtest.NewReported(b.changes, true)
	b.db.WatchChanges(t, reported)
	allgemein := channel(w.Support, w.Allgemein)
	eskalation := channel(w.Support, w.Eskalation)

	require.True(t, b.allowed(t, w.Alex, authorize.MessagePost, allgemein))
	require.True(t, b.allowed(t, w.Tracker, authorize.MessagePost, eskalation))
	_, err := b.db.Owner.Exec(background, `DELETE FROM space_members WHERE principal_id = $1`, w.Alex.ID)
	require.NoError(t, err)
	_, err = b.db.Owner.Exec(background, `DELETE FROM grants WHERE id = $1`, w.G6.ID)
	require.NoError(t, err)
	reported.AwaitChange(t, w.Alex.ID)
	reported.AwaitChange(t, w.Tracker.ID)

	require.True(t, b.allowed(t, w.Alex, authorize.MessagePost, allgemein), "answered from memory: the change was not passed on")
	require.False(t, b.allowed(t, w.Tracker, authorize.MessagePost, eskalation), "an app's grants are read every time")
	b.changes.Changed(w.Alex.ID)
	require.False(t, b.allowed(t, w.Alex, authorize.MessagePost, allgemein), "the reported change ends it")
}

// TestStandingCacheHearsChangesMadeElsewhere: every change of a person's
// grants or memberships, by any write path (here SQL outside the use
// cases, as another process or an operator would), reaches the cache at
// its commit.
func TestStandingCacheHearsChangesMadeElsewhere(t *testing.T) {
	t.Parallel()
	const (
		addMember = `INSERT INTO space_members (space_id, principal_id, level, created_at) VALUES ($1, $2, 'read', now())`
		addGrant  = `INSERT INTO grants (id, subject_principal_id, level, space_id, created_by, created_at)
			VALUES (gen_random_uuid(), $2, 'read', $1, $2, now())`
	)
	for _, tc := range []struct {
		name string
		// given runs before the watch; then Sam may read Marketing
		// exactly when it is set, and exactly when not after change.
		given, change string
	}{
		{"a membership added", "", addMember},
		{"a grant given", "", addGrant},
		{"a membership ended", addMember, `DELETE FROM space_members WHERE space_id = $1 AND principal_id = $2`},
		{"a membership handed to another", addMember, `UPDATE space_members SET principal_id = $3 WHERE space_id = $1 AND principal_id = $2`},
		{"a grant revoked", addGrant, `DELETE FROM grants WHERE space_id = $1 AND subject_principal_id = $2`},
		{"every grant truncated", addGrant, `TRUNCATE grants`},
		{"every membership truncated", addMember, `TRUNCATE space_members CASCADE`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupCached(t)
			w := b.world
			args := []any{w.Marketing, w.Sam.ID, w.Alex.ID}
			if tc.given != "" {
				_, err := b.db.Owner.Exec(background, tc.given, args[:2]...)
				require.NoError(t, err)
			}
			reported := watchedtest.NewReported(b.changes, false)
			b.db.WatchChanges(t, reported)
			marketing := authorize.Resource{Kind: authorize.KindSpace, ID: w.Marketing, SpaceID: w.Marketing}
			before := tc.given != ""
			require.Equal(t, before, b.allowed(t, w.Sam, authorize.SpaceRead, marketing))
			require.Equal(t, before, b.allowed(t, w.Sam, authorize.SpaceRead, marketing), "now from memory")

			_, err := b.db.Owner.Exec(background, tc.change, args[:params(tc.change)]...)
			require.NoError(t, err)
			want := w.Sam.ID
			if strings.HasPrefix(tc.change, "TRUNCATE") {
				want = ids.Zero
			}
			reported.AwaitChange(t, want)
			require.Equal(t, !before, b.allowed(t, w.Sam, authorize.SpaceRead, marketing))
		})
	}
}

// params returns the highest $n of a statement of at most three.
func params(statement string) int {
	for n := 3; n > 0; n-- {
		if strings.Contains(statement, fmt.Sprintf("$%d", n)) {
			return n
		}
	}
	return 0
}

// TestStandingCacheForgetsAtOnceInItsOwnProcess: a grant given or revoked
// through the use case applies to the next decision of the same process
// at once, without waiting for the notification (which this test never
// passes on).
func TestStandingCacheForgetsAtOnceInItsOwnProcess(t *testing.T) {
	t.Parallel()
	b := setupCached(t)
	w := b.world
	b.db.WatchChanges(t, watchedtest.NewReported(b.changes, true))
	marketing := authorize.Resource{Kind: authorize.KindSpace, ID: w.Marketing, SpaceID: w.Marketing}
	require.False(t, b.allowed(t, w.Sam, authorize.SpaceRead, marketing))

	var g authz.Grant
	require.NoError(t, b.uow.Do(background, func(ctx context.Context) error {
		var err error
		g, err = b.grants.Grant(ctx, authz.NewGrant{SubjectID: w.Sam.ID, Level: authz.LevelRead, SpaceID: w.Marketing, CreatedBy: w.Robin.ID})
		return err
	}))
	require.True(t, b.allowed(t, w.Sam, authorize.SpaceRead, marketing), "the grant applies at once")

	require.NoError(t, b.uow.Do(background, func(ctx context.Context) error {
		return b.grants.Revoke(ctx, w.Sam.ID, g.ID)
	}))
	require.False(t, b.allowed(t, w.Sam, authorize.SpaceRead, marketing), "the revocation applies at once")
}

// TestStandingCacheServesNothingWithoutItsWatch: before the watch listens
// every standing is read.
func TestStandingCacheServesNothingWithoutItsWatch(t *testing.T) {
	t.Parallel()
	b := setupCached(t)
	w := b.world
	allgemein := channel(w.Support, w.Allgemein)
	require.True(t, b.allowed(t, w.Alex, authorize.MessagePost, allgemein))
	_, err := b.db.Owner.Exec(background, `DELETE FROM space_members WHERE principal_id = $1`, w.Alex.ID)
	require.NoError(t, err)
	require.False(t, b.allowed(t, w.Alex, authorize.MessagePost, allgemein))
}
