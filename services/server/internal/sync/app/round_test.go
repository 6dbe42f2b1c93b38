package app_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"bothy/server/internal/platform/otel/attr"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/sync/adapters/postgres"
	"bothy/server/internal/sync/app"
)

func TestRoundHandlesEventsInSeqOrderAndMovesTheCursor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	seqs := b.appendMessages(t, 3)
	h := newRecorder(b.db)
	n, err := b.runner(t, h, defaultOptions).RunRound(context.Background())
	require.NoError(t, err)
	require.Equal(t, 3, n)
	_, handled := h.snapshot()
	require.Equal(t, seqs, handled)
	require.Equal(t, seqs[2], b.cursor(t))
	require.Equal(t, seqs, b.marks(t))

	n, err = b.runner(t, h, defaultOptions).RunRound(context.Background())
	require.NoError(t, err)
	require.Zero(t, n, "nothing after the cursor")
}

func TestRoundsReadAtMostABatch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.appendMessages(t, 5)
	h := newRecorder(b.db)
	r := b.runner(t, h, app.Options{BatchSize: 2, PollInterval: time.Hour})
	for _, want := range []int{2, 2, 1, 0} {
		n, err := r.RunRound(context.Background())
		require.NoError(t, err)
		require.Equal(t, want, n)
	}
	_, handled := h.snapshot()
	require.Equal(t, []int64{1, 2, 3, 4, 5}, handled)
}

// TestRoundCallsHandleLost is the test of the gap found from the lost range of
// a round (D-M2-26-5): a consumer whose cursor fell behind a partition dropped
// through the fake clock and the partition maintenance learns the lost range
// once, before its first event; an error rolls the round back, so neither the
// cursor nor anything the handler wrote moves; a handler without the interface
// runs as before.
func TestRoundCallsHandleLost(t *testing.T) {
	t.Parallel()
	// arrange: events 1 and 2 in the 09:00 partition, 3 in the 10:00 one;
	// the consumer's cursor exists (at 0) before the 09:00 partition is
	// dropped; event 4 comes after the drop.
	arrange := func(t *testing.T) *testBundle {
		b := setup(t)
		_, err := b.runner(t, newRecorder(b.db), defaultOptions).RunRound(context.Background())
		require.NoError(t, err)
		b.appendMessages(t, 2)
		b.clock.Set(time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC))
		b.appendMessages(t, 1)
		b.clock.Set(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
		r, err := b.maint.Run(context.Background(), b.clock.Now())
		require.NoError(t, err)
		require.Equal(t, 1, r.Dropped)
		b.appendMessages(t, 1)
		return b
	}

	t.Run("a loss handler gets the range once, before the first event", func(t *testing.T) {
		t.Parallel()
		b := arrange(t)
		h := &lossRecorder{recorder: newRecorder(b.db)}
		r := b.runner(t, h, defaultOptions)
		n, err := r.RunRound(context.Background())
		require.NoError(t, err)
		require.Equal(t, 2, n)
		calls, _ := h.snapshot()
		require.Equal(t, []string{"lost 1-2", "event 3", "event 4"}, calls)
		require.Equal(t, int64(4), b.cursor(t))
		require.Equal(t, []int64{-1, 3, 4}, b.marks(t))

		b.appendMessages(t, 1)
		h.reset()
		_, err = r.RunRound(context.Background())
		require.NoError(t, err)
		calls, _ = h.snapshot()
		require.Equal(t, []string{"event 5"}, calls, "the loss is reported once")
	})

	t.Run("an error of the loss handler rolls the round back", func(t *testing.T) {
		t.Parallel()
		b := arrange(t)
		boom := errors.New("loss handler failed")
		h := &lossRecorder{recorder: newRecorder(b.db), lostErr: boom}
		_, err := b.runner(t, h, defaultOptions).RunRound(context.Background())
		require.ErrorIs(t, err, boom)
		calls, _ := h.snapshot()
		require.Equal(t, []string{"lost 1-2"}, calls, "no event after a failed HandleLost")
		require.Zero(t, b.cursor(t), "the cursor did not move")
		require.Empty(t, b.marks(t), "the handler's write was rolled back")

		h.lostErr = nil
		h.reset()
		_, err = b.runner(t, h, defaultOptions).RunRound(context.Background())
		require.NoError(t, err)
		calls, _ = h.snapshot()
		require.Equal(t, []string{"lost 1-2", "event 3", "event 4"}, calls, "the next round reports the loss again")
	})

	t.Run("a handler without the interface runs as before", func(t *testing.T) {
		t.Parallel()
		b := arrange(t)
		h := newRecorder(b.db)
		n, err := b.runner(t, h, defaultOptions).RunRound(context.Background())
		require.NoError(t, err)
		require.Equal(t, 2, n)
		calls, _ := h.snapshot()
		require.Equal(t, []string{"event 3", "event 4"}, calls)
		require.Equal(t, int64(4), b.cursor(t))
	})

	t.Run("with nothing left the cursor moves past the lost range", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.runner(t, newRecorder(b.db), defaultOptions).RunRound(context.Background())
		require.NoError(t, err)
		b.appendMessages(t, 2)
		_, err = b.maint.Run(context.Background(), time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC))
		require.NoError(t, err)
		h := &lossRecorder{recorder: newRecorder(b.db)}
		n, err := b.runner(t, h, defaultOptions).RunRound(context.Background())
		require.NoError(t, err)
		require.Zero(t, n)
		calls, _ := h.snapshot()
		require.Equal(t, []string{"lost 1-2"}, calls)
		require.Equal(t, int64(2), b.cursor(t))
	})
}

