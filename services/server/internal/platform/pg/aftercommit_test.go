package pg_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/platform/pg"
)

// TestAfterCommitRunsOnceTheUnitOfWorkCommitted (ADR 0091): a function
// given to txn.AfterCommit runs once the outermost unit of work committed,
// before Do returns, and then sees what the unit of work wrote from any
// connection; whether it was registered in the unit of work, in a nested
// Do, in a function of Together or with a Last that committed. A unit of
// work that fails runs none; an attempt that is retried drops its own.
// Outside a unit of work the function runs at once.
func TestAfterCommitRunsOnceTheUnitOfWorkCommitted(t *testing.T) {
	t.Parallel()
	pool, _ := togetherWorld(t)
	ctx := context.Background()
	uow := pg.NewUnitOfWork(pool, 2, time.Second)

	// seen returns a function that records the rows committed when it runs.
	var runs []int
	seen := func() func() {
		return func() { runs = append(runs, probeRows(t, pool)) }
	}

	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		txn.AfterCommit(ctx, seen())
		require.Empty(t, runs, "not before the commit")
		if err := uow.Do(ctx, func(ctx context.Context) error {
			txn.AfterCommit(ctx, seen())
			return insertProbe(1, "Alex")(ctx)
		}); err != nil {
			return err
		}
		require.Empty(t, runs, "a nested Do commits nothing, so it runs nothing")
		return txn.Together(ctx, insertProbe(2, "Sam"), func(ctx context.Context) error {
			txn.AfterCommit(ctx, seen())
			return insertProbe(3, "Robin")(ctx)
		})
	}))
	require.Equal(t, []int{3, 3, 3}, runs, "each function once, after the commit, seeing its rows")

	runs = nil
	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		txn.AfterCommit(ctx, seen())
		return txn.Last(ctx, insertProbe(4, "Alex"))
	}))
	require.Equal(t, []int{4}, runs, "after a Last that committed")

	runs = nil
	failed := errors.New("Sam changed his mind")
	require.ErrorIs(t, uow.Do(ctx, func(ctx context.Context) error {
		txn.AfterCommit(ctx, seen())
		if err := insertProbe(5, "Sam")(ctx); err != nil {
			return err
		}
		return failed
	}), failed)
	require.Empty(t, runs, "a unit of work that rolls back runs nothing")

	var attempts atomic.Int32
	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		txn.AfterCommit(ctx, seen())
		if attempts.Add(1) == 1 {
			return &pgconn.PgError{Code: "40001", Message: "could not serialize access"}
		}
		return insertProbe(6, "Robin")(ctx)
	}))
	require.Equal(t, int32(2), attempts.Load())
	require.Equal(t, []int{5}, runs, "the retried attempt's function is dropped")

	runs = nil
	txn.AfterCommit(ctx, seen())
	require.Equal(t, []int{5}, runs, "outside a unit of work at once")
}
