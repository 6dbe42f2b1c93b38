package app_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
	eventsync "bothy/server/internal/sync"
	"bothy/server/internal/sync/adapters/postgres"
	"bothy/server/internal/sync/app"
)

// quietHandler handles every event without a statement of its own, so
// a test sees the round trips of the consumer frame alone.
type quietHandler struct{}

func (quietHandler) HandleEvent(context.Context, eventsync.Event) error { return nil }

// tracedRunner is a runner of h with options o whose unit of work, log
// and cursors use a pool that trips sees (the coordinator's session does
// not).
func (b *testBundle) tracedRunner(t *testing.T, trips *pgtest.Trips, h eventsync.ConsumerHandler, o app.Options) *app.Runner {
	t.Helper()
	return b.runnerOn(t, b.db.TracedApp(t, trips, 4), h, o)
}

// runnerOn is a runner of h with options o whose unit of work, log and
// cursors use pool.
func (b *testBundle) runnerOn(t *testing.T, pool *pgxpool.Pool, h eventsync.ConsumerHandler, o app.Options) *app.Runner {
	t.Helper()
	deps := b.deps
	deps.UoW = pg.NewUnitOfWork(pool, 3, 5*time.Second)
	deps.Events = postgres.NewLog(pool)
	deps.Cursors = postgres.NewCursors(pool, b.clock)
	r, err := app.NewRunner(consumer, h, deps, o)
	require.NoError(t, err)
	return r
}

// TestARoundTakesThreeRoundTrips (D-SY-17, D-SY-19, D-SY-26): a round
// sends its statements in three round trips: BEGIN with the read of the
// cursor; the question whether a stored horizon has settled (only when
// one is stored), the read of the log, the lock of the cursor and the
// read of the watermark, in that order; the cursor's write (only when it
// moves) with COMMIT. A round that read less than a full batch saw the
// end of the log, so it reads no head for the lag
// (TestARoundOfAFullBatchReadsTheHead). The statements keep the order the
// round needs (runner.go), and the round still holds back what follows a
// writer in flight and hands it out once the writer committed.
func TestARoundTakesThreeRoundTrips(t *testing.T) {
	t.Parallel()
	b := setup(t)
	trips := &pgtest.Trips{}
	r := b.tracedRunner(t, trips, quietHandler{}, defaultOptions)
	require.Zero(t, b.round(t, r)) // creates the cursor

	b.appendMessages(t, 2)
	trips.Take()
	require.Equal(t, 2, b.round(t, r))
	require.Equal(t, [][]string{
		{"begin", "SET LOCAL", "ConsumerCursorGet"},
		{"EventListAfter", "ConsumerCursorLock", "EventLogWatermarkMinRetainedSeq"},
		{"ConsumerCursorUpdate", "commit"},
	}, trips.TakeNames())

	a := b.holdAppend(t, "A")
	b.appendMessages(t, 1)
	require.Zero(t, b.round(t, r), "seq 4 waits for seq 3; the round stores the horizon")
	trips.Take()
	require.Zero(t, b.round(t, r), "and keeps waiting while A runs")
	require.Equal(t, [][]string{
		{"begin", "SET LOCAL", "ConsumerCursorGet"},
		{"ActivityWritersEndedBefore", "EventListAfter", "ConsumerCursorLock", "EventLogWatermarkMinRetainedSeq"},
		{"commit"},
	}, trips.TakeNames(), "the cursor stays, so it is not written")

	a.commit(t)
	require.Equal(t, 2, b.round(t, r), "A's seq 3 and seq 4, once A committed")
	require.Equal(t, int64(4), b.cursor(t))
}

// TestARoundOfAFullBatchReadsTheHead (D-SY-26): a round whose read of the
// log came back full may have left events after it, so it reads the head
// of the log with its COMMIT for the lag; the round after it, which reads
// the rest, does not. The lag is right both times: one event left, then
// none.
func TestARoundOfAFullBatchReadsTheHead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	trips := &pgtest.Trips{}
	r := b.tracedRunner(t, trips, quietHandler{}, app.Options{BatchSize: 2, PollInterval: time.Hour})
	require.Zero(t, b.round(t, r)) // creates the cursor
	b.appendMessages(t, 3)
	trips.Take()

	require.Equal(t, 2, b.round(t, r))
	got := trips.TakeNames()
	require.Equal(t, []string{"ConsumerCursorUpdate", "EventHeadSeq", "commit"}, got[len(got)-1], "%v", got)
	require.Equal(t, int64(1), lag(t, b))

	require.Equal(t, 1, b.round(t, r))
	got = trips.TakeNames()
	require.Equal(t, []string{"ConsumerCursorUpdate", "commit"}, got[len(got)-1], "%v", got)
	require.Equal(t, int64(0), lag(t, b))
}

