package app_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/chat/app"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/correlation"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

// A post is one call of PostMessage in the background.
type post struct {
	name   string // the text
	result chan postResult
}

type postResult struct {
	posted app.Posted
	err    error
}

// gathering holds every insert into messages (a lock of the table in a
// transaction of the owner) so that the posts sent meanwhile queue behind
// the first, which waits at its insert; release lets them go.
type gathering struct {
	t     *testing.T
	b     *testBundle
	posts []*post
	done  func()
}

func gather(t *testing.T, b *testBundle) *gathering {
	t.Helper()
	ctx := context.Background()
	tx, err := b.db.Owner.Begin(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	_, err = tx.Exec(ctx, "LOCK TABLE messages IN SHARE MODE")
	require.NoError(t, err)
	return &gathering{t: t, b: b, done: func() { require.NoError(t, tx.Commit(ctx)) }}
}

// post sends text to channel as p, with the correlation ID post-<n> (n
// counts the posts from 0), and waits until it waits: at its insert when
// it runs a group, else in the queue of PostMessage.
func (g *gathering) post(p actor.Principal, channel ids.ID, text string) *post {
	g.t.Helper()
	ps := &post{name: text, result: make(chan postResult, 1)}
	ctx := correlation.With(as(p), fmt.Sprintf("post-%d", len(g.posts)))
	go func() {
		posted, err := g.b.chat.PostMessage(ctx, app.PostMessage{ChannelID: channel, Text: text})
		ps.result <- postResult{posted, err}
	}()
	sent := len(g.posts) + 1
	require.Eventually(g.t, func() bool { return g.insertsWaiting()+app.WaitingPosts(g.b.chat) == sent },
		3*time.Second, time.Millisecond, "post %q waits at its insert or in the queue", text)
	g.posts = append(g.posts, ps)
	return ps
}

// insertsWaiting counts the statements that wait for the lock of
// messages.
func (g *gathering) insertsWaiting() int { return g.b.db.LockWaits(g.t, "messages") }

// release lets the posts go and returns their results in the order they
// were sent.
func (g *gathering) release() []postResult {
	g.t.Helper()
	g.done()
	out := make([]postResult, len(g.posts))
	for i, p := range g.posts {
		select {
		case out[i] = <-p.result:
		case <-time.After(5 * time.Second):
			g.t.Fatalf("post %q did not return", p.name)
		}
	}
	return out
}

// transactions returns the transaction (xmin) that wrote each message and
// each event, by the resource ID, and the resource IDs of the events in
// seq order.
func (b *testBundle) transactions(t *testing.T) (messages, events map[ids.ID]string, order []ids.ID) {
	t.Helper()
	messages, _ = b.xmins(t, `SELECT id, xmin::text FROM messages`)
	events, order = b.xmins(t, `SELECT resource_id, xmin::text FROM event_log ORDER BY seq`)
	return messages, events, order
}

// xmins runs query, whose rows are an ID and a transaction, and returns
// the transactions by the ID and the IDs in the rows' order.
func (b *testBundle) xmins(t *testing.T, query string) (map[ids.ID]string, []ids.ID) {
	t.Helper()
	rows, err := b.db.App.Query(context.Background(), query)
	require.NoError(t, err)
	defer rows.Close()
	by := map[ids.ID]string{}
	var order []ids.ID
	for rows.Next() {
		var id ids.ID
		var x string
		require.NoError(t, rows.Scan(&id, &x))
		by[id] = x
		order = append(order, id)
	}
	require.NoError(t, rows.Err())
	return by, order
}

// TestPostsThatArriveTogetherShareOneUnitOfWork (ADR 0098): the posts that
// arrive while a post's unit of work runs wait for it and then run in one
// unit of work together, each message with its event, the events in the
// order the posts arrived. Whatever the number of its posts (ADR 0099),
// the group reads its channels with one statement and its authors'
// standings with one for their grants and one for the persons'
// memberships, in the round trip of the BEGIN, and sends its messages
// with one statement and its events with one, in the round trip of the
// COMMIT.
func TestPostsThatArriveTogetherShareOneUnitOfWork(t *testing.T) {
	t.Parallel()
	trips := &pgtest.Trips{}
	b := setupTraced(t, trips)
	w := b.world
	trips.Take()
	g := gather(t, b)
	g.post(w.Alex, w.Allgemein, "First")
	g.post(w.Sam, w.Allgemein, "Second")
	g.post(w.Tracker, w.Eskalation, "Third")
	g.post(w.Alex, w.Eskalation, "Fourth")
	results := g.release()

	var posted []ids.ID
	for i, r := range results {
		require.NoError(t, r.err, g.posts[i].name)
		require.Equal(t, g.posts[i].name, r.posted.Message.Text)
		posted = append(posted, r.posted.Message.ID)
	}
	require.Equal(t, w.Tracker.ID, results[2].posted.Message.AuthorID)
	messages, events, order := b.transactions(t)
	require.Equal(t, posted, order, "one event per message, in the order the posts arrived")
	for _, id := range posted {
		require.Equal(t, messages[id], events[id], "a message commits with its event")
	}
	first := messages[posted[0]]
	together := messages[posted[1]]
	require.NotEqual(t, first, together)
	for _, id := range posted[2:] {
		require.Equal(t, together, messages[id], "the posts that waited share one unit of work")
	}
	got := trips.TakeNames()
	require.Len(t, got, 4, "the first post's two round trips, then the group's: %v", got)
	require.Equal(t, []string{"begin", "SET LOCAL", "ChannelListByIDs", "GrantFactsBySubjects",
		"SpaceMemberListByPrincipals"}, got[2])
	require.Equal(t, []string{"MessageInsert", "EventLogAppend", "commit", "EventLogWake"}, got[3])
}

// TestAPostRefusedAmongGatheredPostsLeavesTheOthers: a post that is
// refused (a channel the app cannot see, an unknown channel, a text too
// long) gets the error it would get alone, with its denial audited, and
// writes nothing; the posts gathered with it are written together.
func TestAPostRefusedAmongGatheredPostsLeavesTheOthers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	g := gather(t, b)
	g.post(w.Alex, w.Allgemein, "First")
	g.post(w.Alex, w.Allgemein, "Kept")
	g.post(w.Tracker, w.Allgemein, "Not Tracker's")
	g.post(w.Sam, ids.New(), "Nowhere")
	g.post(w.Sam, w.Allgemein, strings.Repeat("Too long. ", 4))
	g.post(w.Sam, w.Eskalation, "Also kept")
	results := g.release()

	require.NoError(t, results[0].err)
	require.NoError(t, results[1].err)
	require.Equal(t, errs.NotFound(), results[2].err)
	require.Equal(t, errs.NotFound(), results[3].err)
	requireProblem(t, results[4].err, errs.CodeValidationFailed, "", "/text")
	require.NoError(t, results[5].err)
	denials := b.denials(t, "message.post")
	require.Len(t, denials, 1, "the app's denial, audited as alone (an unknown channel is not)")
	require.Equal(t, w.Tracker.ID, denials[0].ActorID)
	require.Equal(t, "post-2", denials[0].CorrelationID, "the denied post's own request")

	messages, events, order := b.transactions(t)
	require.Len(t, messages, 3)
	require.Equal(t, []ids.ID{results[0].posted.Message.ID, results[1].posted.Message.ID, results[5].posted.Message.ID}, order)
	require.Equal(t, messages[results[1].posted.Message.ID], messages[results[5].posted.Message.ID])
	require.Equal(t, messages[results[5].posted.Message.ID], events[results[5].posted.Message.ID])
}

