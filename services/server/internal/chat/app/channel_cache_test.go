package app_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/authz/authztest"
	"bothy/server/internal/chat/app"
	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/watched"
	"bothy/server/internal/kernel/watched/watchedtest"
	"bothy/server/internal/platform/pg/pgtest"
)

// setupCached is setupTraced with the caches of an api process on (ADR
// 0103): channels in the Service, persons' standings in its Authorizer,
// both on one hub that the watch reports to through a
// watchedtest.Reported (dropChanges as given).
func setupCached(t testing.TB, trips *pgtest.Trips, dropChanges bool) (*testBundle, *watched.Hub, *watchedtest.Reported) {
	t.Helper()
	db := pgtest.New(t)
	clk := clock.NewFake(start)
	var tracer pgx.QueryTracer
	if trips != nil {
		tracer = trips
	}
	deps := testDeps(t, db, tracer, clk)
	changes := &watched.Hub{}
	deps.Authorizer, deps.Changes = authztest.NewCachingAuthorizer(t, db, clk, changes), changes
	o := testOptions
	o.ChannelCacheTTL, o.ChannelCacheEntries = time.Minute, 100
	svc, err := app.NewService(deps, o)
	require.NoError(t, err)
	b := &testBundle{db: db, clock: clk, world: authztest.BuildWorld(t, db, clk), chat: svc}
	reported := watchedtest.NewReported(changes, dropChanges)
	db.WatchChanges(t, reported)
	return b, changes, reported
}

// TestPostMessageFromMemoryTakesOneRoundTrip (ADR 0103): once the channel
// and the author's standing are in memory, a post reads nothing: its
// writes travel with the BEGIN and the COMMIT in one round trip.
func TestPostMessageFromMemoryTakesOneRoundTrip(t *testing.T) {
	t.Parallel()
	trips := &pgtest.Trips{}
	b, _, _ := setupCached(t, trips, false)
	w := b.world
	trips.Take()
	_, err := b.chat.PostMessage(as(w.Alex), app.PostMessage{ChannelID: w.Allgemein, Text: "Hello Sam"})
	require.NoError(t, err)
	require.Len(t, trips.TakeNames(), 2, "the first post reads the channel and the standing")

	_, err = b.chat.PostMessage(as(w.Alex), app.PostMessage{ChannelID: w.Allgemein, Text: "Hello again"})
	require.NoError(t, err)
	require.Equal(t, [][]string{
		{"begin", "SET LOCAL", "MessageInsert", "EventLogAppend", "commit", "EventLogWake"},
	}, trips.TakeNames())
}

// TestChannelCacheAnswersFromMemoryAndHearsChanges: a channel deleted by
// SQL (another process, an operator) is answered from memory until the
// cache hears of it, and is unknown once it has.
func TestChannelCacheAnswersFromMemoryAndHearsChanges(t *testing.T) {
	t.Parallel()
	b, changes, reported := setupCached(t, nil, true)
	w := b.world
	_, err := b.chat.ListMessages(as(w.Alex), app.ListMessages{ChannelID: w.Eskalation})
	require.NoError(t, err)
	_, err = b.db.Owner.Exec(t.Context(), `DELETE FROM channels WHERE id = $1`, w.Eskalation)
	require.NoError(t, err)
	reported.AwaitChange(t, w.Eskalation)
	_, err = b.chat.ListMessages(as(w.Alex), app.ListMessages{ChannelID: w.Eskalation})
	require.NoError(t, err, "answered from memory: the change was not passed on")

	changes.Changed(w.Eskalation)
	_, err = b.chat.ListMessages(as(w.Alex), app.ListMessages{ChannelID: w.Eskalation})
	requireProblem(t, err, errs.CodeNotFound, "")
}

// TestAddSpaceMemberAppliesAtOnce: the new member's standing, cached
// without the membership, is forgotten at the commit in this process, so
// the next request sees the space without waiting for the notification
// (which this test never passes on).
func TestAddSpaceMemberAppliesAtOnce(t *testing.T) {
	t.Parallel()
	b, _, _ := setupCached(t, nil, true)
	w := b.world
	_, err := b.chat.ListChannels(as(w.Sam), w.Marketing)
	requireProblem(t, err, errs.CodeNotFound, "")
	_, err = b.chat.AddSpaceMember(as(w.Robin), app.AddSpaceMember{SpaceID: w.Marketing, PersonID: w.Sam.ID, Level: domain.LevelRead})
	require.NoError(t, err)
	_, err = b.chat.ListChannels(as(w.Sam), w.Marketing)
	require.NoError(t, err)
}

// TestGatheredPostsFromMemoryTakeOneRoundTrip (ADR 0103): a group of posts
// whose channels and authors are in memory reads nothing either.
func TestGatheredPostsFromMemoryTakeOneRoundTrip(t *testing.T) {
	t.Parallel()
	trips := &pgtest.Trips{}
	b, _, _ := setupCached(t, trips, false)
	w := b.world
	for round := range 2 {
		trips.Take()
		g := gather(t, b)
		g.post(w.Alex, w.Allgemein, "First")
		g.post(w.Sam, w.Allgemein, "Second")
		g.post(w.Alex, w.Eskalation, "Third")
		for _, r := range g.release() {
			require.NoError(t, r.err)
		}
		got := trips.TakeNames()
		if round == 0 {
			require.Len(t, got, 4, "the first post's two round trips, then the group's two: %v", got)
			continue
		}
		require.Equal(t, [][]string{
			{"begin", "SET LOCAL", "MessageInsert", "EventLogAppend", "commit", "EventLogWake"},
			{"begin", "SET LOCAL", "MessageInsert", "EventLogAppend", "commit", "EventLogWake"},
		}, got, "the first post alone, then the group, each in one round trip")
	}
}
