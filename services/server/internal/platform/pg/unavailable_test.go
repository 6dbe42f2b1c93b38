package pg_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

// TestIsUnavailableKnowsAnOutageFromAFault separates the errors of a
// database that cannot be reached right now (503 unavailable) from faults
// of the statement or the code (500 internal).
func TestIsUnavailableKnowsAnOutageFromAFault(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"08000", "08003", "08006", "08001", "08004", "57P01", "57P02", "57P03", "53300", "25006"} {
		require.True(t, pg.IsUnavailable(fmt.Errorf("query: %w", &pgconn.PgError{Code: code})), code)
	}
	for _, code := range []string{"23505", "22021", "40001", "40P01", "42P01", "57014"} {
		require.False(t, pg.IsUnavailable(&pgconn.PgError{Code: code}), code)
	}
	require.True(t, pg.IsUnavailable(fmt.Errorf("read: %w", &net.OpError{Op: "read", Err: errors.New("connection reset by peer")})))
	require.True(t, pg.IsUnavailable(fmt.Errorf("read: %w", io.ErrUnexpectedEOF)))
	require.False(t, pg.IsUnavailable(errs.NotFound()))
	require.False(t, pg.IsUnavailable(context.Canceled))
	require.False(t, pg.IsUnavailable(nil))
}

// TestIsUnavailableOnRealOutages provokes the outages on a real server:
// a refused connection and an administrator shutdown of the session.
func TestIsUnavailableOnRealOutages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	_, err = pgx.Connect(ctx, "postgres://bothy_app@"+addr+"/bothy?connect_timeout=5")
	require.Error(t, err)
	require.True(t, pg.IsUnavailable(err), "connection refused: %T", err)

	db := pgtest.New(t)
	conn, err := pgx.Connect(ctx, db.AppURL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(ctx) })
	// A role may end its own sessions: this one is ended as by an
	// administrator (57P01), mid-statement.
	_, err = conn.Exec(ctx, "SELECT pg_terminate_backend(pg_backend_pid())")
	require.Error(t, err)
	require.True(t, pg.IsUnavailable(err), "administrator shutdown: %v", err)
	_, err = conn.Exec(ctx, "SELECT 1")
	require.Error(t, err)
	require.True(t, pg.IsUnavailable(err), "the closed connection afterwards: %T %v", err, err)
}

// TestIsUnavailableTellsRealOutagesFromMistakes uses real failures: a terminated
// backend (57P01, as when PostgreSQL restarts) and a refused connection wait
// for the database; a missing table and nil do not.
func TestIsUnavailableTellsRealOutagesFromMistakes(t *testing.T) {
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
	require.True(t, pg.IsUnavailable(terminated), "a terminated connection: %v", terminated)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	_, refused := pg.Open(ctx, pg.Options{URL: "postgres://bothy_app@" + addr + "/bothy?sslmode=disable&connect_timeout=5"})
	require.Error(t, refused)
	require.True(t, pg.IsUnavailable(refused), "a refused connection: %v", refused)

	_, missing := db.App.Exec(ctx, `SELECT * FROM no_such_table`)
	require.Error(t, missing)
	require.False(t, pg.IsUnavailable(missing), "a missing table is a mistake")
	require.False(t, pg.IsUnavailable(errors.New("pg: something else")))
	require.False(t, pg.IsUnavailable(nil))
}
