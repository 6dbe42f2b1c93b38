package app_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/authz/authztest"
	"bothy/server/internal/chat/app"
	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

// TestPostMessageTakesTwoRoundTrips (ADR 0085, ADR 0090, ADR 0091, ADR
// 0094): posting reads the channel and the author's grants and
// memberships with the BEGIN, then sends the message and its event (one
// statement, D-SQ-21) with the COMMIT; a new thread travels in that second
// round trip too, after the message, and its event with the message's
// (one statement for both, ADR 0099). The
// transaction notifies nothing: with no other notification on its way,
// the consumers' wake-up follows the COMMIT in its round trip, once for
// all the events of the post.
func TestPostMessageTakesTwoRoundTrips(t *testing.T) {
	t.Parallel()
	trips := &pgtest.Trips{}
	b := setupTraced(t, trips)
	w := b.world
	trips.Take()
	_, err := b.chat.PostMessage(as(w.Alex), app.PostMessage{ChannelID: w.Allgemein, Text: "Hello Sam"})
	require.NoError(t, err)
	require.Equal(t, [][]string{
		{"begin", "SET LOCAL", "ChannelListByIDs", "GrantFactsBySubjects", "SpaceMemberListByPrincipals"},
		{"MessageInsert", "EventLogAppend", "commit", "EventLogWake"},
	}, trips.TakeNames())

	posted, err := b.chat.PostMessage(as(w.Alex), app.PostMessage{ChannelID: w.Allgemein, Text: "Robin, a thread", StartThread: true})
	require.NoError(t, err)
	got := trips.TakeNames()
	require.Len(t, got, 2, "%v", got)
	require.Equal(t, []string{"MessageInsert", "ThreadInsert", "EventLogAppend", "commit", "EventLogWake"}, got[1],
		"both events with one statement (ADR 0099)")
	evs := b.events(t)
	require.Len(t, evs, 3)
	require.Equal(t, []eventlog.Type{eventlog.MessageCreated, eventlog.MessageCreated, eventlog.ThreadCreated},
		[]eventlog.Type{evs[0].Type, evs[1].Type, evs[2].Type}, "the thread's event after its message's")
	require.Equal(t, posted.Thread.ID, evs[2].ResourceID)
}

func TestPostMessageAppendsMessageCreated(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	posted, err := b.chat.PostMessage(as(w.Alex), app.PostMessage{ChannelID: w.Allgemein, Text: "Hello Sam"})
	require.NoError(t, err)
	m := posted.Message
	require.Nil(t, posted.Thread)
	require.Equal(t, domain.Message{ID: m.ID, SpaceID: w.Support, ChannelID: w.Allgemein, AuthorID: w.Alex.ID,
		Text: "Hello Sam", CreatedAt: start}, m)

	evs := b.events(t)
	require.Len(t, evs, 1)
	ev := evs[0]
	require.Equal(t, eventlog.MessageCreated, ev.Type)
	require.Equal(t, authorize.KindMessage, ev.ResourceKind)
	require.Equal(t, authorize.MessageRead, ev.ReceiveAction)
	require.Equal(t, m.ID, ev.ResourceID)
	require.Equal(t, w.Support, ev.SpaceID)
	require.Equal(t, w.Allgemein, ev.ChannelID)
	require.True(t, ev.ThreadID.IsZero())
	require.Equal(t, w.Alex.ID, ev.ActorID)
	require.Equal(t, map[string]any{"message": map[string]any{"id": m.ID.String(), "space_id": w.Support.String(),
		"channel_id": w.Allgemein.String(), "author_id": w.Alex.ID.String(), "text": "Hello Sam",
		"created_at": "2026-11-30T09:00:00.000000Z"}}, payload(t, ev))
}