// TestGatheredPostsTheDatabaseRefusedRunAlone: when the database refuses
// the shared unit of work (here a check the test adds refuses one text),
// nothing of it is written and each of its posts runs again alone, so one
// post's failure is never another's.
func TestGatheredPostsTheDatabaseRefusedRunAlone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	_, err := b.db.Owner.Exec(context.Background(),
		`ALTER TABLE messages ADD CONSTRAINT test_refused CHECK (text <> 'Refused by the database')`)
	require.NoError(t, err)
	g := gather(t, b)
	g.post(w.Alex, w.Allgemein, "First")
	g.post(w.Alex, w.Allgemein, "Kept")
	g.post(w.Sam, w.Allgemein, "Refused by the database")
	g.post(w.Sam, w.Eskalation, "Also kept")
	results := g.release()

	require.NoError(t, results[0].err)
	require.NoError(t, results[1].err)
	require.Error(t, results[2].err)
	require.Equal(t, errs.CodeInternal, errs.CodeOf(results[2].err))
	require.NoError(t, results[3].err)

	messages, events, order := b.transactions(t)
	kept, alsoKept := results[1].posted.Message.ID, results[3].posted.Message.ID
	require.Equal(t, []ids.ID{results[0].posted.Message.ID, kept, alsoKept}, order)
	require.NotEqual(t, messages[kept], messages[alsoKept], "each ran alone")
	require.Equal(t, messages[alsoKept], events[alsoKept])
}

