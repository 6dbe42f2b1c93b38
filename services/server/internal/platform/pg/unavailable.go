package pg

import (
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// IsUnavailable reports whether err means that the database cannot be
// reached or does not accept work for now, so that the same call may
// succeed once PostgreSQL is back: the HTTP layer answers 503 unavailable
// with Retry-After instead of 500 internal, and a starting role waits and
// tries again (internal/wire). It is true for
//
//   - a connection that could not be opened (refused, unreachable, DNS, a
//     timeout while connecting: *pgconn.ConnectError), unless the server
//     answered with an error of its own (for example 28P01, a failed
//     authentication, which waiting does not fix);
//   - a connection lost mid-statement (a network error, an unexpected end
//     of the stream) or already closed by pgx (pgconn.SafeToRetry: the
//     statement never left the process);
//   - SQLSTATE class 08 (connection exception), 57P01 admin_shutdown,
//     57P02 crash_shutdown, 57P03 cannot_connect_now (starting up or in
//     recovery), 53300 too_many_connections, and 25006
//     read_only_sql_transaction (a write reached a standby after a
//     failover; bothy never opens read-only transactions itself).
//
// Everything else, including constraint violations, bad input that
// reached a statement, deadlocks, cancelled contexts and nil, is not an
// outage.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	// A server error decides by its SQLSTATE; it is checked first because a
	// pgconn.ConnectError wraps the server's answer.
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03", "53300", "25006":
			return true
		}
		return len(pgErr.Code) == 5 && pgErr.Code[:2] == "08"
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return true
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || pgconn.SafeToRetry(err)
}