func TestHandlerErrorRollsBackTheRound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := newRecorder(b.db)
	_, err := b.runner(t, h, defaultOptions).RunRound(context.Background()) // creates the cursor at 0
	require.NoError(t, err)
	b.appendMessages(t, 3)
	h.failAt = 2
	_, err = b.runner(t, h, defaultOptions).RunRound(context.Background())
	require.ErrorIs(t, err, errHandler)
	require.Zero(t, b.cursor(t), "the cursor stays where it was")
	require.Empty(t, b.marks(t), "the marks of events 1 and 2 were rolled back")

	h.failAt = 0
	h.reset()
	n, err := b.runner(t, h, defaultOptions).RunRound(context.Background())
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.Equal(t, []int64{1, 2, 3}, b.marks(t), "the retry handled every event once")
	require.Equal(t, int64(3), b.cursor(t))
}

func TestARolledBackAppendIsNoLoss(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := &lossRecorder{recorder: newRecorder(b.db)}
	r := b.runner(t, h, defaultOptions)
	_, err := r.RunRound(context.Background()) // creates the cursor
	require.NoError(t, err)
	boom := errors.New("use case failed")
	require.ErrorIs(t, b.uow.Do(context.Background(), func(ctx context.Context) error {
		if _, err := b.appender.Append(ctx, message("never committed")); err != nil {
			return err
		}
		return boom
	}), boom)
	b.appendMessages(t, 1)
	// The first round sees the gap at seq 1 and cannot tell a burnt seq from
	// one in flight; the second knows every writer of it has ended
	// (domain.Settle, ADR 0070).
	n, err := r.RunRound(context.Background())
	require.NoError(t, err)
	require.Zero(t, n)
	n, err = r.RunRound(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, n)
	calls, _ := h.snapshot()
	require.Equal(t, []string{"event 2"}, calls, "seq 1 was burnt, not lost: no HandleLost")
	require.Equal(t, int64(2), b.cursor(t))
}

