package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/authz/authztest"
	"bothy/server/internal/chat"
	chatpg "bothy/server/internal/chat/adapters/postgres"
	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var start = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func TestMemberships(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	w := authztest.BuildWorld(t, db, clock.NewFake(start))
	s := chatpg.NewStore(db.App)
	ctx := context.Background()

	ok, err := s.IsSpaceMember(ctx, w.Support, w.Alex.ID)
	require.NoError(t, err)
	require.True(t, ok)
	for _, tc := range []struct{ space, principal ids.ID }{
		{w.Marketing, w.Alex.ID}, {w.Support, w.Robin.ID}, {w.Support, w.Tracker.ID}, {ids.New(), w.Alex.ID},
	} {
		ok, err := s.IsSpaceMember(ctx, tc.space, tc.principal)
		require.NoError(t, err)
		require.False(t, ok)
	}

	ms, err := s.MembershipsOf(ctx, []ids.ID{w.Sam.ID, w.Tracker.ID, w.Alex.ID})
	require.NoError(t, err)
	support := []chat.Membership{{SpaceID: w.Support, Level: "write"}}
	require.Equal(t, map[ids.ID][]chat.Membership{w.Sam.ID: support, w.Alex.ID: support,
		w.Tracker.ID: {}}, ms, "each with one statement; an app is never a member")
}

// TestThreadRootAndReplyReferEachOther: the root message names its thread,
// which is inserted after it in the same transaction; without the thread the
// commit fails.
func TestThreadRootAndReplyReferEachOther(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	w := authztest.BuildWorld(t, db, clock.NewFake(start))
	s := chatpg.NewStore(db.App)
	uow := pg.NewUnitOfWork(db.App, 0, 5*time.Second)
	ctx := context.Background()

	m := domain.Message{ID: ids.New(), SpaceID: w.Support, ChannelID: w.Allgemein, ThreadID: ids.New(), AuthorID: w.Alex.ID,
		Text: "Root", CreatedAt: start}
	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		if err := s.InsertMessages(ctx, []domain.Message{m}); err != nil {
			return err
		}
		return s.InsertThread(ctx, domain.Thread{ID: m.ThreadID, SpaceID: m.SpaceID, ChannelID: m.ChannelID,
			RootMessageID: m.ID, CreatedBy: w.Alex.ID, CreatedAt: start})
	}))
	th, found, err := s.ThreadByID(ctx, m.ThreadID)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, m.ID, th.RootMessageID)

	orphan := m
	orphan.ID, orphan.ThreadID = ids.New(), ids.New()
	err = uow.Do(ctx, func(ctx context.Context) error { return s.InsertMessages(ctx, []domain.Message{orphan}) })
	require.True(t, pg.IsForeignKeyViolation(err, "messages_thread_fkey"), "checked at commit: %v", err)

	wrongSpace := m
	wrongSpace.ID, wrongSpace.ThreadID, wrongSpace.SpaceID = ids.New(), ids.Zero, w.Marketing
	err = s.InsertMessages(ctx, []domain.Message{wrongSpace})
	require.Error(t, err, "a message lies in a channel of its space")
}