// TestARunnersLaterRoundsTakeTwoRoundTrips (D-SY-22): a runner that holds
// its consumer knows where its last round left the cursor, so its later
// rounds send no read of the cursor: BEGIN travels with the read of the
// log, the lock of the cursor (which confirms what the runner knew) and
// the read of the watermark; the cursor's write, the read of the head and
// COMMIT follow. Only the runner's first round reads the cursor; a stored
// horizon is known as well.
func TestARunnersLaterRoundsTakeTwoRoundTrips(t *testing.T) {
	t.Parallel()
	b := setup(t)
	trips := &pgtest.Trips{}
	h := newSignalling()
	run(t, b.tracedRunner(t, trips, h, defaultOptions))
	first := b.appendMessages(t, 1)[0]
	waitFor(t, h.ch, first)
	b.waitForCursor(t, first)
	require.Contains(t, slices.Concat(trips.TakeNames()...), "ConsumerCursorGet", "the first round reads the cursor")

	second := b.appendMessages(t, 1)[0]
	waitFor(t, h.ch, second)
	b.waitForCursor(t, second)
	got := trips.TakeNames()
	require.NotContains(t, slices.Concat(got...), "ConsumerCursorGet", "a later round knows the cursor: %v", got)
	require.Contains(t, got, []string{"begin", "SET LOCAL", "EventListAfter", "ConsumerCursorLock", "EventLogWatermarkMinRetainedSeq"})
	require.Contains(t, got, []string{"ConsumerCursorUpdate", "commit"})

	// A round that stops at a writer in flight stores a horizon, which the
	// runner knows too: the round after it asks about the horizon in its
	// first round trip and handles both events once the writer committed.
	held := b.holdAppend(t, "A")
	after := b.appendMessages(t, 1)[0]
	require.Eventually(t, func() bool {
		var stored bool
		require.NoError(t, b.db.App.QueryRow(context.Background(),
			`SELECT gap_horizon IS NOT NULL FROM consumer_cursors WHERE name = $1`, string(consumer)).Scan(&stored))
		return stored
	}, 60*time.Second, 5*time.Millisecond, "the round never stored the horizon of seq %d", held.seq)
	trips.Take()
	held.commit(t)
	waitFor(t, h.ch, after)
	b.waitForCursor(t, after)
	got = trips.TakeNames()
	require.NotContains(t, slices.Concat(got...), "ConsumerCursorGet", "the runner knows the stored horizon: %v", got)
	require.Contains(t, got, []string{"begin", "SET LOCAL", "ActivityWritersEndedBefore", "EventListAfter", "ConsumerCursorLock", "EventLogWatermarkMinRetainedSeq"})
	require.Equal(t, []int64{first, second, held.seq, after}, h.handled(), "every event once, in order")
}

// settingProbe is a handler that reads, in the round's transaction, the
// synchronous_commit its COMMIT will use.
type settingProbe struct {
	pool *pgxpool.Pool
	mu   sync.Mutex
	seen []string
}

func (p *settingProbe) HandleEvent(ctx context.Context, _ eventsync.Event) error {
	var v string
	if err := pg.Conn(ctx, p.pool).QueryRow(ctx, `SELECT current_setting('synchronous_commit')`).Scan(&v); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, v)
	return nil
}

// TestARoundCommitsWithoutWaitingForItsFlush (D-SY-25): a round's COMMIT
// does not wait for its WAL to reach the disk, because a round lost in a
// crash runs again from the cursor, and what leaves the database on the
// strength of its rows waits for a later commit that flushes (the claim
// of a delivery). The setting is the round's alone: the same connection
// commits everything else as the database says (here on; the test
// cluster itself runs with it off).
func TestARoundCommitsWithoutWaitingForItsFlush(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.db.Owner.Exec(context.Background(), `ALTER DATABASE `+b.db.Name+` SET synchronous_commit = on`)
	require.NoError(t, err)
	pool := b.db.TracedApp(t, &pgtest.Trips{}, 1)
	probe := &settingProbe{pool: pool}
	r := b.runnerOn(t, pool, probe, defaultOptions)

	b.appendMessages(t, 2)
	require.Equal(t, 2, b.round(t, r))
	require.Equal(t, []string{"off", "off"}, probe.seen, "the round's COMMIT waits for no flush")
	var after string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT current_setting('synchronous_commit')`).Scan(&after))
	require.Equal(t, "on", after, "the round's connection (the pool has one) commits the next transaction as the database says")
}
