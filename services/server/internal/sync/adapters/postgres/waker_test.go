package postgres_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/sync/adapters/postgres"
)

// listen returns a connection of pool that listens on NotifyChannel.
func listen(t *testing.T, pool *pgxpool.Pool) *pgxpool.Conn {
	t.Helper()
	conn, err := pool.Acquire(context.Background())
	require.NoError(t, err)
	t.Cleanup(conn.Release)
	_, err = conn.Exec(context.Background(), `LISTEN `+postgres.NotifyChannel)
	require.NoError(t, err)
	return conn
}

// nextWakeUp waits for the next notification of conn.
func nextWakeUp(t *testing.T, conn *pgxpool.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := conn.Conn().WaitForNotification(ctx)
	require.NoError(t, err, "no wake-up arrived")
	require.Equal(t, postgres.NotifyChannel, n.Channel)
}

// TestAppendWakesTheConsumersAfterItCommitted (ADR 0091): the appending
// transaction notifies nothing; once it committed, the Waker notifies,
// and a consumer woken by it finds the event.
func TestAppendWakesTheConsumersAfterItCommitted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	conn := listen(t, b.db.App)
	appended := b.appendMessage(t, "hello Sam")
	nextWakeUp(t, conn)
	var seq int64
	require.NoError(t, conn.QueryRow(context.Background(), `SELECT max(seq) FROM event_log`).Scan(&seq))
	require.Equal(t, appended.Seq, seq)
}

// TestWakerNotifiesAfterEveryWake: every Wake is followed by a
// notification, also when many come at once, which share notifications
// (never more notifications than wake-ups).
func TestWakerNotifiesAfterEveryWake(t *testing.T) {
	t.Parallel()
	b := setup(t)
	conn := listen(t, b.db.App)
	w := postgres.NewWaker(b.db.App, slog.New(slog.DiscardHandler), time.Second)
	for range 3 {
		w.Wake()
		nextWakeUp(t, conn)
	}

	const wakes = 50
	var wg sync.WaitGroup
	for range wakes {
		wg.Go(w.Wake)
	}
	wg.Wait()
	nextWakeUp(t, conn)
	notifications := 1
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		_, err := conn.Conn().WaitForNotification(ctx)
		cancel()
		if err != nil {
			break
		}
		notifications++
	}
	require.LessOrEqual(t, notifications, wakes, "wake-ups at once share their notifications")
}

// TestWakerWarnsOfAFailedNotificationByItsClassOnly: a notification that
// fails (here: the pool is closed) is logged as a warning naming the
// error's class, never its message, and the next Wake tries again.
func TestWakerWarnsOfAFailedNotificationByItsClassOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pool, err := pgxpool.NewWithConfig(context.Background(), b.db.App.Config().Copy())
	require.NoError(t, err)
	pool.Close()
	out := &httpservertest.LogBuffer{}
	w := postgres.NewWaker(pool, slog.New(slog.NewJSONHandler(out, nil)), time.Second)
	for want := 1; want <= 2; want++ {
		w.Wake()
		deadline := time.Now().Add(10 * time.Second)
		for strings.Count(out.String(), "waking the event log's consumers failed") < want {
			require.True(t, time.Now().Before(deadline), "no warning for wake-up %d: %s", want, out.String())
			time.Sleep(10 * time.Millisecond)
		}
	}
	require.Eventually(t, w.Carry, 10*time.Second, 5*time.Millisecond, "the Waker's goroutine ended")
	w.Carried(errors.New("notify failed: closed pool"))
	require.Equal(t, 3, strings.Count(out.String(), "waking the event log's consumers failed"),
		"a carried notification that failed is logged as the Waker's are")
	logged := out.String()
	require.Contains(t, logged, `"level":"WARN"`)
	require.Contains(t, logged, `"error.type"`)
	require.NotContains(t, logged, "closed pool", "the error's message stays out of the log")
}

// TestWakerCarriedNotificationsShareLikeItsOwn (ADR 0094): while a unit
// of work carries the notification with its COMMIT (Carry), no other may
// and the Waker sends none; a Wake meanwhile gets the notification after
// the carried one ended, whatever its outcome, and a carried one that
// did not go leaves nothing behind when nobody waited.
func TestWakerCarriedNotificationsShareLikeItsOwn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	conn := listen(t, b.db.App)
	w := postgres.NewWaker(b.db.App, slog.New(slog.DiscardHandler), time.Second)

	require.True(t, w.Carry())
	require.False(t, w.Carry(), "one notification on its way at a time")
	w.Wake()
	noWakeUp(t, conn)
	w.Carried(pg.ErrNotFollowed)
	nextWakeUp(t, conn)

	require.Eventually(t, w.Carry, 10*time.Second, 5*time.Millisecond, "free again once the Waker's notification went")
	w.Carried(pg.ErrNotFollowed)
	noWakeUp(t, conn)
	require.True(t, w.Carry(), "a carried notification that did not go and that nobody waited for leaves nothing")
	w.Carried(nil)
	noWakeUp(t, conn)
}

// noWakeUp asserts that no notification of conn arrives for a while.
func noWakeUp(t *testing.T, conn *pgxpool.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	n, err := conn.Conn().WaitForNotification(ctx)
	require.Error(t, err, "an extra wake-up arrived: %+v", n)
}

// TestAppendInALastCarriesTheWakeUpAndGivesItBack (ADR 0094): an append
// in a txn.Last, with no notification on its way, carries the wake-up
// with its COMMIT: the consumer is woken, and the Waker is free again as
// soon as the unit of work returned. A unit of work that rolls back wakes
// no one and gives the Waker back too, so no later wake-up waits for it.
func TestAppendInALastCarriesTheWakeUpAndGivesItBack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	conn := listen(t, b.db.App)
	w := postgres.NewWaker(b.db.App, slog.New(slog.DiscardHandler), time.Second)
	appender, err := postgres.NewAppender(b.clock, w, postgres.AppenderOptions{PayloadTextMaxBytes: 64})
	require.NoError(t, err)
	ctx := context.Background()
	appendLast := func(ctx context.Context) error {
		return txn.Last(ctx, func(ctx context.Context) error {
			_, err := appender.Append(ctx, messageEvent("hello Sam"))
			return err
		})
	}

	require.NoError(t, b.uow.Do(ctx, appendLast))
	nextWakeUp(t, conn)
	require.True(t, w.Carry(), "the carried notification ended with its unit of work")
	w.Carried(pg.ErrNotFollowed)

	require.Error(t, b.uow.Do(ctx, func(ctx context.Context) error {
		return txn.Last(ctx, func(ctx context.Context) error {
			_, err := appender.Append(ctx, messageEvent("never seen"))
			return err
		}, func(ctx context.Context) error {
			// Fails in the round trip of the COMMIT, which the server then
			// skips: the unit of work rolls back.
			_, err := pg.Conn(ctx, b.db.App).Exec(ctx, `SELECT 1 / 0`)
			return err
		})
	}))
	require.True(t, w.Carry(), "a unit of work that carried and rolled back gave the Waker back")
	w.Carried(pg.ErrNotFollowed)
	noWakeUp(t, conn)
}