// TestAppPostsThroughThePublicAPI (P-18): Tracker posts in Eskalation with
// messages:write and G-6, and nowhere else.
func TestAppPostsWithItsGrantAndScope(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	posted, err := b.chat.PostMessage(as(w.Tracker), app.PostMessage{ChannelID: w.Eskalation, Text: "Ticket 42 escalated"})
	require.NoError(t, err)
	require.Equal(t, w.Tracker.ID, posted.Message.AuthorID)

	_, err = b.chat.PostMessage(as(w.Tracker), app.PostMessage{ChannelID: w.Allgemein, Text: "Hello"})
	require.Equal(t, errs.NotFound(), err, "no grant on Allgemein: not_found like an unknown channel")
	_, err = b.chat.PostMessage(as(w.Tracker), app.PostMessage{ChannelID: ids.New(), Text: "Hello"})
	require.Equal(t, errs.NotFound(), err)

	noWrite := w.Tracker
	noWrite.GrantedScopes = []string{"events:subscribe", "messages:read"}
	_, err = b.chat.PostMessage(as(noWrite), app.PostMessage{ChannelID: w.Eskalation, Text: "Hello"})
	requireProblem(t, err, errs.CodeForbidden, "scope_missing")

	inactive := w.Tracker
	inactive.InstallationActive = false
	_, err = b.chat.PostMessage(as(inactive), app.PostMessage{ChannelID: w.Eskalation, Text: "Hello"})
	requireProblem(t, err, errs.CodeForbidden, "app_not_installed")

	require.Len(t, b.events(t), 1, "refused posts append nothing")
	require.Equal(t, 1, b.count(t, "messages"))
	require.Len(t, b.denials(t, "message.post"), 3)
}

func TestPostMessageRefusesBadInputAndChangesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	other, err := b.chat.PostMessage(as(w.Alex), app.PostMessage{ChannelID: w.Eskalation, Text: "Root", StartThread: true})
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		cmd      app.PostMessage
		pointers []string
	}{
		{"an empty text", app.PostMessage{Text: ""}, []string{"/text"}},
		{"a text one byte over chat.message_max_bytes", app.PostMessage{Text: strings.Repeat("a", 33)}, []string{"/text"}},
		{"broken UTF-8", app.PostMessage{Text: "Hello \xff"}, []string{"/text"}},
		{"an unknown thread", app.PostMessage{Text: "Hi", ThreadID: ids.New()}, []string{"/thread_id"}},
		{"a thread of another channel", app.PostMessage{Text: "Hi", ThreadID: other.Thread.ID}, []string{"/thread_id"}},
		{"start_thread with thread_id", app.PostMessage{Text: "Hi", ThreadID: other.Thread.ID, StartThread: true}, []string{"/start_thread"}},
		{"everything at once", app.PostMessage{Text: "", ThreadID: ids.New()}, []string{"/text", "/thread_id"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := tc.cmd
			cmd.ChannelID = w.Allgemein
			_, err := b.chat.PostMessage(as(w.Alex), cmd)
			requireProblem(t, err, errs.CodeValidationFailed, "", tc.pointers...)
		})
	}
	_, err = b.chat.PostMessage(as(w.Alex), app.PostMessage{ChannelID: w.Eskalation, Text: strings.Repeat("a", 32)})
	require.NoError(t, err, "a text of exactly chat.message_max_bytes is accepted")
	t.Cleanup(func() {
		require.Equal(t, 2, b.count(t, "messages"), "refused posts write no row")
		require.Len(t, b.events(t), 3, "refused posts append no event")
	})
}

func TestThreads(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	root, err := b.chat.PostMessage(as(w.Alex), app.PostMessage{ChannelID: w.Allgemein, Text: "Printer on fire", StartThread: true})
	require.NoError(t, err)
	require.NotNil(t, root.Thread)
	th := *root.Thread
	require.Equal(t, domain.Thread{ID: th.ID, SpaceID: w.Support, ChannelID: w.Allgemein, RootMessageID: root.Message.ID,
		CreatedBy: w.Alex.ID, CreatedAt: start}, th)
	require.Equal(t, th.ID, root.Message.ThreadID, "the root message belongs to its thread")

	b.clock.Advance(time.Second)
	reply, err := b.chat.PostMessage(as(w.Sam), app.PostMessage{ChannelID: w.Allgemein, Text: "On my way", ThreadID: th.ID})
	require.NoError(t, err)
	require.Equal(t, th.ID, reply.Message.ThreadID)
	require.Nil(t, reply.Thread)

	evs := b.events(t)
	require.Len(t, evs, 3)
	require.Equal(t, []eventlog.Type{eventlog.MessageCreated, eventlog.ThreadCreated, eventlog.MessageCreated},
		[]eventlog.Type{evs[0].Type, evs[1].Type, evs[2].Type}, "thread.created follows the message that opens it")
	require.Equal(t, th.ID, evs[0].ThreadID)
	require.Equal(t, th.ID, evs[1].ResourceID)
	require.Equal(t, th.ID, evs[1].ThreadID)
	require.Equal(t, authorize.MessageRead, evs[1].ReceiveAction)
	require.Equal(t, map[string]any{"thread": map[string]any{"id": th.ID.String(), "space_id": w.Support.String(),
		"channel_id": w.Allgemein.String(), "root_message_id": root.Message.ID.String(),
		"created_at": "2026-11-30T09:00:00.000000Z"}}, payload(t, evs[1]))
	require.Equal(t, th.ID.String(), payload(t, evs[2])["message"].(map[string]any)["thread_id"])
}

