package postgres_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
	eventsync "bothy/server/internal/sync"
	"bothy/server/internal/sync/adapters/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// start is the fake clock's first instant; partitions are an hour long.
var start = time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)

var testMaintainerOptions = postgres.MaintainerOptions{
	PartitionInterval: time.Hour,
	PartitionAhead:    2 * time.Hour,
	EventRetention:    24 * time.Hour,
}

type testBundle struct {
	db       *pgtest.DB
	clock    *clock.Fake
	uow      *pg.UnitOfWork
	appender *postgres.Appender
	log      *postgres.Log
	cursors  *postgres.Cursors
	maint    *postgres.Maintainer
}

func setup(t testing.TB) *testBundle {
	t.Helper()
	return setupTraced(t, nil)
}

// setupTraced is setup with the units of work going through a pool whose
// connections tracer sees (nil: the database's own pool).
func setupTraced(t testing.TB, tracer pgx.QueryTracer) *testBundle {
	t.Helper()
	db := pgtest.New(t)
	pool := db.App
	if tracer != nil {
		pool = db.TracedApp(t, tracer, 0)
	}
	clk := clock.NewFake(start)
	appender, err := postgres.NewAppender(clk, postgres.NewWaker(db.App, slog.New(slog.DiscardHandler), time.Second), postgres.AppenderOptions{PayloadTextMaxBytes: 64})
	require.NoError(t, err)
	maint, err := postgres.NewMaintainer(db.App, testMaintainerOptions)
	require.NoError(t, err)
	b := &testBundle{
		db:       db,
		clock:    clk,
		uow:      pg.NewUnitOfWork(pool, 3, 5*time.Second),
		appender: appender,
		log:      postgres.NewLog(db.App),
		cursors:  postgres.NewCursors(db.App, clk),
		maint:    maint,
	}
	_, err = maint.Run(context.Background(), clk.Now())
	require.NoError(t, err)
	return b
}

// appendMessage appends one message.created event in its own unit of work.
func (b *testBundle) appendMessage(t testing.TB, text string) eventlog.Appended {
	t.Helper()
	var got eventlog.Appended
	require.NoError(t, b.uow.Do(context.Background(), func(ctx context.Context) error {
		var err error
		got, err = b.appender.Append(ctx, messageEvent(text))
		return err
	}))
	return got
}

// key returns the log key of an appended event.
func key(a eventlog.Appended) eventsync.EventKey {
	return eventsync.EventKey{Seq: a.Seq, OccurredAt: a.OccurredAt}
}

var (
	support   = ids.MustParse("019ad3a0-7c00-7000-8000-0000000000c1")
	allgemein = ids.MustParse("019ad3a0-7c00-7000-8000-0000000000c2")
	alex      = ids.MustParse("019ad3a0-7c00-7000-8000-0000000000a1")
)

func messageEvent(text string) eventlog.Event {
	return eventlog.Event{
		Type:       eventlog.MessageCreated,
		ResourceID: ids.New(),
		SpaceID:    support,
		ChannelID:  allgemein,
		ActorID:    alex,
		Payload:    map[string]any{"text": text, "author_id": alex},
	}
}

func countEvents(t testing.TB, db *pgtest.DB) int {
	t.Helper()
	var n int
	require.NoError(t, db.App.QueryRow(context.Background(), `SELECT count(*) FROM event_log`).Scan(&n))
	return n
}
