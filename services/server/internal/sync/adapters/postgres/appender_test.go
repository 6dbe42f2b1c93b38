package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
	eventsync "bothy/server/internal/sync"
	"bothy/server/internal/sync/adapters/postgres"
	"bothy/server/internal/sync/domain"
)

func TestAppendStoresTheEventInTheUnitOfWork(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.clock.Set(start.Add(1234567891 * time.Nanosecond))
	thread := ids.New()
	ev := messageEvent("hello Sam")
	ev.ThreadID = thread
	var got eventlog.Appended
	require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
		var err error
		got, err = b.appender.Append(ctx, ev)
		return err
	}))
	require.Equal(t, int64(1), got.Seq)
	require.False(t, got.ID.IsZero())

	stored, ok, err := b.log.EventByKey(ctx, key(got))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, got.ID, stored.ID)
	require.Equal(t, eventlog.MessageCreated, stored.Type)
	require.Equal(t, authorize.KindMessage, stored.ResourceKind, "from the catalogue")
	require.Equal(t, authorize.MessageRead, stored.ReceiveAction, "from the catalogue")
	require.Equal(t, ev.ResourceID, stored.ResourceID)
	require.Equal(t, support, stored.SpaceID)
	require.Equal(t, allgemein, stored.ChannelID)
	require.Equal(t, thread, stored.ThreadID)
	require.True(t, stored.AudiencePrincipalID.IsZero(), "NULL reads as Zero")
	require.Equal(t, alex, stored.ActorID)
	require.JSONEq(t, `{"author_id":"`+alex.String()+`","text":"hello Sam"}`, string(stored.Payload))
	require.False(t, stored.Truncated)
	require.Equal(t, start.Add(1234567*time.Microsecond), stored.OccurredAt, "the fake clock's time cut to microseconds")
}

func TestAppendPersonalEventAndTruncatedText(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	app := ids.New()
	var got eventlog.Appended
	require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
		var err error
		got, err = b.appender.Append(ctx, eventlog.Event{
			Type: eventlog.AppInstallationUpdated, ResourceID: ids.New(), AudiencePrincipalID: app,
			Payload: map[string]any{"note": strings.Repeat("x", 100)},
		})
		return err
	}))
	stored, ok, err := b.log.EventByKey(ctx, key(got))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, app, stored.AudiencePrincipalID)
	require.Equal(t, authorize.ReceiveSelf, stored.ReceiveAction)
	require.True(t, stored.ActorID.IsZero(), "a system event has no actor")
	require.True(t, stored.Truncated)
	var p map[string]string
	require.NoError(t, json.Unmarshal(stored.Payload, &p))
	require.Len(t, p["note"], 64, "cut to sync.payload_text_max_bytes")
}

// TestAppendAllStoresEveryEventInItsOrderWithOneStatement (ADR 0099):
// the events of one call go with one statement, their seqs ascending in
// the order of the call, each returned where it landed; a second call in
// the same unit of work continues after them.
func TestAppendAllStoresEveryEventInItsOrderWithOneStatement(t *testing.T) {
	t.Parallel()
	trips := &pgtest.Trips{}
	b := setupTraced(t, trips)
	ctx := context.Background()
	texts := make([]string, 40)
	evs := make([]eventlog.Event, len(texts))
	for i := range texts {
		texts[i] = fmt.Sprintf("message %d for Robin", i)
		evs[i] = messageEvent(texts[i])
	}
	personal := eventlog.Event{Type: eventlog.AppInstallationUpdated, ResourceID: ids.New(), AudiencePrincipalID: alex}
	evs = append(evs, personal)
	var got, after []eventlog.Appended
	trips.Take()
	require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
		var err error
		if got, err = b.appender.AppendAll(ctx, evs); err != nil {
			return err
		}
		after, err = b.appender.AppendAll(ctx, []eventlog.Event{messageEvent("after them")})
		return err
	}))
	appends := 0
	for _, trip := range trips.TakeNames() {
		for _, name := range trip {
			if name == "EventLogAppend" {
				appends++
			}
		}
	}
	require.Equal(t, 2, appends, "one statement per call")
	require.Len(t, got, len(evs))
	for i, a := range got {
		require.Equal(t, int64(i+1), a.Seq, "seqs in the order of the call")
		stored, ok, err := b.log.EventByKey(ctx, key(a))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, a.ID, stored.ID)
		require.Equal(t, evs[i].ResourceID, stored.ResourceID)
		if i < len(texts) {
			require.JSONEq(t, `{"author_id":"`+alex.String()+`","text":"`+texts[i]+`"}`, string(stored.Payload))
		}
	}
	last, _, err := b.log.EventByKey(ctx, key(got[len(got)-1]))
	require.NoError(t, err)
	require.Equal(t, alex, last.AudiencePrincipalID)
	require.True(t, last.ChannelID.IsZero(), "a NULL among the arrays stays NULL")
	require.Equal(t, []int64{int64(len(evs) + 1)}, []int64{after[0].Seq})

	none, err := appendAllIn(b, nil)
	require.NoError(t, err)
	require.Empty(t, none)
	require.Equal(t, len(evs)+1, countEvents(t, b.db))
}

// TestAppendAllWithOneInvalidEventStoresNone: one event refused refuses
// the call; none of its events is written.
func TestAppendAllWithOneInvalidEventStoresNone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := appendAllIn(b, []eventlog.Event{messageEvent("fine"), {Type: "message.exploded", ResourceID: ids.New()}})
	require.ErrorIs(t, err, domain.ErrUnknownType)
	require.Zero(t, countEvents(t, b.db))
}

