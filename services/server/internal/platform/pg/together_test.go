package pg_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

// togetherWorld is a traced pool of one connection over a database with
// the tables together_probe and last_deferred (a key checked at commit)
// and the enum together_mood.
func togetherWorld(t *testing.T) (*pgxpool.Pool, *statementLog) {
	t.Helper()
	db := pgtest.New(t)
	_, err := db.Owner.Exec(context.Background(),
		`CREATE TABLE together_probe (n int PRIMARY KEY, note text); GRANT ALL ON together_probe TO bothy_app;
		CREATE TABLE last_deferred (n int PRIMARY KEY,
			parent int REFERENCES last_deferred (n) DEFERRABLE INITIALLY DEFERRED);
		GRANT ALL ON last_deferred TO bothy_app;
		CREATE TYPE together_mood AS ENUM ('calm')`)
	require.NoError(t, err)
	log := &statementLog{}
	pool := tracedPool(t, db, log)
	require.NoError(t, pool.Ping(context.Background()))
	log.take()
	return pool, log
}

// probeRows counts the rows of together_probe.
func probeRows(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM together_probe`).Scan(&n))
	return n
}

// TestTogetherSendsTheStatementsOfItsFunctionsInOneRoundTrip (ADR 0085):
// in a unit of work, the first statement of every function of
// txn.Together travels in one round trip with the BEGIN, in the order of
// the functions, whatever each function sends (a query, a row, an exec, a
// batch with callbacks); a function's next statement travels with the
// next statements of the others, and every result arrives where it was
// asked for.
func TestTogetherSendsTheStatementsOfItsFunctionsInOneRoundTrip(t *testing.T) {
	t.Parallel()
	pool, log := togetherWorld(t)
	ctx := context.Background()
	uow := pg.NewUnitOfWork(pool, 0, time.Second)

	var one, two, fromBatch int
	var inserted int64
	var series []int32
	var values []any
	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		return txn.Together(ctx,
			func(ctx context.Context) error {
				tx, err := pg.RequireTx(ctx)
				if err != nil {
					return err
				}
				if err := tx.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil {
					return err
				}
				return tx.QueryRow(ctx, `SELECT count(*)::int + 1 FROM together_probe`).Scan(&two)
			},
			func(ctx context.Context) error {
				tag, err := pg.Conn(ctx, pool).Exec(ctx, `INSERT INTO together_probe VALUES (1, 'Alex')`)
				inserted = tag.RowsAffected()
				return err
			},
			func(ctx context.Context) error {
				b := &pgx.Batch{}
				b.Queue(`SELECT $1::int`, 7).QueryRow(func(row pgx.Row) error { return row.Scan(&fromBatch) })
				b.Queue(`INSERT INTO together_probe VALUES (2, 'Sam')`)
				return pg.Conn(ctx, pool).SendBatch(ctx, b).Close()
			},
			func(ctx context.Context) error {
				rows, err := pg.Conn(ctx, pool).Query(ctx, `SELECT n FROM generate_series(1, 3) n`)
				if err != nil {
					return err
				}
				series, err = pgx.CollectRows(rows, pgx.RowTo[int32])
				return err
			},
			func(ctx context.Context) error {
				rows, err := pg.Conn(ctx, pool).Query(ctx, `SELECT 5::int, 'Robin'::text, NULL::text`)
				if err != nil {
					return err
				}
				defer rows.Close()
				if !rows.Next() {
					return errors.New("no row")
				}
				values, err = rows.Values()
				return err
			},
			func(context.Context) error { return nil },
		)
	}))
	require.Equal(t, []string{
		"begin; SET LOCAL lock_timeout = 1000; SELECT 1; INSERT INTO together_probe VALUES (1, 'Alex'); " +
			"SELECT $1::int; INSERT INTO together_probe VALUES (2, 'Sam'); SELECT n FROM generate_series(1, 3) n; " +
			"SELECT 5::int, 'Robin'::text, NULL::text",
		"SELECT count(*)::int + 1 FROM together_probe",
		"commit",
	}, log.take(), "the first statements in one round trip with the BEGIN, the next one in a round trip of its own")
	require.Equal(t, 1, one)
	require.Equal(t, 3, two, "the later statement sees what the others wrote in the same transaction")
	require.Equal(t, int64(1), inserted)
	require.Equal(t, 7, fromBatch, "the batch's callback ran")
	require.Equal(t, []int32{1, 2, 3}, series)
	require.Equal(t, []any{int32(5), "Robin", nil}, values)
	require.Equal(t, 2, probeRows(t, pool), "committed")
}

// TestTogetherFailsWithTheStatementThatFailed (ADR 0085): when a
// statement of a shared round trip fails, Together returns the server's
// error of that statement (not the skipped statements after it) and the
// unit of work leaves nothing; a function's own error fails the unit of
// work as well, once the others have finished.
func TestTogetherFailsWithTheStatementThatFailed(t *testing.T) {
	t.Parallel()
	pool, log := togetherWorld(t)
	ctx := context.Background()
	_, err := pool.Exec(ctx, `INSERT INTO together_probe VALUES (1, 'Alex')`)
	require.NoError(t, err)
	uow := pg.NewUnitOfWork(pool, 0, 0)
	exec := func(sql string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := pg.Conn(ctx, pool).Exec(ctx, sql)
			return err
		}
	}
	log.take()

	var after error
	err = uow.Do(ctx, func(ctx context.Context) error {
		return txn.Together(ctx,
			exec(`INSERT INTO together_probe VALUES (5, 'Sam')`),
			exec(`INSERT INTO together_probe VALUES (1, 'Robin')`),
			func(ctx context.Context) error {
				after = exec(`INSERT INTO together_probe VALUES (6, 'Sam')`)(ctx)
				return after
			},
		)
	})
	require.True(t, pg.IsUniqueViolation(err, "together_probe_pkey"), "the failed statement's error: %v", err)
	require.NotContains(t, err.Error(), "not run", "the skipped statement's error is left out")
	require.Error(t, after, "the statement after the failed one was not run")
	require.False(t, pg.IsUniqueViolation(after, ""), "a skipped statement never carries another's error")

	boom := errors.New("boom")
	require.ErrorIs(t, uow.Do(ctx, func(ctx context.Context) error {
		return txn.Together(ctx,
			exec(`INSERT INTO together_probe VALUES (7, 'Sam')`),
			func(context.Context) error { return boom },
		)
	}), boom)
	require.Equal(t, 1, probeRows(t, pool), "the failed units of work left nothing")
}

// TestTogetherRunsOneAfterAnotherWithoutAUnitOfWork (ADR 0085): outside a
// unit of work the functions run one after another, a round trip each;
// inside one, a Together in a function of Together joins it, its
// functions' statements at the place of the function that called it.
func TestTogetherRunsOneAfterAnotherWithoutAUnitOfWork(t *testing.T) {
	t.Parallel()
	pool, log := togetherWorld(t)
	ctx := context.Background()
	var mu sync.Mutex
	var order []string
	query := func(sql string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			var x int
			if err := pg.Conn(ctx, pool).QueryRow(ctx, sql).Scan(&x); err != nil {
				return err
			}
			mu.Lock()
			order = append(order, sql)
			mu.Unlock()
			return nil
		}
	}
	require.NoError(t, txn.Together(ctx, query(`SELECT 1`), query(`SELECT 2`)))
	require.Equal(t, []string{"SELECT 1", "SELECT 2"}, order)
	require.Equal(t, []string{"SELECT 1", "SELECT 2"}, log.take(), "a round trip each")

	var after int
	require.NoError(t, pg.NewUnitOfWork(pool, 0, 0).Do(ctx, func(ctx context.Context) error {
		return txn.Together(ctx,
			func(ctx context.Context) error {
				if err := txn.Together(ctx, query(`SELECT 3`), query(`SELECT 4`)); err != nil {
					return err
				}
				return pg.Conn(ctx, pool).QueryRow(ctx, `SELECT 6`).Scan(&after)
			},
			query(`SELECT 5`),
			func(ctx context.Context) error {
				return txn.Together(ctx, query(`SELECT 7`), func(ctx context.Context) error {
					return txn.Together(ctx, query(`SELECT 8`), query(`SELECT 9`))
				})
			},
		)
	}))
	require.Equal(t, []string{"begin; SELECT 3; SELECT 4; SELECT 5; SELECT 7; SELECT 8; SELECT 9", "SELECT 6", "commit"},
		log.take(), "nested functions in their place, the statement after a nested Together in the next round trip")
	require.Equal(t, 6, after)
}

// TestTogetherRefusesWhatBelongsToTheUnitOfWork (ADR 0085): a function of
// Together cannot open a savepoint, commit or roll back, and a panic in
// one is raised in the caller after the others ended, with the unit of
// work rolled back and its connection back in the pool.
func TestTogetherRefusesWhatBelongsToTheUnitOfWork(t *testing.T) {
	t.Parallel()
	pool, _ := togetherWorld(t)
	ctx := context.Background()
	uow := pg.NewUnitOfWork(pool, 0, 0)
	err := uow.Do(ctx, func(ctx context.Context) error {
		return txn.Together(ctx,
			func(ctx context.Context) error {
				tx, err := pg.RequireTx(ctx)
				if err != nil {
					return err
				}
				_, err = tx.Begin(ctx)
				return err
			},
			func(ctx context.Context) error {
				tx, err := pg.RequireTx(ctx)
				if err != nil {
					return err
				}
				return errors.Join(tx.Commit(ctx), tx.Rollback(ctx))
			},
		)
	})
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "a savepoint is not supported inside txn.Together"), err.Error())
	require.Contains(t, err.Error(), "commit is not supported")

	var otherRan bool
	require.PanicsWithValue(t, "handler bug", func() {
		_ = uow.Do(ctx, func(ctx context.Context) error {
			return txn.Together(ctx,
				func(ctx context.Context) error {
					if _, err := pg.Conn(ctx, pool).Exec(ctx, `INSERT INTO together_probe VALUES (9, 'Alex')`); err != nil {
						return err
					}
					panic("handler bug")
				},
				func(ctx context.Context) error {
					var x int
					err := pg.Conn(ctx, pool).QueryRow(ctx, `SELECT 1`).Scan(&x)
					otherRan = err == nil
					return err
				},
			)
		})
	})
	require.True(t, otherRan, "the other function ended first")

	boom := errors.New("boom")
	var caught any
	err = uow.Do(ctx, func(ctx context.Context) error {
		return txn.Together(ctx,
			func(ctx context.Context) error {
				defer func() { caught = recover() }()
				return txn.Together(ctx,
					func(context.Context) error { panic("nested bug") },
					func(context.Context) error { return boom })
			},
			func(ctx context.Context) error {
				return txn.Together(ctx,
					func(context.Context) error { return nil },
					func(context.Context) error { return boom })
			},
		)
	})
	require.Equal(t, "nested bug", caught, "a nested panic is raised where its Together was called")
	require.ErrorIs(t, err, boom, "a nested function's error reaches the caller of its Together")
	require.Zero(t, probeRows(t, pool), "rolled back")
	require.Zero(t, pool.Stat().AcquiredConns(), "the connection went back to the pool")
}

// probeMood is a named string type: decoding a value of a type the
// connection's type map does not know (the enum together_mood) into it
// makes the map look its Go type up by reflection, and the map builds that
// table on its first use.
type probeMood string

// TestTogetherDecodesTheRowsOfConcurrentFunctions: the functions of a
// Together run concurrently, and each decodes its rows through the one
// connection's type map, which builds and caches its tables on first use
// and is not safe for concurrent use; the gatherer decodes one row at a
// time (run with -race: without the lock the race detector reports the
// map's first use by two functions at once).
func TestTogetherDecodesTheRowsOfConcurrentFunctions(t *testing.T) {
	t.Parallel()
	pool, _ := togetherWorld(t)
	ctx := context.Background()
	uow := pg.NewUnitOfWork(pool, 0, time.Second)
	const n = 8
	moods := make([]probeMood, n)
	values := make([][]any, n)
	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		fns := make([]func(context.Context) error, n)
		for i := range fns {
			fns[i] = func(ctx context.Context) error {
				tx, err := pg.RequireTx(ctx)
				if err != nil {
					return err
				}
				if err := tx.QueryRow(ctx, `SELECT 'calm'::together_mood`).Scan(&moods[i]); err != nil {
					return err
				}
				rows, err := tx.Query(ctx, `SELECT $1::bigint, 'calm'::together_mood`, i)
				if err != nil {
					return err
				}
				defer rows.Close()
				for rows.Next() {
					if values[i], err = rows.Values(); err != nil {
						return err
					}
				}
				return rows.Err()
			}
		}
		return txn.Together(ctx, fns...)
	}))
	for i := range n {
		require.Equal(t, probeMood("calm"), moods[i])
		require.Len(t, values[i], 2)
		require.EqualValues(t, i, values[i][0])
	}
}
