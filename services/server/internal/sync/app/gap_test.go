package app_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/sync/app"
)

// heldAppend is a unit of work that appended one event and waits for the
// test to let it commit or roll back.
type heldAppend struct {
	seq     int64
	release chan error // nil commits, an error rolls back
	done    chan error
}

// holdAppend starts a unit of work that appends text and stays open. A
// test that ends without letting it go (a failed assertion) rolls it back,
// so the test fails at once instead of waiting for its open transaction
// at the drop of its database.
func (b *testBundle) holdAppend(t *testing.T, text string) *heldAppend {
	t.Helper()
	h := &heldAppend{release: make(chan error, 1), done: make(chan error, 1)}
	t.Cleanup(func() {
		select {
		case h.release <- errRolledBack:
		default:
		}
	})
	appended := make(chan int64, 1)
	go func() {
		h.done <- b.uow.Do(context.Background(), func(ctx context.Context) error {
			got, err := b.appender.Append(ctx, message(text))
			if err != nil {
				close(appended)
				return err
			}
			appended <- got.Seq
			return <-h.release
		})
	}()
	seq, ok := <-appended
	if !ok {
		t.Fatalf("the held append failed: %v", <-h.done)
	}
	h.seq = seq
	return h
}

func (h *heldAppend) commit(t *testing.T) {
	t.Helper()
	h.release <- nil
	require.NoError(t, <-h.done)
}

var errRolledBack = errors.New("rolled back on purpose")

func (h *heldAppend) rollBack(t *testing.T) {
	t.Helper()
	h.release <- errRolledBack
	require.ErrorIs(t, <-h.done, errRolledBack)
}

// olderWriter opens a transaction on its own connection that holds a
// transaction id and nothing else: a writer of another module that started
// before a round and is still running.
func (b *testBundle) olderWriter(t *testing.T) pgx.Tx {
	t.Helper()
	tx, err := b.db.App.Begin(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	_, err = tx.Exec(context.Background(), `SELECT pg_current_xact_id()`)
	require.NoError(t, err)
	return tx
}

func (b *testBundle) round(t *testing.T, r *app.Runner) int {
	t.Helper()
	n, err := r.RunRound(context.Background())
	require.NoError(t, err)
	return n
}

// TestAppendsDoNotWaitForEachOther (ADR 0070): a second append commits
// while the first one's unit of work is still open, instead of queueing
// behind a lock held until the first commits.
func TestAppendsDoNotWaitForEachOther(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.holdAppend(t, "A")
	defer first.commit(t)

	done := make(chan error, 1)
	go func() {
		done <- b.uow.Do(context.Background(), func(ctx context.Context) error {
			_, err := b.appender.Append(ctx, message("B"))
			return err
		})
	}()
	for {
		select {
		case err := <-done:
			require.NoError(t, err, "B committed while A was open")
			return
		case <-time.After(5 * time.Millisecond):
		}
		require.Zero(t, b.db.LockWaits(t, ""), "B waits for a lock that A holds")
	}
}

// TestAWriterInFlightHoldsBackTheEventsAfterItsSeq: A takes seq 1 and stays
// open, B takes seq 2 and commits. Rounds hand out nothing while A runs (seq
// 1 may still appear), then 1 and 2 in order once A committed.
func TestAWriterInFlightHoldsBackTheEventsAfterItsSeq(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := newRecorder(b.db)
	r := b.runner(t, h, defaultOptions)
	require.Zero(t, b.round(t, r)) // creates the cursor

	a := b.holdAppend(t, "A")
	b.appendMessages(t, 1)
	require.Zero(t, b.round(t, r), "seq 2 waits for seq 1")
	require.Zero(t, b.round(t, r), "and keeps waiting while A runs")
	require.Zero(t, b.cursor(t))

	a.commit(t)
	require.Equal(t, 2, b.round(t, r))
	_, handled := h.snapshot()
	require.Equal(t, []int64{1, 2}, handled)
	require.Equal(t, int64(2), b.cursor(t))
	require.Equal(t, []int64{1, 2}, b.marks(t))
}

// TestAGapOfARolledBackWriterIsPassedOnceItEnded: A takes seq 1 and rolls
// back after a round saw B's seq 2. The next round knows A has ended (no
// transaction older than the first round runs) and hands out seq 2 without
// reporting a loss.
func TestAGapOfARolledBackWriterIsPassedOnceItEnded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := &lossRecorder{recorder: newRecorder(b.db)}
	r := b.runner(t, h, defaultOptions)
	require.Zero(t, b.round(t, r)) // creates the cursor

	a := b.holdAppend(t, "A")
	b.appendMessages(t, 1)
	require.Zero(t, b.round(t, r))
	a.rollBack(t)
	require.Equal(t, 1, b.round(t, r))
	calls, _ := h.snapshot()
	require.Equal(t, []string{"event 2"}, calls, "seq 1 was burnt, not lost")
	require.Equal(t, int64(2), b.cursor(t))
}

