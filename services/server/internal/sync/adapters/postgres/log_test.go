package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/eventlog"
	eventsync "bothy/server/internal/sync"
	"bothy/server/internal/sync/adapters/postgres"
)

// The key names the event: its seq with another occurred_at is not the
// event, so the read can stay inside the partition of the key (ADR 0068).
func TestEventByKeyNeedsTheWholeKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	got := b.appendMessage(t, "hello Sam")
	require.Equal(t, start, got.OccurredAt, "Append reports the stored occurred_at")

	ev, ok, err := b.log.EventByKey(ctx, key(got))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, got.ID, ev.ID)
	require.Equal(t, key(got), ev.Key())

	for _, other := range []time.Time{start.Add(time.Microsecond), start.Add(-time.Hour)} {
		_, ok, err = b.log.EventByKey(ctx, eventsync.EventKey{Seq: got.Seq, OccurredAt: other})
		require.NoError(t, err)
		require.False(t, ok, "seq %d at %s", got.Seq, other)
	}
}

func TestEventTypesByKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	deleted := messageEvent("Sam removed this")
	deleted.Type = eventlog.MessageDeleted
	var keys []eventsync.EventKey
	for i, ev := range []eventlog.Event{messageEvent("hello Sam"), deleted, messageEvent("hello Robin")} {
		b.clock.Set(start.Add(time.Duration(i) * time.Minute))
		require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
			got, err := b.appender.Append(ctx, ev)
			keys = append(keys, key(got))
			return err
		}))
	}

	const neverAppended = 1 << 40
	stale := eventsync.EventKey{Seq: keys[0].Seq, OccurredAt: keys[1].OccurredAt}
	types, err := b.log.EventTypesByKey(ctx, []eventsync.EventKey{keys[2], keys[1], {Seq: neverAppended, OccurredAt: start}, stale, keys[1]})
	require.NoError(t, err)
	require.Equal(t, map[int64]eventlog.Type{keys[1].Seq: eventlog.MessageDeleted, keys[2].Seq: eventlog.MessageCreated}, types,
		"retained events by their whole key only, each once, whatever the order of the request")

	types, err = b.log.EventTypesByKey(ctx, nil)
	require.NoError(t, err)
	require.Empty(t, types)
}

func TestEventsByKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var keys []eventsync.EventKey
	for i, text := range []string{"hello Sam", "hello Alex", "hello Robin"} {
		b.clock.Set(start.Add(time.Duration(i) * time.Minute))
		require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
			got, err := b.appender.Append(ctx, messageEvent(text))
			keys = append(keys, key(got))
			return err
		}))
	}

	const neverAppended = 1 << 40
	stale := eventsync.EventKey{Seq: keys[0].Seq, OccurredAt: keys[1].OccurredAt}
	evs, err := b.log.EventsByKey(ctx, []eventsync.EventKey{keys[2], keys[1], {Seq: neverAppended, OccurredAt: start}, stale})
	require.NoError(t, err)
	require.Len(t, evs, 2, "retained events by their whole key only, whatever the order of the request")
	for _, k := range keys[1:] {
		one, ok, err := b.log.EventByKey(ctx, k)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, one, evs[k.Seq], "the same event as a read of its key alone")
	}

	evs, err = b.log.EventsByKey(ctx, nil)
	require.NoError(t, err)
	require.Empty(t, evs)
}

// BenchmarkEventRead reports reads of one event (the read of every delivery
// attempt) against the number of partitions of event_log, by key (the
// product) and by seq alone (what a read without the partition key costs:
// the index of every partition is probed), and of a delivery batch's 16
// events by their keys (EventsByKey, ADR 0088). The defaults
// (sync.event_retention 30d, sync.partition_interval 1d,
// sync.partition_ahead 3d) give a log of about 34 partitions.
func BenchmarkEventRead(b *testing.B) {
	for _, partitions := range []int{4, 34, 200} {
		for _, by := range []string{"key", "seq", "batch"} {
			b.Run(fmt.Sprintf("partitions=%d/by=%s", partitions, by), func(b *testing.B) {
				tb := setup(b)
				ctx := context.Background()
				maint, err := postgres.NewMaintainer(tb.db.App, postgres.MaintainerOptions{
					PartitionInterval: time.Hour, PartitionAhead: time.Duration(partitions-1) * time.Hour, EventRetention: 24 * time.Hour,
				})
				require.NoError(b, err)
				_, err = maint.Run(ctx, start)
				require.NoError(b, err)
				var n int
				require.NoError(b, tb.db.App.QueryRow(ctx, `SELECT count(*) FROM pg_inherits WHERE inhparent = 'event_log'::regclass`).Scan(&n))
				require.GreaterOrEqual(b, n, partitions)
				const events = 1000
				keys := make([]eventsync.EventKey, 0, events)
				require.NoError(b, tb.uow.Do(ctx, func(ctx context.Context) error {
					for range events {
						got, err := tb.appender.Append(ctx, messageEvent("a message of ordinary length for a benchmark"))
						if err != nil {
							return err
						}
						keys = append(keys, key(got))
					}
					return nil
				}))
				read := func(k eventsync.EventKey) error {
					_, ok, err := tb.log.EventByKey(ctx, k)
					if err == nil && !ok {
						err = fmt.Errorf("event %d not found", k.Seq)
					}
					return err
				}
				if by == "batch" {
					const batch = 16
					read = func(k eventsync.EventKey) error {
						from := int(k.Seq) % (events - batch)
						evs, err := tb.log.EventsByKey(ctx, keys[from:from+batch])
						if err == nil && len(evs) != batch {
							err = fmt.Errorf("%d of %d events found", len(evs), batch)
						}
						return err
					}
				}
				if by == "seq" {
					read = func(k eventsync.EventKey) error {
						var id string
						var payload []byte
						return tb.db.App.QueryRow(ctx, `SELECT id::text, payload FROM event_log WHERE seq = $1`, k.Seq).Scan(&id, &payload)
					}
				}
				b.ResetTimer()
				i := 0
				for b.Loop() {
					if err := read(keys[i%events]); err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reads/s")
			})
		}
	}
}

// TestReadRecentAfterLeavesOutEarlierStamps (ADR 0105): the read of the
// recent partitions gives the events after the seq stamped at or after
// since, in seq order, and leaves out one stamped earlier even when its
// seq is higher; the read of every partition gives all of them.
func TestReadRecentAfterLeavesOutEarlierStamps(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	_, err := b.maint.Run(ctx, start.Add(-5*time.Hour))
	require.NoError(t, err)
	first := b.appendMessage(t, "Alex, at start")
	b.clock.Set(start.Add(-5 * time.Hour))
	late := b.appendMessage(t, "Sam, stamped five hours before")
	b.clock.Set(start.Add(time.Minute))
	next := b.appendMessage(t, "Robin, a minute after start")

	seqs := func(evs []eventsync.Event) []int64 {
		var out []int64
		for _, ev := range evs {
			out = append(out, ev.Seq)
		}
		return out
	}
	var recent, all []eventsync.Event
	require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
		if recent, err = b.log.ReadRecentAfter(ctx, 0, start.Add(-time.Hour), 10); err != nil {
			return err
		}
		all, err = b.log.ReadAfter(ctx, 0, 10)
		return err
	}))
	require.Equal(t, []int64{first.Seq, next.Seq}, seqs(recent))
	require.Equal(t, []int64{first.Seq, late.Seq, next.Seq}, seqs(all))
}
