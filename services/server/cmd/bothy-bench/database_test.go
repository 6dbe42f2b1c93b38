package main

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestWarmWALLeavesSegmentsForReuse: after warmWAL the cluster holds WAL
// segments ahead of the one it writes, which its next segments reuse
// instead of making new files while commits wait.
func TestWarmWALLeavesSegmentsForReuse(t *testing.T) {
	c := &cluster{adminURL: pgtest.AdminURL(t)}
	require.NoError(t, c.warmWAL(t.Context(), 8))

	var ahead int
	require.NoError(t, c.with(t.Context(), "postgres", func(ctx context.Context, conn *pgx.Conn) error {
		return conn.QueryRow(ctx, `SELECT count(*) FROM pg_ls_waldir()
			WHERE name ~ '^[0-9A-F]{24}$' AND name > pg_walfile_name(pg_current_wal_lsn())`).Scan(&ahead)
	}))
	require.GreaterOrEqual(t, ahead, 4, "segments waiting for reuse after warming with 8")
}

// TestReadWALCountsWhatTheClusterWroteSinceTheReset: the WAL statistics
// start from nothing at the reset and count what commits write. The test
// cluster runs with fsync and track_wal_io_timing off, so it flushes
// nothing and times nothing; the benchmark's cluster does both (the wal
// line of every scenario).
func TestReadWALCountsWhatTheClusterWroteSinceTheReset(t *testing.T) {
	c := &cluster{adminURL: pgtest.AdminURL(t)}
	t.Cleanup(func() {
		_ = c.with(context.WithoutCancel(t.Context()), "postgres", func(ctx context.Context, conn *pgx.Conn) error {
			_, err := conn.Exec(ctx, "DROP TABLE IF EXISTS bench_wal")
			return err
		})
	})
	require.NoError(t, c.with(t.Context(), "postgres", func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, "CREATE TABLE bench_wal (n int)")
		return err
	}))
	require.NoError(t, c.resetWAL(t.Context()))
	got, err := c.readWAL(t.Context())
	require.NoError(t, err)
	require.Less(t, got.Bytes, int64(8192), "the reset starts from (nearly) nothing")

	require.NoError(t, c.with(t.Context(), "postgres", func(ctx context.Context, conn *pgx.Conn) error {
		for n := range 100 {
			if _, err := conn.Exec(ctx, "INSERT INTO bench_wal VALUES ($1)", n); err != nil {
				return err
			}
		}
		return nil
	}))
	// A backend hands its counts to the cluster's statistics when it
	// idles or ends, at most once a second.
	require.Eventually(t, func() bool {
		got, err = c.readWAL(t.Context())
		return err == nil && got.Bytes >= 100*50
	}, 15*time.Second, 100*time.Millisecond, "100 commits of a row each write their records")
	require.Zero(t, got.Flushes, "fsync is off in the test cluster")
	require.False(t, got.Timed, "track_wal_io_timing is off in the test cluster")
}

// TestAgeLogLeavesTheLogOfAServerThatRanForItsAge: after ageLog the event
// log has the partitions a server's maintenance leaves after the age (one
// per interval over the age and those ahead), the events of every day in
// them, and the webhooks consumer's cursor at their head, so a worker
// started on a copy does not read them again. Age zero changes nothing.
func TestAgeLogLeavesTheLogOfAServerThatRanForItsAge(t *testing.T) {
	db := pgtest.New(t)
	c := &cluster{adminURL: pgtest.AdminURL(t)}
	shape := logShape{Interval: 24 * time.Hour, Ahead: 3 * 24 * time.Hour, Retention: 30 * 24 * time.Hour}
	got, err := c.ageLog(t.Context(), db.Name, 0, 100, shape)
	require.NoError(t, err)
	require.Zero(t, got)
	var partitions, events int
	count := func() {
		require.NoError(t, db.Owner.QueryRow(t.Context(),
			`SELECT (SELECT count(*) FROM pg_inherits WHERE inhparent = 'event_log'::regclass), (SELECT count(*) FROM event_log)`).
			Scan(&partitions, &events))
	}
	count()
	require.Zero(t, events, "age zero inserts nothing")

	got, err = c.ageLog(t.Context(), db.Name, 10*24*time.Hour, 100, shape)
	require.NoError(t, err)
	count()
	require.Equal(t, agedLog{Age: 10 * 24 * time.Hour, Partitions: partitions, Events: events}, got, "what it reports")

	short := pgtest.New(t)
	got, err = c.ageLog(t.Context(), short.Name, 10*24*time.Hour, 100,
		logShape{Interval: shape.Interval, Ahead: shape.Ahead, Retention: 2 * 24 * time.Hour})
	require.NoError(t, err)
	require.Equal(t, 2*24*time.Hour, got.Age, "no older than the retention, which maintenance would drop")
	require.Equal(t, 2*100, got.Events)
	require.GreaterOrEqual(t, partitions, 10+3, "a partition per day of the age and per day ahead")
	require.LessOrEqual(t, partitions, 10+3+2, "and at most one more at each end")
	require.Equal(t, 10*100, events)
	var days int
	require.NoError(t, db.Owner.QueryRow(t.Context(),
		`SELECT count(DISTINCT date_trunc('day', occurred_at)) FROM event_log WHERE occurred_at < now()`).Scan(&days))
	require.GreaterOrEqual(t, days, 10, "events on every day of the age")
	var cursor, head int64
	require.NoError(t, db.Owner.QueryRow(t.Context(),
		`SELECT (SELECT last_seq FROM consumer_cursors WHERE name = 'webhooks'), (SELECT max(seq) FROM event_log)`).
		Scan(&cursor, &head))
	require.Equal(t, head, cursor, "the webhooks consumer starts after the aged log")
}

// TestSessionNamesGiveEachBackendItsApplicationName: a session that names
// itself is found under its backend's PID, as a bothy process's pool
// sessions are under "bothy-api" or "bothy-worker".
func TestSessionNamesGiveEachBackendItsApplicationName(t *testing.T) {
	c := &cluster{adminURL: pgtest.AdminURL(t)}
	cfg, err := pgx.ParseConfig(c.adminURL)
	require.NoError(t, err)
	cfg.RuntimeParams["application_name"] = "bothy-worker"
	conn, err := pgx.ConnectConfig(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.WithoutCancel(t.Context())) })
	pid := int(conn.PgConn().PID())

	names, err := c.sessionNames(t.Context())
	require.NoError(t, err)
	require.Equal(t, "bothy-worker", names[pid])
}
