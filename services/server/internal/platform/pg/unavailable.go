package pg

import (
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable reports whether err means that the database cannot be reached
// or does not accept work for now, so that the same call may succeed once
// PostgreSQL is back: a refused or broken connection, a timeout while
// connecting, SQLSTATE class 08 (connection exception), 57P01 to 57P03
// (administrator or crash shutdown, cannot connect now) and 53300 (too
// many connections). Any other error, including a failed authentication
// (28P01) or a missing table, is a mistake that waiting does not fix, and
// Unavailable returns false for it and for nil.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	// A server error decides by its SQLSTATE; it is checked first because a
	// pgconn.ConnectError wraps the server's answer (for example 28P01).
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03", "53300":
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