// TestAnOlderWriterHoldsBackOnlyWhatFollowsAGap: a transaction of another
// module that started before the rounds and keeps running does not delay
// events without gaps. A burnt seq, though, is passed only once every
// transaction older than the round that saw it has ended: the round cannot
// tell which of them took the seq. That wait is the price of appends
// without a lock (ADR 0070).
func TestAnOlderWriterHoldsBackOnlyWhatFollowsAGap(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := newRecorder(b.db)
	r := b.runner(t, h, defaultOptions)
	require.Zero(t, b.round(t, r)) // creates the cursor

	older := b.olderWriter(t)
	b.appendMessages(t, 3)
	require.Equal(t, 3, b.round(t, r), "no gap, no wait")

	a := b.holdAppend(t, "burnt")
	a.rollBack(t)
	b.appendMessages(t, 1)
	require.Zero(t, b.round(t, r), "the gap at 4 is seen")
	require.Zero(t, b.round(t, r), "the older writer may have taken 4")
	require.NoError(t, older.Rollback(context.Background()))
	require.Equal(t, 1, b.round(t, r))
	_, handled := h.snapshot()
	require.Equal(t, []int64{1, 2, 3, 5}, handled)
}

// TestConcurrentWritersAndARunningConsumerMissNothing: writers on several
// connections append at once, some of them rolling back, while the
// consumer runs in the background as in a worker. Every committed event is
// handled exactly once, in seq order; no rolled-back seq is reported lost.
func TestConcurrentWritersAndARunningConsumerMissNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := newSignalling()
	r := b.runner(t, &lossFailing{h}, app.Options{BatchSize: 7, PollInterval: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()

	const writers, appends = 6, 40
	var mu sync.Mutex
	var committed []int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range appends {
				var seq int64
				rollBack := rng.IntN(5) == 0
				err := b.uow.Do(context.Background(), func(ctx context.Context) error {
					got, err := b.appender.Append(ctx, message(fmt.Sprintf("writer %d append %d", w, i)))
					if err != nil {
						return err
					}
					seq = got.Seq
					if rng.IntN(2) == 0 {
						time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond) // commit later than others
					}
					if rollBack {
						return errRolledBack
					}
					return nil
				})
				if rollBack {
					require.ErrorIs(t, err, errRolledBack)
					continue
				}
				require.NoError(t, err)
				mu.Lock()
				committed = append(committed, seq)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.NotEmpty(t, committed)
	var highest int64
	for _, s := range committed {
		highest = max(highest, s)
	}
	waitFor(t, h.ch, highest)
	cancel()
	require.NoError(t, <-ran)

	handled := h.handled()
	want := append([]int64(nil), committed...)
	slices.Sort(want)
	require.Equal(t, want, handled, "every committed event once, in seq order")
}

// lossFailing is a handler that fails the round on a reported loss: in
// TestConcurrentWritersAndARunningConsumerMissNothing nothing is ever lost.
type lossFailing struct{ *signalling }

func (lossFailing) HandleLost(context.Context, int64, int64) error {
	return errors.New("no event may be reported lost")
}
