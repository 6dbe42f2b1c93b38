package app_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	eventsync "bothy/server/internal/sync"
	"bothy/server/internal/sync/app"
)

// maintainDuringRound is the real event source with partition maintenance
// started, on another connection, right after the round's first read of
// the log: retention dropping a partition between the round's reads. It
// waits until the maintenance committed or waits for a lock in this test's
// database (the round's; other tests share the cluster, not the database),
// so the interleaving is forced either way.
type maintainDuringRound struct {
	app.EventSource
	b       *testBundle
	t       *testing.T
	at      time.Time
	started atomic.Bool
	done    chan error
}

func (m *maintainDuringRound) afterFirstRead() {
	if !m.started.CompareAndSwap(false, true) {
		return
	}
	go func() {
		_, err := m.b.maint.Run(context.Background(), m.at)
		m.done <- err
	}()
	for {
		select {
		case err := <-m.done:
			m.done <- err
			return
		case <-time.After(5 * time.Millisecond):
		}
		if m.b.db.LockWaits(m.t, "") > 0 {
			return
		}
	}
}

func (m *maintainDuringRound) MinRetainedSeq(ctx context.Context) (int64, error) {
	seq, err := m.EventSource.MinRetainedSeq(ctx)
	m.afterFirstRead()
	return seq, err
}

func (m *maintainDuringRound) ReadAfter(ctx context.Context, after int64, limit int) ([]eventsync.Event, error) {
	evs, err := m.EventSource.ReadAfter(ctx, after, limit)
	m.afterFirstRead()
	return evs, err
}

// TestRoundNeverSkipsAnEventDroppedDuringTheRound (D-M2-26-36): partition
// maintenance drops the partition of events 1 and 2 while a round runs,
// between its reads of the log. Every event is either handed to the
// handler or reported in a lost range, never neither.
func TestRoundNeverSkipsAnEventDroppedDuringTheRound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.runner(t, newRecorder(b.db), defaultOptions).RunRound(context.Background())
	require.NoError(t, err)
	b.appendMessages(t, 2)
	b.clock.Set(time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC))
	b.appendMessages(t, 1)

	src := &maintainDuringRound{EventSource: b.deps.Events, b: b, t: t,
		at: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), done: make(chan error, 1)}
	deps := b.deps
	deps.Events = src
	h := &lossRecorder{recorder: newRecorder(b.db)}
	r, err := app.NewRunner(consumer, h, deps, defaultOptions)
	require.NoError(t, err)
	_, err = r.RunRound(context.Background())
	require.NoError(t, err)
	require.NoError(t, <-src.done, "the maintenance ran")
	for {
		n, err := r.RunRound(context.Background())
		require.NoError(t, err)
		if n == 0 {
			break
		}
	}

	calls, _ := h.snapshot()
	seen := map[int64]bool{}
	for _, c := range calls {
		var from, to, seq int64
		if n, _ := fmt.Sscanf(c, "lost %d-%d", &from, &to); n == 2 {
			for s := from; s <= to; s++ {
				seen[s] = true
			}
			continue
		}
		if n, _ := fmt.Sscanf(c, "event %d", &seq); n == 1 {
			seen[seq] = true
		}
	}
	for seq := int64(1); seq <= 3; seq++ {
		require.True(t, seen[seq], "event %d was neither handled nor reported lost (calls %v)", seq, calls)
	}
}
