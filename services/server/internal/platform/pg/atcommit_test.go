package pg_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/platform/pg"
)

// TestAtCommitTravelsWithTheCommit (ADR 0093): the statements of a
// function given to txn.AtCommit travel in the round trip of the unit of
// work's COMMIT: with the statements of its Last, before them; or, when
// the unit of work ends without a Last, in a round trip of their own with
// the COMMIT that would otherwise have gone alone. A nested Do and a
// function of Together keep theirs for the outermost commit.
func TestAtCommitTravelsWithTheCommit(t *testing.T) {
	t.Parallel()
	pool, log := togetherWorld(t)
	ctx := context.Background()
	uow := pg.NewUnitOfWork(pool, 0, 0)
	const insert = "INSERT INTO together_probe VALUES ($1, $2)"

	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		if err := insertProbe(1, "Alex")(ctx); err != nil {
			return err
		}
		if err := txn.AtCommit(ctx, insertProbe(2, "Sam")); err != nil {
			return err
		}
		return txn.Last(ctx, insertProbe(3, "Robin"))
	}))
	require.Equal(t, []string{"begin; " + insert, insert + "; " + insert + "; commit"}, log.take(),
		"AtCommit's statement first, then Last's, with the COMMIT")
	require.Equal(t, 3, probeRows(t, pool))
	log.take()

	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		if err := insertProbe(4, "Alex")(ctx); err != nil {
			return err
		}
		if err := uow.Do(ctx, func(ctx context.Context) error {
			return txn.AtCommit(ctx, insertProbe(5, "Sam"))
		}); err != nil {
			return err
		}
		return txn.Together(ctx, insertProbe(6, "Robin"), func(ctx context.Context) error {
			return txn.AtCommit(ctx, insertProbe(7, "Alex"))
		})
	}))
	require.Equal(t, []string{"begin; " + insert, insert, insert + "; " + insert + "; commit"}, log.take(),
		"without a Last, the kept statements travel with the COMMIT at the end of the unit of work")
	require.Equal(t, 7, probeRows(t, pool))

	require.NoError(t, txn.AtCommit(ctx, func(ctx context.Context) error {
		_, err := pool.Exec(ctx, `INSERT INTO together_probe VALUES (8, 'Sam')`)
		return err
	}), "outside a unit of work AtCommit runs its function at once")
	require.Equal(t, 8, probeRows(t, pool))
}

// TestAtCommitFailureCommitsNothing (ADR 0093): a statement of AtCommit
// that fails fails the commit: Do returns the server's error and nothing
// of the unit of work stays; an attempt that is retried drops what it
// kept, so a retry sends each statement once. A function given to
// AtCommit after a Last committed runs at once and finds the transaction
// ended.
func TestAtCommitFailureCommitsNothing(t *testing.T) {
	t.Parallel()
	pool, log := togetherWorld(t)
	ctx := context.Background()
	uow := pg.NewUnitOfWork(pool, 2, time.Second)

	err := uow.Do(ctx, func(ctx context.Context) error {
		if err := insertProbe(1, "Alex")(ctx); err != nil {
			return err
		}
		return txn.AtCommit(ctx, insertProbe(1, "Sam"))
	})
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "%v", err)
	require.Equal(t, "23505", pgErr.Code)
	require.Zero(t, probeRows(t, pool), "the unit of work rolled back")
	log.take()

	attempts := 0
	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		attempts++
		if err := txn.AtCommit(ctx, insertProbe(10+attempts, "Robin")); err != nil {
			return err
		}
		if attempts == 1 {
			return &pgconn.PgError{Code: "40001"}
		}
		return nil
	}))
	require.Equal(t, 2, attempts)
	require.Equal(t, 1, probeRows(t, pool))
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT n FROM together_probe`).Scan(&n))
	require.Equal(t, 12, n, "only the retry's statement went")

	err = uow.Do(ctx, func(ctx context.Context) error {
		if err := txn.Last(ctx, insertProbe(20, "Alex")); err != nil {
			return err
		}
		return txn.AtCommit(ctx, insertProbe(21, "Sam"))
	})
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err), "%v", err)
	require.Equal(t, 2, probeRows(t, pool), "what travelled with the COMMIT stays; the late statement was never sent")
}