func TestUpdateAndDeleteMessage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	alexMsg, err := b.chat.PostMessage(as(w.Alex), app.PostMessage{ChannelID: w.Allgemein, Text: "Hello Sam"})
	require.NoError(t, err)
	samMsg, err := b.chat.PostMessage(as(w.Sam), app.PostMessage{ChannelID: w.Allgemein, Text: "Hello Alex"})
	require.NoError(t, err)

	b.clock.Advance(time.Minute)
	updated, err := b.chat.UpdateMessage(as(w.Alex), app.UpdateMessage{MessageID: alexMsg.Message.ID, Text: "Hello Sam, again"})
	require.NoError(t, err)
	require.Equal(t, "Hello Sam, again", updated.Text)
	require.Equal(t, start.Add(time.Minute), updated.UpdatedAt)

	_, err = b.chat.UpdateMessage(as(w.Sam), app.UpdateMessage{MessageID: alexMsg.Message.ID, Text: "Hijacked"})
	requireProblem(t, err, errs.CodeForbidden, "not_self")
	_, err = b.chat.UpdateMessage(as(w.Robin), app.UpdateMessage{MessageID: alexMsg.Message.ID, Text: "Edited by the owner"})
	requireProblem(t, err, errs.CodeForbidden, "not_self")
	_, err = b.chat.UpdateMessage(as(w.Tracker), app.UpdateMessage{MessageID: alexMsg.Message.ID, Text: "Hi"})
	require.Equal(t, errs.NotFound(), err, "Tracker cannot see Allgemein")
	_, err = b.chat.UpdateMessage(as(w.Alex), app.UpdateMessage{MessageID: alexMsg.Message.ID, Text: " "})
	requireProblem(t, err, errs.CodeValidationFailed, "", "/text")

	require.Equal(t, errs.NotFound(), b.chat.DeleteMessage(as(w.Alex), ids.New()))
	requireProblem(t, b.chat.DeleteMessage(as(w.Alex), samMsg.Message.ID), errs.CodeForbidden, "not_self")
	b.clock.Advance(time.Minute)
	require.NoError(t, b.chat.DeleteMessage(as(w.Robin), samMsg.Message.ID), "an owner deletes any message")
	require.NoError(t, b.chat.DeleteMessage(as(w.Alex), alexMsg.Message.ID), "an author deletes their message")
	require.Equal(t, errs.NotFound(), b.chat.DeleteMessage(as(w.Alex), alexMsg.Message.ID), "a deleted message is gone")
	_, err = b.chat.UpdateMessage(as(w.Alex), app.UpdateMessage{MessageID: alexMsg.Message.ID, Text: "Back"})
	require.Equal(t, errs.NotFound(), err)

	evs := b.events(t)
	require.Len(t, evs, 5)
	require.Equal(t, eventlog.MessageUpdated, evs[2].Type)
	require.Equal(t, "Hello Sam, again", payload(t, evs[2])["message"].(map[string]any)["text"])
	require.Equal(t, "2026-11-30T09:01:00.000000Z", payload(t, evs[2])["message"].(map[string]any)["updated_at"])
	require.Equal(t, eventlog.MessageDeleted, evs[3].Type)
	require.Equal(t, samMsg.Message.ID, evs[3].ResourceID)
	require.Equal(t, w.Robin.ID, evs[3].ActorID)
	deleted := payload(t, evs[3])["message"].(map[string]any)
	require.NotContains(t, deleted, "text", "a deleted message carries no text")
	require.Equal(t, "2026-11-30T09:02:00.000000Z", deleted["deleted_at"])

	var text string
	require.NoError(t, b.db.App.QueryRow(context.Background(), `SELECT text FROM messages WHERE id = $1`, samMsg.Message.ID).Scan(&text))
	require.Empty(t, text, "the stored row keeps no text")
}