// appendAllIn calls AppendAll with evs in a unit of work of its own.
func appendAllIn(b *testBundle, evs []eventlog.Event) ([]eventlog.Appended, error) {
	var got []eventlog.Appended
	err := b.uow.Do(context.Background(), func(ctx context.Context) error {
		var err error
		got, err = b.appender.AppendAll(ctx, evs)
		return err
	})
	return got, err
}

func TestAppendOutsideAUnitOfWorkIsAnError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.appender.Append(context.Background(), messageEvent("hello"))
	require.ErrorIs(t, err, postgres.ErrNoUnitOfWork)
	require.Zero(t, countEvents(t, b.db))
}

func TestAppendRejectsInvalidEventsAndStoresNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ev   eventlog.Event
		want error
	}{
		{"a payload with a null deep inside", eventlog.Event{Type: eventlog.MessageCreated, ResourceID: ids.New(),
			Payload: map[string]any{"a": []any{map[string]any{"b": nil}}}}, domain.ErrPayloadNull},
		{"a type outside the catalogue", eventlog.Event{Type: "message.exploded", ResourceID: ids.New()}, domain.ErrUnknownType},
		{"a personal type without audience", eventlog.Event{Type: eventlog.AppInstallationUpdated, ResourceID: ids.New()}, domain.ErrAudience},
		{"a shared type with an audience", eventlog.Event{Type: eventlog.ChannelCreated, ResourceID: ids.New(), AudiencePrincipalID: alex}, domain.ErrAudience},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			err := b.uow.Do(context.Background(), func(ctx context.Context) error {
				_, err := b.appender.Append(ctx, tc.ev)
				return err
			})
			require.ErrorIs(t, err, tc.want)
			require.Zero(t, countEvents(t, b.db))
		})
	}
}

func TestAppendWithoutPartitionSaysPartitionsAreMissing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.clock.Advance(testMaintainerOptions.PartitionAhead + 2*time.Hour)
	err := b.uow.Do(context.Background(), func(ctx context.Context) error {
		_, err := b.appender.Append(ctx, messageEvent("too late"))
		return err
	})
	require.ErrorIs(t, err, postgres.ErrNoPartition)
	require.Contains(t, err.Error(), "partition maintenance must run")
	require.Zero(t, countEvents(t, b.db))
}

func TestAppendInARolledBackUnitOfWorkLeavesNoEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	boom := errors.New("use case failed after the append")
	require.ErrorIs(t, b.uow.Do(ctx, func(ctx context.Context) error {
		if _, err := b.appender.Append(ctx, messageEvent("never")); err != nil {
			return err
		}
		return boom
	}), boom)
	require.Zero(t, countEvents(t, b.db))

	next := b.appendMessage(t, "kept")
	require.Equal(t, int64(2), next.Seq, "the rolled-back append burnt seq 1")
	_, ok, err := b.log.EventByKey(ctx, eventsync.EventKey{Seq: 1, OccurredAt: next.OccurredAt})
	require.NoError(t, err)
	require.False(t, ok)
	min, err := b.log.MinRetainedSeq(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), min, "a burnt seq is a gap, not a loss")
}

func TestNewAppenderRefusesBadOptions(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	waker := postgres.NewWaker(db.App, slog.New(slog.DiscardHandler), time.Second)
	_, err := postgres.NewAppender(nil, waker, postgres.AppenderOptions{PayloadTextMaxBytes: 1})
	require.Error(t, err)
	_, err = postgres.NewAppender(clock.Real{}, nil, postgres.AppenderOptions{PayloadTextMaxBytes: 1})
	require.Error(t, err)
	_, err = postgres.NewAppender(clock.Real{}, waker, postgres.AppenderOptions{})
	require.Error(t, err)
}

// BenchmarkAppend reports events appended per second, each in its own unit
// of work (the shape of a use case that posts one message).
// BenchmarkAppend appends one event per unit of work from a number of
// concurrent writers (the api's posters), each on its own connection of the
// pool. Shape: writers=1, 16 and 64 on one database; events/s is the rate of
// all writers together. Before ADR 0070 every append held one lock through
// its commit, so the rate did not grow with the writers.
func BenchmarkAppend(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			tb := setup(b)
			ctx := context.Background()
			ev := messageEvent("a message of ordinary length for a benchmark")
			left := atomic.Int64{}
			left.Store(int64(b.N))
			errs := make(chan error, writers)
			b.ResetTimer()
			var wg sync.WaitGroup
			for range writers {
				wg.Go(func() {
					for left.Add(-1) >= 0 {
						if err := tb.uow.Do(ctx, func(ctx context.Context) error {
							_, err := tb.appender.Append(ctx, ev)
							return err
						}); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// TestAppendRunsUnderAGenericPlan (D-SQ-26): after PostgreSQL's five
// custom plans the append's prepared statement runs under its generic
// plan, so a post does not plan the append anew at every call (fleet
// measured 0.038 ms of planning per delivery for it).
func TestAppendRunsUnderAGenericPlan(t *testing.T) {
	t.Parallel()
	b := setup(t)
	one := b.db.TracedApp(t, nil, 1)
	b.uow = pg.NewUnitOfWork(one, 3, 5*time.Second)
	ctx := context.Background()
	for i := range 12 {
		evs := []eventlog.Event{messageEvent("Hello Sam")}
		for range i % 3 {
			evs = append(evs, messageEvent("and Robin"))
		}
		_, err := appendAllIn(b, evs)
		require.NoError(t, err)
	}
	var generic, custom int64
	require.NoError(t, one.QueryRow(ctx, `SELECT generic_plans, custom_plans FROM pg_prepared_statements
		WHERE statement LIKE '%name: ' || 'EventLogAppend %'`).Scan(&generic, &custom))
	require.Equal(t, int64(5), custom, "PostgreSQL's five custom plans before it compares")
	require.Equal(t, int64(7), generic, "then the generic plan for every later call")
}