// TestCommitOrderNeverSkipsAnEvent: unit of work A appends first and commits
// last, B appends second; a round runs after B committed and before A
// commits. A round that moved the cursor to 2 would never see seq 1,
// committed afterwards. The round waits at the gap instead (domain.Settle,
// ADR 0070), so the consumer sees 1 and 2 in order, none skipped. (Before
// ADR 0070 B's append waited for A's commit behind a lock; the test accepts
// either and asserts the order.)
func TestCommitOrderNeverSkipsAnEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	h := newRecorder(b.db)
	r := b.runner(t, h, defaultOptions)
	_, err := r.RunRound(ctx) // creates the cursor
	require.NoError(t, err)

	aAppended, aCommit := make(chan struct{}), make(chan struct{})
	aDone, bDone := make(chan error, 1), make(chan error, 1)
	go func() {
		aDone <- b.uow.Do(ctx, func(ctx context.Context) error {
			if _, err := b.appender.Append(ctx, message("A")); err != nil {
				return err
			}
			close(aAppended)
			<-aCommit
			return nil
		})
	}()
	<-aAppended
	go func() {
		bDone <- b.uow.Do(ctx, func(ctx context.Context) error {
			_, err := b.appender.Append(ctx, message("B"))
			return err
		})
	}()
	// Wait until B either committed (no lock) or waits for the lock.
	deadline := time.After(60 * time.Second)
	for waiting := false; !waiting; {
		select {
		case err := <-bDone:
			require.NoError(t, err)
			bDone <- nil
			waiting = true
		case <-deadline:
			t.Fatal("B neither committed nor waited for the append lock")
		case <-time.After(10 * time.Millisecond):
			require.NoError(t, b.db.App.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted)`).Scan(&waiting))
		}
	}

	_, err = r.RunRound(ctx) // between the two commits
	require.NoError(t, err)
	close(aCommit)
	require.NoError(t, <-aDone)
	require.NoError(t, <-bDone)
	_, err = r.RunRound(ctx)
	require.NoError(t, err)

	_, handled := h.snapshot()
	require.Equal(t, []int64{1, 2}, handled)
}

// TestConsumerLagIsObservable: the lag is the events after the cursor at
// the end of a round: one after a full batch, none once the rest is read,
// and the events a round holds behind a writer in flight (D-SY-26: a
// round that read less than a full batch counts them from its read).
func TestConsumerLagIsObservable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.appendMessages(t, 3)
	r := b.runner(t, newRecorder(b.db), app.Options{BatchSize: 2, PollInterval: time.Hour})
	for _, want := range []int64{1, 0} {
		_, err := r.RunRound(context.Background())
		require.NoError(t, err)
		require.Equal(t, want, lag(t, b))
	}

	a := b.holdAppend(t, "A")
	b.appendMessages(t, 1)
	require.Zero(t, b.round(t, r), "seq 5 waits for A's seq 4")
	require.Equal(t, int64(2), lag(t, b), "A's seq and the one held behind it")
	a.commit(t)
	require.Equal(t, 2, b.round(t, r))
	require.Equal(t, int64(0), lag(t, b))
}

func lag(t *testing.T, b *testBundle) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, b.metrics.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "bothy.consumer.lag" {
				continue
			}
			g, ok := m.Data.(metricdata.Gauge[int64])
			require.True(t, ok, "bothy.consumer.lag is an int64 gauge")
			for _, dp := range g.DataPoints {
				if v, ok := dp.Attributes.Value(attr.Consumer); ok && v == attribute.StringValue(string(consumer)) {
					return dp.Value
				}
			}
		}
	}
	t.Fatal("no bothy.consumer.lag data point for the consumer")
	return 0
}

// BenchmarkConsumerRound reports events per second through full rounds of a
// trivial handler (consumer.batch_size 100).
func BenchmarkConsumerRound(b *testing.B) {
	tb := setup(b)
	ctx := context.Background()
	const batch = 100
	_, err := tb.db.App.Exec(ctx, `
		INSERT INTO event_log (seq, id, type, resource_kind, resource_id, receive_action, payload, occurred_at)
		SELECT nextval('event_log_seq'), uuidv7(), 'message.created', 'message', uuidv7(), 'message.read',
		       '{"text": "a message of ordinary length for a benchmark"}', $1
		FROM generate_series(1, $2)`, start, b.N*batch)
	if err != nil {
		b.Fatal(err)
	}
	r, err := app.NewRunner(consumer, nopHandler{}, tb.deps, app.Options{BatchSize: batch, PollInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if n, err := r.RunRound(ctx); err != nil || n != batch {
			b.Fatalf("round handled %d: %v", n, err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkQuietRoundOverAMonthOfLog reports the time from the append of
// one event to its handling by a running consumer (a quiet round, as at
// 200 messages/s) over the event log of a server with the default
// partitioning after a month: sync.partition_interval 1 day,
// sync.event_retention 30 days, sync.partition_ahead 3 days, so 34
// partitions, with 1,000 events a day in the 30 past ones. every-partition
// reads the log after the cursor in every partition, as every round did
// before ADR 0105 (the partition key is occurred_at, not seq);
// recent-partitions reads those of the last day alone (ADR 0105). The
// append itself is not timed.
func BenchmarkQuietRoundOverAMonthOfLog(b *testing.B) {
	for _, bc := range []struct {
		name   string
		window time.Duration
	}{{"every-partition", 0}, {"recent-partitions", 24 * time.Hour}} {
		b.Run(bc.name, func(b *testing.B) {
			tb := monthOfLog(b)
			h := newSignalling()
			// Under generic plans, as internal/wire runs the consumers
			// (D-SQ-20): a custom plan would prune at planning, at every
			// round.
			deps := tb.deps
			deps.UoW = pg.NewUnitOfWork(tb.db.App, 3, 5*time.Second).GenericPlans()
			r, err := app.NewRunner(consumer, h, deps, app.Options{BatchSize: 100, PollInterval: time.Hour, RecentWindow: bc.window})
			require.NoError(b, err)
			run(b, r)
			waitFor(b, h.ch, tb.appendMessages(b, 1)[0])
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				seq := tb.appendMessages(b, 1)[0]
				b.StartTimer()
				waitFor(b, h.ch, seq)
			}
		})
	}
}

// monthOfLog is setup over the event log of a server with the default
// partitioning after a month (BenchmarkQuietRoundOverAMonthOfLog), its
// consumer's cursor at the head.
func monthOfLog(b *testing.B) *testBundle {
	b.Helper()
	const (
		day          = 24 * time.Hour
		retention    = 30 * day
		eventsPerDay = 1000
	)
	tb := setupPartitioned(b, postgres.MaintainerOptions{
		PartitionInterval: day, PartitionAhead: 3 * day, EventRetention: retention,
	})
	ctx := context.Background()
	// A maintainer runs daily: each run made the partitions of its day.
	for at := start.Add(-retention); at.Before(start); at = at.Add(day) {
		_, err := tb.maint.Run(ctx, at)
		require.NoError(b, err)
	}
	var partitions int
	require.NoError(b, tb.db.App.QueryRow(ctx,
		`SELECT count(*) FROM pg_inherits WHERE inhparent = 'event_log'::regclass`).Scan(&partitions))
	require.Equal(b, 34, partitions)
	_, err := tb.db.App.Exec(ctx, `
		INSERT INTO event_log (seq, id, type, resource_kind, resource_id, receive_action, payload, occurred_at)
		SELECT nextval('event_log_seq'), uuidv7(), 'message.created', 'message', uuidv7(), 'message.read',
		       '{"text": "a message of ordinary length for a benchmark"}',
		       $1::timestamptz + (g * $2::bigint / $3::bigint) * interval '1 microsecond'
		FROM generate_series(0, $3::bigint - 1) g`, start.Add(-retention), retention.Microseconds(), 30*eventsPerDay)
	require.NoError(b, err)
	_, err = tb.db.Owner.Exec(ctx, `ANALYZE event_log`)
	require.NoError(b, err)
	catchUp, err := app.NewRunner(consumer, nopHandler{}, tb.deps, app.Options{BatchSize: 10000, PollInterval: time.Hour})
	require.NoError(b, err)
	for {
		n, err := catchUp.RunRound(ctx)
		require.NoError(b, err)
		if n == 0 {
			return tb
		}
	}
}

// TestRoundCallsEndRoundAfterItsEvents: a handler with
// sync.ConsumerRoundEnder is told once per round, in the round's
// transaction, after the round's last event; a round without events does
// not call it, and an error of EndRound rolls the round back, so neither
// the cursor nor anything the handler wrote moves.
func TestRoundCallsEndRoundAfterItsEvents(t *testing.T) {
	t.Parallel()
	t.Run("once per round, after the last event", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		seqs := b.appendMessages(t, 3)
		h := &endRecorder{recorder: newRecorder(b.db)}
		r := b.runner(t, h, app.Options{BatchSize: 2, PollInterval: time.Hour})
		for range 3 {
			_, err := r.RunRound(context.Background())
			require.NoError(t, err)
		}
		calls, _ := h.snapshot()
		require.Equal(t, []string{"event 1", "event 2", "end", "event 3", "end"}, calls, "the third round has no event and no end")
		require.Equal(t, seqs[2], b.cursor(t))
	})

	t.Run("an error of EndRound rolls the round back", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		boom := errors.New("end of round failed")
		h := &endRecorder{recorder: newRecorder(b.db), endErr: boom}
		// A round without events creates the cursor and calls no EndRound.
		_, err := b.runner(t, h, defaultOptions).RunRound(context.Background())
		require.NoError(t, err)
		b.appendMessages(t, 2)
		_, err = b.runner(t, h, defaultOptions).RunRound(context.Background())
		require.ErrorIs(t, err, boom)
		require.Zero(t, b.cursor(t), "the cursor did not move")
		require.Empty(t, b.marks(t), "the handler's writes were rolled back")

		h.endErr = nil
		h.reset()
		n, err := b.runner(t, h, defaultOptions).RunRound(context.Background())
		require.NoError(t, err)
		require.Equal(t, 2, n)
		calls, _ := h.snapshot()
		require.Equal(t, []string{"event 1", "event 2", "end"}, calls)
		require.Equal(t, []int64{0, 1, 2}, b.marks(t))
	})
}
