package pg_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/platform/pg"
)

const insertSQL = "INSERT INTO together_probe VALUES ($1, $2)"

// followProbe returns the fn of FollowCommit that inserts row n into
// together_probe.
func followProbe(n int, note string) func(ctx context.Context, q pg.DBTX) error {
	return func(ctx context.Context, q pg.DBTX) error {
		_, err := q.Exec(ctx, insertSQL, n, note)
		return err
	}
}

// dones collects what FollowCommit's done gets.
type dones struct {
	mu   sync.Mutex
	errs []error
}

func (d *dones) done(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.errs = append(d.errs, err)
}

func (d *dones) take() []error {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := d.errs
	d.errs = nil
	return out
}

// TestFollowCommitTravelsAfterTheCommitOfALast (ADR 0094): the statements
// FollowCommit queues in a function of txn.Last travel right after the
// COMMIT in the Last's round trip, and done hears once that they ran.
// Anywhere else (the body of a unit of work, Together, no unit of work, a
// transaction given to WithTx, after the Last's COMMIT went) and for a
// query, FollowCommit keeps nothing and says so.
func TestFollowCommitTravelsAfterTheCommitOfALast(t *testing.T) {
	t.Parallel()
	pool, log := togetherWorld(t)
	ctx := context.Background()
	uow := pg.NewUnitOfWork(pool, 0, 0)
	var got dones

	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		require.False(t, pg.FollowCommit(ctx, got.done, followProbe(9, "Sam")), "the body of a unit of work")
		if err := txn.Together(ctx, func(ctx context.Context) error {
			require.False(t, pg.FollowCommit(ctx, got.done, followProbe(9, "Sam")), "Together")
			return nil
		}); err != nil {
			return err
		}
		return txn.Last(ctx, insertProbe(1, "Alex"), func(ctx context.Context) error {
			require.True(t, pg.FollowCommit(ctx, got.done, followProbe(2, "Sam")))
			if err := insertProbe(3, "Robin")(ctx); err != nil {
				return err
			}
			require.False(t, pg.FollowCommit(ctx, got.done, followProbe(9, "Sam")), "after the COMMIT went")
			return nil
		})
	}))
	require.Equal(t, []string{"begin; " + insertSQL + "; " + insertSQL + "; commit; " + insertSQL}, log.take(),
		"the unit of work and what follows its COMMIT in one round trip")
	require.Equal(t, []error{nil}, got.take(), "done hears once that the statement ran")
	require.Equal(t, 3, probeRows(t, pool))

	require.False(t, pg.FollowCommit(ctx, got.done, followProbe(9, "Sam")), "no unit of work")
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	require.False(t, pg.FollowCommit(pg.WithTx(ctx, tx), got.done, followProbe(9, "Sam")), "a transaction given to WithTx")
	require.NoError(t, tx.Rollback(ctx))
	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		return txn.Last(ctx, func(ctx context.Context) error {
			require.False(t, pg.FollowCommit(ctx, got.done, func(ctx context.Context, q pg.DBTX) error {
				_, err := q.Query(ctx, "SELECT 1")
				return err
			}), "a query whose rows someone would read")
			return insertProbe(4, "Alex")(ctx)
		})
	}))
	require.Empty(t, got.take(), "done is never called when FollowCommit said no")
	require.Equal(t, 4, probeRows(t, pool))
}

// TestFollowCommitDoneHearsEveryOutcome (ADR 0094): a statement that
// follows the COMMIT and fails changes nothing of the unit of work, which
// committed, and done gets its error; the connection serves the next
// unit of work. When the statements do not run (the unit of work rolls
// back, the COMMIT fails, the functions of the Last send nothing) done
// gets ErrNotFollowed, once.
func TestFollowCommitDoneHearsEveryOutcome(t *testing.T) {
	t.Parallel()
	pool, _ := togetherWorld(t)
	ctx := context.Background()
	uow := pg.NewUnitOfWork(pool, 0, time.Second)
	var got dones
	follow := func(n int) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			require.True(t, pg.FollowCommit(ctx, got.done, followProbe(n, "Sam")))
			return nil
		}
	}

	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		return txn.Last(ctx, insertProbe(1, "Alex"), follow(1))
	}), "the unit of work committed though what followed failed")
	errs := got.take()
	require.Len(t, errs, 1)
	var pgErr *pgconn.PgError
	require.True(t, errors.As(errs[0], &pgErr), "%v", errs[0])
	require.Equal(t, "23505", pgErr.Code)
	require.Equal(t, 1, probeRows(t, pool))

	boom := errors.New("boom")
	require.ErrorIs(t, uow.Do(ctx, func(ctx context.Context) error {
		return txn.Last(ctx, follow(10), func(context.Context) error { return boom })
	}), boom)
	require.Equal(t, []error{pg.ErrNotFollowed}, got.take(), "a unit of work that rolled back")

	err := uow.Do(ctx, func(ctx context.Context) error {
		return txn.Last(ctx, follow(11), func(ctx context.Context) error {
			_, err := pg.Conn(ctx, pool).Exec(ctx, `INSERT INTO last_deferred VALUES (1, 99)`)
			return err
		})
	})
	require.True(t, errors.As(err, &pgErr), "the COMMIT's own failure: %v", err)
	require.Equal(t, "23503", pgErr.Code)
	require.Equal(t, []error{pg.ErrNotFollowed}, got.take(), "a COMMIT that failed")

	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		if err := insertProbe(2, "Alex")(ctx); err != nil {
			return err
		}
		return txn.Last(ctx, follow(12))
	}))
	require.Equal(t, []error{pg.ErrNotFollowed}, got.take(), "a Last that sent nothing: the unit of work commits at its end, alone")
	require.Equal(t, 2, probeRows(t, pool), "nothing that did not follow ran")
}
