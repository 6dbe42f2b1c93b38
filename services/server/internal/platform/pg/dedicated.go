package pg

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// dedicatedCloseTimeout bounds CloseDedicated: the close sends one
// Terminate message, so a server that does not take it within this time
// is gone anyway.
const dedicatedCloseTimeout = 5 * time.Second

// DedicatedConnConfig returns the configuration of a connection held
// outside pool for a session of its own (a LISTEN, a session-level
// advisory lock): the same URL, role and parameters, and cancelling a wait
// only sets a deadline on the socket instead of opening a connection for a
// cancel request, since such a connection is closed right after anyway
// (CloseDedicated). Connect with pgx.ConnectConfig(ctx, cfg.Copy()).
func DedicatedConnConfig(pool *pgxpool.Pool) *pgx.ConnConfig {
	cfg := pool.Config().ConnConfig.Copy()
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	return cfg
}

// CloseDedicated closes a connection made from DedicatedConnConfig,
// waiting at most dedicatedCloseTimeout; the error is of no use to the
// caller, which drops the connection either way.
func CloseDedicated(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), dedicatedCloseTimeout)
	defer cancel()
	_ = conn.Close(ctx)
}
