package errs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/errs"
)

type classified struct{}

func (classified) Error() string     { return "refused https://hooks.example.com" }
func (classified) ErrorType() string { return "address_blocked" }

type badClass struct{}

func (badClass) Error() string     { return "x" }
func (badClass) ErrorType() string { return "has spaces and https://hooks.example.com" }

type custom struct{}

func (*custom) Error() string { return "custom" }

func TestClass(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil has no type", nil, ""},
		{"a class declared by the error wins", fmt.Errorf("wrap: %w", classified{}), "address_blocked"},
		{"a declared class that is not a code is replaced", badClass{}, "_OTHER"},
		{"a bothy error gives its code", errs.NotFound(), "not_found"},
		{"a bothy error gives code and reason", fmt.Errorf("use case: %w", errs.Forbidden("scope_missing")), "forbidden/scope_missing"},
		{"an internal error without a cause gives internal", errs.Internalf("apps: a locking read needs a unit of work"), "internal"},
		{"an internal error gives the class of its cause", errs.Wrap(&pgconn.PgError{Code: "40P01", Message: "deadlock (Sam)"}, "loading"), "pg_40P01"},
		{"a deadline gives deadline_exceeded", fmt.Errorf("query: %w", context.DeadlineExceeded), "deadline_exceeded"},
		{"a cancellation gives canceled", context.Canceled, "canceled"},
		{"a PostgreSQL error gives its SQLSTATE", fmt.Errorf("insert: %w", &pgconn.PgError{Code: "23505", Message: "duplicate key (Alex)"}), "pg_23505"},
		{"an unexpected EOF gives the innermost type", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), "_OTHER"},
		{"a custom type gives its Go type name", fmt.Errorf("a: %w", fmt.Errorf("b: %w", &custom{})), "*errs_test.custom"},
		{"a joined error gives its first member", errors.Join(&custom{}, io.EOF), "*errs_test.custom"},
		{"a plain message gives _OTHER", errors.New("GET https://hooks.example.com"), "_OTHER"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, errs.Class(tc.err))
		})
	}
}

func TestSQLStateIsTheDatabasesAnswer(t *testing.T) {
	t.Parallel()
	code, ok := errs.SQLState(errs.Wrap(fmt.Errorf("insert: %w", &pgconn.PgError{Code: "23514"}), "chat: insert message failed"))
	require.True(t, ok)
	require.Equal(t, "23514", code)
	for _, err := range []error{nil, io.ErrUnexpectedEOF, context.DeadlineExceeded, errs.NotFound()} {
		code, ok := errs.SQLState(err)
		require.False(t, ok, "%v", err)
		require.Empty(t, code)
	}
}