func TestListMessagesPagesNewestFirst(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	var posted []domain.Message
	for _, text := range []string{"one", "two", "three", "four", "five"} {
		p, err := b.chat.PostMessage(as(w.Alex), app.PostMessage{ChannelID: w.Eskalation, Text: text})
		require.NoError(t, err)
		posted = append(posted, p.Message)
		b.clock.Advance(time.Second)
	}
	require.NoError(t, b.chat.DeleteMessage(as(w.Alex), posted[3].ID))
	_, err := b.chat.PostMessage(as(w.Alex), app.PostMessage{ChannelID: w.Allgemein, Text: "elsewhere"})
	require.NoError(t, err)

	texts := func(p app.MessagePage) []string {
		out := []string{}
		for _, m := range p.Items {
			out = append(out, m.Text)
		}
		return out
	}
	first, err := b.chat.ListMessages(as(w.Tracker), app.ListMessages{ChannelID: w.Eskalation})
	require.NoError(t, err)
	require.Equal(t, []string{"five", "three", "two"}, texts(first), "chat.page_size_default, deleted messages left out")
	require.NotNil(t, first.Next)
	second, err := b.chat.ListMessages(as(w.Tracker), app.ListMessages{ChannelID: w.Eskalation, Before: first.Next})
	require.NoError(t, err)
	require.Equal(t, []string{"one"}, texts(second))
	require.Nil(t, second.Next, "the last page has no next position")

	all, err := b.chat.ListMessages(as(w.Sam), app.ListMessages{ChannelID: w.Eskalation, Limit: 100})
	require.NoError(t, err)
	require.Equal(t, []string{"five", "three", "two", "one"}, texts(all), "a limit above chat.page_size_max is lowered")

	exact, err := b.chat.ListMessages(as(w.Sam), app.ListMessages{ChannelID: w.Eskalation, Limit: 4})
	require.NoError(t, err)
	require.Len(t, exact.Items, 4)
	require.Nil(t, exact.Next, "a page that ends exactly at the last message has no next position")

	_, err = b.chat.ListMessages(as(w.Tracker), app.ListMessages{ChannelID: w.Allgemein})
	require.Equal(t, errs.NotFound(), err)
	noRead := w.Tracker
	noRead.GrantedScopes = []string{"messages:write"}
	_, err = b.chat.ListMessages(as(noRead), app.ListMessages{ChannelID: w.Eskalation})
	requireProblem(t, err, errs.CodeForbidden, "scope_missing")
}

// TestEventExistsExactlyWhenTheChangeCommits: a post inside a unit of work
// that rolls back leaves neither the message nor its event.
func TestEventExistsExactlyWhenTheChangeCommits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	uow := pg.NewUnitOfWork(b.db.App, 0, 5*time.Second)
	rollback := errors.New("roll back")
	err := uow.Do(as(b.world.Alex), func(ctx context.Context) error {
		if _, err := b.chat.PostMessage(ctx, app.PostMessage{ChannelID: b.world.Allgemein, Text: "Never seen"}); err != nil {
			return err
		}
		return rollback
	})
	require.ErrorIs(t, err, rollback)
	require.Zero(t, b.count(t, "messages"))
	require.Empty(t, b.events(t))
}

func TestNewServiceRefusesBadWiring(t *testing.T) {
	t.Parallel()
	_, err := app.NewService(app.Deps{}, testOptions)
	require.Error(t, err)
}

// BenchmarkPostMessage posts one message after the other, in one process
// against its test database (shape: one author, one channel, no other
// load): app, the app Tracker, whose standing is read at every post;
// person_looked_up, Alex without the caches of ADR 0103; person_cached,
// Alex with the channel and standing in memory (one round trip a post).
func BenchmarkPostMessage(b *testing.B) {
	for _, bc := range []struct {
		name   string
		cached bool
		author func(authztest.World) actor.Principal
	}{
		{"app", false, func(w authztest.World) actor.Principal { return w.Tracker }},
		{"person_looked_up", false, func(w authztest.World) actor.Principal { return w.Alex }},
		{"person_cached", true, func(w authztest.World) actor.Principal { return w.Alex }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var tb *testBundle
			if bc.cached {
				tb, _, _ = setupCached(b, nil, false)
			} else {
				tb = setup(b)
			}
			ctx := actor.With(context.Background(), bc.author(tb.world))
			cmd := app.PostMessage{ChannelID: tb.world.Eskalation, Text: "Ticket escalated"}
			for b.Loop() {
				if _, err := tb.chat.PostMessage(ctx, cmd); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
