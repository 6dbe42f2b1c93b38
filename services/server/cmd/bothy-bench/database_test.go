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
