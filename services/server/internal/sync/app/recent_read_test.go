package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/sync/adapters/postgres"
	"bothy/server/internal/sync/app"
)

// recentOptions are the options of a runner that reads the recent
// partitions alone (ADR 0105): an hour before the last event it handled,
// with a full read at least every poll.
func recentOptions(poll time.Duration) app.Options {
	return app.Options{BatchSize: 100, PollInterval: poll, RecentWindow: time.Hour}
}

// appendStampedAt appends one event stamped at, as an api process whose
// clock says at would (a late or a skewed stamp), and returns its seq.
// The partitions of at must exist.
func (b *testBundle) appendStampedAt(t *testing.T, at time.Time) int64 {
	t.Helper()
	appender, err := postgres.NewAppender(clock.NewFake(at),
		postgres.NewWaker(b.db.App, slog.New(slog.DiscardHandler), time.Second), postgres.AppenderOptions{PayloadTextMaxBytes: 1024})
	require.NoError(t, err)
	var seq int64
	require.NoError(t, b.uow.Do(context.Background(), func(ctx context.Context) error {
		got, err := appender.Append(ctx, message("Alex, stamped by a clock of its own"))
		seq = got.Seq
		return err
	}))
	return seq
}

// runRecent runs a runner of b with recentOptions(poll), whose round
// trips it returns, and hands it a first event, which it returns, so its
// later rounds know where they are and when the last event was stamped.
func (b *testBundle) runRecent(t *testing.T, poll time.Duration) (*pgtest.Trips, *signalling, int64) {
	t.Helper()
	trips := &pgtest.Trips{}
	h := newSignalling()
	run(t, b.tracedRunner(t, trips, h, recentOptions(poll)))
	first := b.appendMessages(t, 1)[0]
	waitFor(t, h.ch, first)
	b.waitForCursor(t, first)
	return trips, h, first
}

// TestALaterRoundOfRunReadsTheRecentPartitions (ADR 0105): once a runner
// handled an event, its rounds read the partitions of the events stamped
// within the window before it alone (EventListRecentAfter), and every
// event still arrives once, in order.
func TestALaterRoundOfRunReadsTheRecentPartitions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	trips, h, first := b.runRecent(t, time.Hour)
	require.Contains(t, slices.Concat(trips.TakeNames()...), "EventListAfter", "the first round reads every partition")

	later := b.appendMessages(t, 2)
	waitFor(t, h.ch, later[1])
	b.waitForCursor(t, later[1])
	got := slices.Concat(trips.TakeNames()...)
	require.Contains(t, got, "EventListRecentAfter", "a later round reads the recent partitions: %v", got)
	require.NotContains(t, got, "EventListAfter", "and not every partition: %v", got)
	require.Equal(t, append([]int64{first}, later...), h.handled(), "every event once, in order")
}

// TestAnEventStampedBeforeTheWindowIsHandledInItsOrder (ADR 0105): an
// event stamped five hours earlier (by a clock behind, or a post that
// took that long) is missing from a read of the recent partitions. The
// event after it shows the gap, so the round handles nothing past the
// cursor and the next one reads every partition: both events arrive, in
// their order.
func TestAnEventStampedBeforeTheWindowIsHandledInItsOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.maint.Run(context.Background(), start.Add(-5*time.Hour))
	require.NoError(t, err)
	trips, h, first := b.runRecent(t, time.Hour)

	late := b.appendStampedAt(t, start.Add(-5*time.Hour))
	next := b.appendMessages(t, 1)[0]
	waitFor(t, h.ch, next)
	require.Equal(t, []int64{first, late, next}, h.handled(), "the late event in its place")
	got := slices.Concat(trips.TakeNames()...)
	require.Contains(t, got, "EventListRecentAfter", "%v", got)
	require.Contains(t, got, "EventListAfter", "the gap made a round read every partition: %v", got)
}

// TestAnEventStampedBeforeTheWindowWithNoneAfterItArrivesWithinAPoll (ADR
// 0105): with no later event to show its gap, a late event is read by the
// first round that reads every partition, which is at most about a
// consumer.poll_interval after the last one.
func TestAnEventStampedBeforeTheWindowWithNoneAfterItArrivesWithinAPoll(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.maint.Run(context.Background(), start.Add(-5*time.Hour))
	require.NoError(t, err)
	_, h, first := b.runRecent(t, 200*time.Millisecond)

	late := b.appendStampedAt(t, start.Add(-5*time.Hour))
	waitFor(t, h.ch, late)
	require.Equal(t, []int64{first, late}, h.handled())
}

// lossSignalling is signalling that also records the losses it is told
// of (sync.ConsumerLossHandler), as "lost from-to".
type lossSignalling struct {
	*signalling
	lost []string
}

func (l *lossSignalling) HandleLost(_ context.Context, from, to int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lost = append(l.lost, fmt.Sprintf("lost %d-%d", from, to))
	return nil
}

// TestALossFoundByARecentReadIsReportedOnce (ADR 0105): retention dropped
// the seq after the cursor of a runner that reads recently (here a seq
// taken and the watermark raised over it, with no NOTIFY). The watermark
// tells the loss whatever the read, so the recent round reports it once
// and hands out the event that follows the lost range.
func TestALossFoundByARecentReadIsReportedOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	trips := &pgtest.Trips{}
	h := &lossSignalling{signalling: newSignalling()}
	run(t, b.tracedRunner(t, trips, h, recentOptions(time.Hour)))
	first := b.appendMessages(t, 1)[0]
	waitFor(t, h.ch, first)
	b.waitForCursor(t, first)
	trips.Take()

	var dropped int64
	require.NoError(t, b.db.Owner.QueryRow(ctx, `SELECT nextval('event_log_seq')`).Scan(&dropped))
	_, err := b.db.Owner.Exec(ctx, `UPDATE event_log_watermark SET dropped_through_seq = $1`, dropped)
	require.NoError(t, err)
	next := b.appendMessages(t, 1)[0]
	waitFor(t, h.ch, next)
	b.waitForCursor(t, next)
	h.mu.Lock()
	lost := slices.Clone(h.lost)
	h.mu.Unlock()
	require.Equal(t, []string{fmt.Sprintf("lost %d-%d", dropped, dropped)}, lost, "reported once")
	require.Equal(t, []int64{first, next}, h.handled())
	require.Contains(t, slices.Concat(trips.TakeNames()...), "EventListRecentAfter")
}
