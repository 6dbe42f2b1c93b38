package main

import (
	"context"
	"testing"

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
