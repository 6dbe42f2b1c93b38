package pg

import (
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// IsUnavailable reports whether err means that the database cannot be
// reached right now, so that the same request may succeed later and the
// client should retry (the HTTP layer answers 503 unavailable with
// Retry-After instead of 500 internal):
//
//   - a connection that could not be opened (refused, unreachable, DNS,
//     authentication timeout: *pgconn.ConnectError);
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
// reached a statement, deadlocks and cancelled contexts, is not an outage.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03", "53300", "25006":
			return true
		}
		return strings.HasPrefix(pgErr.Code, "08")
	}
	var connect *pgconn.ConnectError
	var netErr *net.OpError
	switch {
	case errors.As(err, &connect), errors.As(err, &netErr), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return true
	}
	// A statement on a connection that pgx closed after a fatal error never
	// left the process; pgx marks such errors as safe to retry.
	return pgconn.SafeToRetry(err)
}
