package app_test

import (
	"context"
	"testing"
	"time"

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

// TestARoundTakesThreeRoundTrips (D-SY-17, D-SY-19): a round sends its
// statements in three round trips: BEGIN with the read of the cursor; the
// question whether a stored horizon has settled (only when one is
// stored), the read of the log, the lock of the cursor and the read of
// the watermark, in that order; the cursor's write (only when it moves)
// with the read of the head and COMMIT. The statements keep the order the
// round needs (runner.go), and the round still holds back what follows a
// writer in flight and hands it out once the writer committed.
func TestARoundTakesThreeRoundTrips(t *testing.T) {
	t.Parallel()
	b := setup(t)
	trips := &pgtest.Trips{}
	pool := b.db.TracedApp(t, trips, 4)
	deps := b.deps
	deps.UoW = pg.NewUnitOfWork(pool, 3, 5*time.Second)
	deps.Events = postgres.NewLog(pool)
	deps.Cursors = postgres.NewCursors(pool, b.clock)
	r, err := app.NewRunner(consumer, quietHandler{}, deps, defaultOptions)
	require.NoError(t, err)
	require.Zero(t, b.round(t, r)) // creates the cursor

	b.appendMessages(t, 2)
	trips.Take()
	require.Equal(t, 2, b.round(t, r))
	require.Equal(t, [][]string{
		{"begin", "SET LOCAL", "ConsumerCursorGet"},
		{"EventListAfter", "ConsumerCursorLock", "EventLogWatermarkMinRetainedSeq"},
		{"ConsumerCursorUpdate", "EventHeadSeq", "commit"},
	}, trips.TakeNames())

	a := b.holdAppend(t, "A")
	b.appendMessages(t, 1)
	require.Zero(t, b.round(t, r), "seq 4 waits for seq 3; the round stores the horizon")
	trips.Take()
	require.Zero(t, b.round(t, r), "and keeps waiting while A runs")
	require.Equal(t, [][]string{
		{"begin", "SET LOCAL", "ConsumerCursorGet"},
		{"ActivityWritersEndedBefore", "EventListAfter", "ConsumerCursorLock", "EventLogWatermarkMinRetainedSeq"},
		{"EventHeadSeq", "commit"},
	}, trips.TakeNames(), "the cursor stays, so it is not written")

	a.commit(t)
	require.Equal(t, 2, b.round(t, r), "A's seq 3 and seq 4, once A committed")
	require.Equal(t, int64(4), b.cursor(t))
}