// TestGatheredPostsWhoseUnitOfWorkEndedBeforeTheirDecisionGetItsError: a
// group whose unit of work fails before it decided its posts (here their
// deadline ended while the group before waited for a lock) answers each
// with the failure, never with an empty success.
func TestGatheredPostsWhoseUnitOfWorkEndedBeforeTheirDecisionGetItsError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	bg := context.Background()
	tx, err := b.db.Owner.Begin(bg)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(bg) }()
	_, err = tx.Exec(bg, "LOCK TABLE channels IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(as(w.Alex), time.Second)
	defer cancel()
	results := make(chan postResult, 3)
	send := func() {
		go func() {
			posted, err := b.chat.PostMessage(ctx, app.PostMessage{ChannelID: w.Allgemein, Text: "Too late"})
			results <- postResult{posted, err}
		}()
	}
	send()
	require.Eventually(t, func() bool { return b.db.LockWaits(t, "channels") == 1 }, 3*time.Second, time.Millisecond,
		"the first post waits at its channel")
	send()
	send()
	require.Eventually(t, func() bool { return app.WaitingPosts(b.chat) == 2 }, 3*time.Second, time.Millisecond)
	for range 3 {
		select {
		case r := <-results:
			require.Error(t, r.err)
			require.Zero(t, r.posted)
		case <-time.After(5 * time.Second):
			t.Fatal("a post was not answered")
		}
	}
}

// TestPostsGatherAtMostTheConfiguredNumber: chat.post_gather_max bounds
// the posts of one unit of work; the rest wait for the next.
func TestPostsGatherAtMostTheConfiguredNumber(t *testing.T) {
	t.Parallel()
	b := setupWith(t, nil, func(o *app.Options) { o.PostGatherMax = 2 })
	w := b.world
	g := gather(t, b)
	g.post(w.Alex, w.Allgemein, "First")
	g.post(w.Alex, w.Allgemein, "Second")
	g.post(w.Sam, w.Allgemein, "Third")
	g.post(w.Sam, w.Eskalation, "Fourth")
	results := g.release()
	for _, r := range results {
		require.NoError(t, r.err)
	}
	messages, _, _ := b.transactions(t)
	x := func(i int) string { return messages[results[i].posted.Message.ID] }
	require.Equal(t, x(1), x(2), "chat.post_gather_max 2: the second and third together")
	require.NotEqual(t, x(2), x(3), "the fourth in the next unit of work")
}

func TestNewServiceRefusesNoPostGatherMaxOrGroups(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	noGroup, noPost := testOptions, testOptions
	noGroup.PostGatherGroups, noPost.PostGatherMax = 0, 0
	for _, o := range []app.Options{noGroup, noPost} {
		_, err := app.NewService(testDeps(t, db, nil, clock.NewFake(start)), o)
		require.ErrorContains(t, err, "chat.post_gather_max and chat.post_gather_groups must be at least 1")
	}
}

