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

// insertProbe returns a function that inserts row n into together_probe.
func insertProbe(n int, note string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		tx, err := pg.RequireTx(ctx)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO together_probe VALUES ($1, $2)`, n, note)
		return err
	}
}

// TestLastCommitsWithItsStatements (ADR 0090): the statements of
// txn.Last travel with the COMMIT of the unit of work, in the round trip
// of their first statements (here with the BEGIN too, so the whole unit
// of work is one round trip), and the unit of work sends no COMMIT of its
// own.
func TestLastCommitsWithItsStatements(t *testing.T) {
	t.Parallel()
	pool, log := togetherWorld(t)
	ctx := context.Background()
	uow := pg.NewUnitOfWork(pool, 0, time.Second)

	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		return txn.Last(ctx, insertProbe(1, "Alex"), insertProbe(2, "Sam"))
	}))
	require.Equal(t, []string{"begin; SET LOCAL lock_timeout = 1000; INSERT INTO together_probe VALUES ($1, $2); " +
		"INSERT INTO together_probe VALUES ($1, $2); commit"}, log.take())
	require.Equal(t, 2, probeRows(t, pool), "committed")
	log.take()

	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		if err := insertProbe(3, "Robin")(ctx); err != nil {
			return err
		}
		return txn.Last(ctx, insertProbe(4, "Alex"))
	}))
	require.Equal(t, []string{"begin; SET LOCAL lock_timeout = 1000; INSERT INTO together_probe VALUES ($1, $2)",
		"INSERT INTO together_probe VALUES ($1, $2); commit"}, log.take(), "after other statements, one function alone")
	require.Equal(t, 4, probeRows(t, pool))
	log.take()

	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		return txn.Last(ctx, func(context.Context) error { return nil })
	}))
	require.Empty(t, log.take(), "nothing sent, nothing to commit")
}

// TestLastCommitsNothingWhenAStatementFails (ADR 0090): when a statement
// of Last fails, the COMMIT that travelled after it is not run: Last
// returns the server's error, the unit of work rolls back, and the
// connection is fit for the next unit of work. A COMMIT that fails
// itself (a deferred constraint) is Last's error, and nothing stays.
func TestLastCommitsNothingWhenAStatementFails(t *testing.T) {
	t.Parallel()
	pool, log := togetherWorld(t)
	ctx := context.Background()
	uow := pg.NewUnitOfWork(pool, 0, 0)

	err := uow.Do(ctx, func(ctx context.Context) error {
		return txn.Last(ctx, insertProbe(1, "Alex"), insertProbe(1, "Sam"))
	})
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "%v", err)
	require.Equal(t, "23505", pgErr.Code)
	require.Equal(t, []string{"begin; INSERT INTO together_probe VALUES ($1, $2); INSERT INTO together_probe VALUES ($1, $2); commit",
		"rollback"}, log.take())
	require.Zero(t, probeRows(t, pool))
	log.take()
	err = uow.Do(ctx, func(ctx context.Context) error {
		return txn.Last(ctx, insertProbe(2, "Robin"), func(ctx context.Context) error {
			_, err := pg.Conn(ctx, pool).Exec(ctx, `INSERT INTO last_deferred VALUES (1, 99)`)
			return err
		})
	})
	require.True(t, errors.As(err, &pgErr), "%v", err)
	require.Equal(t, "23503", pgErr.Code, "the COMMIT checked the deferred key and failed")
	require.Len(t, log.take(), 1, "no rollback after a COMMIT that ended the transaction")
	require.Zero(t, probeRows(t, pool), "nothing of the unit of work stayed")

	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error { return txn.Last(ctx, insertProbe(3, "Sam")) }))
	require.Equal(t, 1, probeRows(t, pool), "the connection went on")
}

// TestLastCommitsNothingWhenAFunctionFailsBeforeItsStatement (ADR 0090):
// a function of Last that returns an error without sending anything keeps
// the COMMIT from going with the statements of the others: they run, the
// unit of work rolls back, and Last returns the function's error. The
// same holds for a function of txn.AtCommit.
func TestLastCommitsNothingWhenAFunctionFailsBeforeItsStatement(t *testing.T) {
	t.Parallel()
	pool, log := togetherWorld(t)
	ctx := context.Background()
	uow := pg.NewUnitOfWork(pool, 0, 0)
	errRefused := errors.New("Robin's note is refused before it is sent")
	refuse := func(context.Context) error { return errRefused }

	err := uow.Do(ctx, func(ctx context.Context) error {
		return txn.Last(ctx, insertProbe(1, "Alex"), refuse)
	})
	require.ErrorIs(t, err, errRefused)
	require.Equal(t, []string{"begin; INSERT INTO together_probe VALUES ($1, $2)", "rollback"}, log.take())
	require.Zero(t, probeRows(t, pool), "nothing committed")

	err = uow.Do(ctx, func(ctx context.Context) error {
		if err := txn.AtCommit(ctx, insertProbe(2, "Sam")); err != nil {
			return err
		}
		return txn.Last(ctx, refuse)
	})
	require.ErrorIs(t, err, errRefused)
	require.Zero(t, probeRows(t, pool), "nothing committed")
}

// TestLastRefusesAStatementAfterTheCommit (ADR 0090): a function of Last
// that sends a second round trip finds the transaction ended: its
// statement is not sent and fails with an internal error; what travelled
// with the COMMIT stays.
func TestLastRefusesAStatementAfterTheCommit(t *testing.T) {
	t.Parallel()
	pool, log := togetherWorld(t)
	ctx := context.Background()
	uow := pg.NewUnitOfWork(pool, 0, 0)

	err := uow.Do(ctx, func(ctx context.Context) error {
		return txn.Last(ctx, func(ctx context.Context) error {
			if err := insertProbe(1, "Alex")(ctx); err != nil {
				return err
			}
			return insertProbe(2, "Sam")(ctx)
		})
	})
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err), "%v", err)
	require.Equal(t, []string{"begin; INSERT INTO together_probe VALUES ($1, $2); commit"}, log.take(),
		"the second statement was never sent")
	require.Equal(t, 1, probeRows(t, pool))
}

// TestLastIsTogetherWhereItMayNotCommit (ADR 0090): in a nested Do and
// inside a function of Together, Last commits nothing, so the unit of work
// around it goes on and commits at its end.
func TestLastIsTogetherWhereItMayNotCommit(t *testing.T) {
	t.Parallel()
	pool, log := togetherWorld(t)
	ctx := context.Background()
	uow := pg.NewUnitOfWork(pool, 0, 0)

	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		if err := uow.Do(ctx, func(ctx context.Context) error { return txn.Last(ctx, insertProbe(1, "Alex")) }); err != nil {
			return err
		}
		return txn.Together(ctx,
			func(ctx context.Context) error { return txn.Last(ctx, insertProbe(2, "Sam")) },
			insertProbe(3, "Robin"))
	}))
	require.Equal(t, []string{"begin; INSERT INTO together_probe VALUES ($1, $2)",
		"INSERT INTO together_probe VALUES ($1, $2); INSERT INTO together_probe VALUES ($1, $2)", "commit"}, log.take())
	require.Equal(t, 3, probeRows(t, pool))

	require.NoError(t, txn.Last(ctx, func(ctx context.Context) error {
		_, err := pool.Exec(ctx, `INSERT INTO together_probe VALUES (4, 'Alex')`)
		return err
	}), "outside a unit of work Last only runs its functions")
	require.Equal(t, 4, probeRows(t, pool))
}
