package postgres_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
	eventsync "bothy/server/internal/sync"
	syncpg "bothy/server/internal/sync/adapters/postgres"
	"bothy/server/migrations"
)

// Migration 00043 gives the rows made before it the key of their event
// while it is retained, and a value that finds nothing once it left the log
// (ADR 0068).
func TestMigrationEventOccurredAtBackfill(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	sub := b.subscription(t, b.install(t, b.app(t, "Tracker")), start)

	maint, err := syncpg.NewMaintainer(b.db.App, syncpg.MaintainerOptions{
		PartitionInterval: time.Hour, PartitionAhead: time.Hour, EventRetention: 24 * time.Hour})
	require.NoError(t, err)
	_, err = maint.Run(ctx, start)
	require.NoError(t, err)
	appender, err := syncpg.NewAppender(clock.NewFake(start.Add(time.Minute)), syncpg.NewWaker(b.db.App, slog.New(slog.DiscardHandler), time.Second), syncpg.AppenderOptions{PayloadTextMaxBytes: 1024})
	require.NoError(t, err)
	var retained eventlog.Appended
	require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
		retained, err = appender.Append(ctx, eventlog.Event{Type: eventlog.MessageCreated, ResourceID: ids.New(),
			SpaceID: ids.New(), ChannelID: ids.New(), ActorID: b.owner, Payload: map[string]any{"text": "hello Sam"}})
		return err
	}))

	provider, err := goose.NewProvider(goose.DialectPostgres, stdlib.OpenDBFromPool(b.db.Owner), migrations.FS,
		goose.WithDisableGlobalRegistry(true))
	require.NoError(t, err)
	_, err = provider.DownTo(ctx, 42)
	require.NoError(t, err)
	created := start.Add(time.Hour)
	insert := func(seq int64) ids.ID {
		id := ids.New()
		_, err := b.db.App.Exec(ctx, `
			INSERT INTO webhook_deliveries (id, subscription_id, event_seq, event_id, status, attempt, next_attempt_at, created_at, updated_at)
			VALUES ($1, $2, $3, $4, 'pending', 0, $5, $5, $5)`, id, sub.ID, seq, ids.New(), created)
		require.NoError(t, err)
		return id
	}
	withEvent, gone := insert(retained.Seq), insert(retained.Seq+1000)
	_, err = provider.UpTo(ctx, 43)
	require.NoError(t, err)
	// The store reads every column of today's table; the later migrations
	// leave event_occurred_at as 00043 set it.
	_, err = provider.Up(ctx)
	require.NoError(t, err)

	log := syncpg.NewLog(b.db.App)
	for id, want := range map[ids.ID]bool{withEvent: true, gone: false} {
		d, ok, err := b.subs.Delivery(ctx, id)
		require.NoError(t, err)
		require.True(t, ok)
		if want {
			require.Equal(t, retained.OccurredAt, d.EventOccurredAt, "the key of the retained event")
		} else {
			require.Equal(t, created, d.EventOccurredAt, "created_at for an event that left the log")
		}
		_, found, err := log.EventByKey(ctx, eventsync.EventKey{Seq: d.EventSeq, OccurredAt: d.EventOccurredAt})
		require.NoError(t, err)
		require.Equal(t, want, found, "delivery of seq %d", d.EventSeq)
	}
}
