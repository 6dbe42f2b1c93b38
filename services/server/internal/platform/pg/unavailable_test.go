package pg_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

// TestUnavailableTellsOutagesFromMistakes uses real failures: a terminated
// backend (57P01, as when PostgreSQL restarts) and a refused connection wait
// for the database; a missing table and nil do not.
func TestUnavailableTellsOutagesFromMistakes(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()

	victim, err := pgx.Connect(ctx, db.AppURL)
	require.NoError(t, err)
	defer func() { _ = victim.Close(ctx) }()
	var pid uint32
	require.NoError(t, victim.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid))
	var killed bool
	require.NoError(t, db.App.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, pid).Scan(&killed))
	require.True(t, killed)
	_, terminated := victim.Exec(ctx, `SELECT 1`)
	require.Error(t, terminated)
	require.True(t, pg.Unavailable(terminated), "a terminated connection: %v", terminated)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	_, refused := pg.Open(ctx, pg.Options{URL: "postgres://bothy_app@" + addr + "/bothy?sslmode=disable&connect_timeout=5"})
	require.Error(t, refused)
	require.True(t, pg.Unavailable(refused), "a refused connection: %v", refused)

	_, missing := db.App.Exec(ctx, `SELECT * FROM no_such_table`)
	require.Error(t, missing)
	require.False(t, pg.Unavailable(missing), "a missing table is a mistake")
	require.False(t, pg.Unavailable(errors.New("pg: something else")))
	require.False(t, pg.Unavailable(nil))
}