// TestAPostInACallersUnitOfWorkIsNeverGathered: PostMessage inside a
// caller's unit of work joins it, so it never waits in the queue and its
// caller's rollback takes it back, whatever else is posted meanwhile.
func TestAPostInACallersUnitOfWorkIsNeverGathered(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	uow := pg.NewUnitOfWork(b.db.App, 0, 5*time.Second)
	rollback := errors.New("roll back")
	g := gather(t, b)
	g.post(w.Alex, w.Allgemein, "Kept")
	inCaller := make(chan error, 1)
	go func() {
		inCaller <- uow.Do(as(w.Sam), func(ctx context.Context) error {
			if _, err := b.chat.PostMessage(ctx, app.PostMessage{ChannelID: w.Allgemein, Text: "Taken back"}); err != nil {
				return err
			}
			return rollback
		})
	}()
	require.Eventually(t, func() bool { return g.insertsWaiting() == 2 }, 3*time.Second, time.Millisecond,
		"the caller's post waits at its own insert")
	require.Zero(t, app.WaitingPosts(b.chat))
	results := g.release()
	require.NoError(t, results[0].err)
	require.ErrorIs(t, <-inCaller, rollback)
	messages, _, _ := b.transactions(t)
	require.Len(t, messages, 1)
	require.Contains(t, messages, results[0].posted.Message.ID)
}

// TestPostGatherMaxOneRunsEachPostAlone: with chat.post_gather_max 1 no
// post waits in the queue; each runs its own unit of work at once.
func TestPostGatherMaxOneRunsEachPostAlone(t *testing.T) {
	t.Parallel()
	b := setupWith(t, nil, func(o *app.Options) { o.PostGatherMax = 1 })
	w := b.world
	g := gather(t, b)
	g.post(w.Alex, w.Allgemein, "First")
	g.post(w.Sam, w.Allgemein, "Second")
	g.post(w.Alex, w.Eskalation, "Third")
	require.Equal(t, 3, g.insertsWaiting(), "each waits at its own insert")
	require.Zero(t, app.WaitingPosts(b.chat))
	results := g.release()
	messages, _, _ := b.transactions(t)
	seen := map[string]bool{}
	for _, r := range results {
		require.NoError(t, r.err)
		seen[messages[r.posted.Message.ID]] = true
	}
	require.Len(t, seen, 3, "three units of work")
}

// TestGroupsOfGatheredPostsRunAtMostTheConfiguredNumberAtOnce: with
// chat.post_gather_groups 2 a post runs at once while one group runs, and
// waits while two do; the posts that waited go together.
func TestGroupsOfGatheredPostsRunAtMostTheConfiguredNumberAtOnce(t *testing.T) {
	t.Parallel()
	b := setupWith(t, nil, func(o *app.Options) { o.PostGatherGroups = 2 })
	w := b.world
	g := gather(t, b)
	g.post(w.Alex, w.Allgemein, "First")
	g.post(w.Sam, w.Allgemein, "Second")
	require.Equal(t, 2, g.insertsWaiting(), "the second ran at once")
	g.post(w.Alex, w.Eskalation, "Third")
	g.post(w.Sam, w.Eskalation, "Fourth")
	g.post(w.Tracker, w.Eskalation, "Fifth")
	require.Equal(t, 3, app.WaitingPosts(b.chat))
	results := g.release()
	for _, r := range results {
		require.NoError(t, r.err)
	}
	messages, _, _ := b.transactions(t)
	x := func(i int) string { return messages[results[i].posted.Message.ID] }
	require.NotEqual(t, x(0), x(1))
	require.Equal(t, x(2), x(3), "the posts that waited go together")
	require.Equal(t, x(3), x(4))
	require.NotContains(t, []string{x(0), x(1)}, x(2))
}

// TestManyPostsAtOnceAreAllAnswered: posts from many goroutines, in small
// groups of which several end at the same moment, are all written once
// and all answered (a group handed to a post told its turn twice would
// leave the queue stuck).
func TestManyPostsAtOnceAreAllAnswered(t *testing.T) {
	t.Parallel()
	b := setupWith(t, nil, func(o *app.Options) { o.PostGatherMax, o.PostGatherGroups = 2, 3 })
	w := b.world
	const posters, each = 12, 15
	errc := make(chan error, posters*each)
	for i := range posters {
		go func() {
			p := []actor.Principal{w.Alex, w.Sam, w.Tracker}[i%3]
			for range each {
				_, err := b.chat.PostMessage(as(p), app.PostMessage{ChannelID: w.Eskalation, Text: "Ticket escalated"})
				errc <- err
			}
		}()
	}
	for range posters * each {
		select {
		case err := <-errc:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("a post was not answered")
		}
	}
	require.Equal(t, posters*each, b.count(t, "messages"))
	require.Len(t, b.events(t), posters*each)
}
