package pg_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// TestOpenThroughAUnixSocket: a URL in libpq's form for a Unix socket,
// without a host and with the socket's directory as the query parameter
// host, connects (database.url accepts it, config.Key.HostInQuery).
func TestOpenThroughAUnixSocket(t *testing.T) {
	t.Parallel()
	pool, err := pg.Open(context.Background(), pg.Options{URL: pgtest.AdminSocketURL(t), MaxConns: 1})
	require.NoError(t, err)
	defer pool.Close()
	var local bool
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT inet_server_addr() IS NULL`).Scan(&local))
	require.True(t, local, "the connection came through the socket, which has no server address")
}

// TestPrivilegesAfterAllMigrations proves the role split of ADR 0004 after every
// migration: bothy_app reads and writes every table but owns nothing and can
// run no DDL.
func TestPrivilegesAfterAllMigrations(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()

	rows, err := db.Owner.Query(ctx, `
		SELECT c.relname,
		       has_table_privilege('bothy_app', c.oid, 'SELECT'),
		       has_table_privilege('bothy_app', c.oid, 'INSERT'),
		       has_table_privilege('bothy_app', c.oid, 'UPDATE'),
		       has_table_privilege('bothy_app', c.oid, 'DELETE'),
		       pg_get_userbyid(c.relowner)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
		  AND NOT c.relispartition`)
	require.NoError(t, err)
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var name, owner string
		var sel, ins, upd, del bool
		require.NoError(t, rows.Scan(&name, &sel, &ins, &upd, &del, &owner))
		seen++
		require.Equal(t, pg.OwnerRole, owner, "table %s", name)
		require.True(t, sel, "bothy_app may SELECT %s", name)
		if name == "goose_db_version" || name == "river_migration" {
			require.False(t, ins || upd || del, "bothy_app may only read %s", name)
			continue
		}
		require.True(t, ins && upd && del, "bothy_app may INSERT, UPDATE and DELETE %s", name)
	}
	require.NoError(t, rows.Err())
	require.Greater(t, seen, 3)

	var createOnSchema, superuser, createRole, createDB bool
	require.NoError(t, db.Owner.QueryRow(ctx, `
		SELECT has_schema_privilege('bothy_app', 'public', 'CREATE'), rolsuper, rolcreaterole, rolcreatedb
		FROM pg_roles WHERE rolname = 'bothy_app'`).Scan(&createOnSchema, &superuser, &createRole, &createDB))
	require.False(t, createOnSchema || superuser || createRole || createDB)

	for _, ddl := range []string{
		`CREATE TABLE app_made (x int)`,
		`ALTER TABLE river_job ADD COLUMN x int`,
		`DROP TABLE river_job`,
		`TRUNCATE river_job`,
	} {
		_, err := db.App.Exec(ctx, ddl)
		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr, ddl)
		require.Contains(t, []string{"42501", "42P01"}, pgErr.Code, "%s must be refused for lack of privilege", ddl)
	}
}

func TestMigrateIsIdempotentAndStatusIsCurrent(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	require.NoError(t, pg.Migrate(ctx, db.Owner, discard))
	st, err := pg.Status(ctx, db.App)
	require.NoError(t, err)
	require.True(t, st.Current(), "%+v", st)
	require.Equal(t, pg.RiverSchemaVersion, st.RiverCurrent)
}

func TestBootstrapIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opts := pg.BootstrapOptions{AdminURL: pgtest.AdminURL(t), Database: "bootstrap_twice"}
	require.NoError(t, pg.Bootstrap(ctx, opts))
	require.NoError(t, pg.Bootstrap(ctx, opts))
}

func TestUnitOfWorkCommitsAndRollsBack(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	_, err := db.Owner.Exec(ctx, `CREATE TABLE uow_probe (x int); GRANT SELECT, INSERT ON uow_probe TO bothy_app`)
	require.NoError(t, err)
	uow := pg.NewUnitOfWork(db.App, 3, time.Second)

	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		_, err := pg.Conn(ctx, db.App).Exec(ctx, `INSERT INTO uow_probe VALUES (1)`)
		return err
	}))
	boom := errors.New("boom")
	require.ErrorIs(t, uow.Do(ctx, func(ctx context.Context) error {
		if _, err := pg.Conn(ctx, db.App).Exec(ctx, `INSERT INTO uow_probe VALUES (2)`); err != nil {
			return err
		}
		// A nested Do joins the outer transaction instead of committing.
		require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
			_, err := pg.Conn(ctx, db.App).Exec(ctx, `INSERT INTO uow_probe VALUES (3)`)
			return err
		}))
		return boom
	}), boom)

	var n int
	require.NoError(t, db.App.QueryRow(ctx, `SELECT count(*) FROM uow_probe`).Scan(&n))
	require.Equal(t, 1, n, "the failed unit of work left nothing")
}

var probeKey = txn.NewKey[int]("pg.test.probe")

// TestUnitOfWorkRetriesDeadlocks makes two transactions lock two rows in
// opposite order; PostgreSQL aborts one with 40P01 and Do runs it again with a
// fresh memo.
func TestUnitOfWorkRetriesDeadlocks(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	_, err := db.Owner.Exec(ctx, `CREATE TABLE deadlock_probe (id int PRIMARY KEY, n int);
		INSERT INTO deadlock_probe VALUES (1, 0), (2, 0);
		GRANT SELECT, UPDATE ON deadlock_probe TO bothy_app`)
	require.NoError(t, err)
	uow := pg.NewUnitOfWork(db.App, 3, 0)

	var runs atomic.Int32
	both := sync.WaitGroup{}
	both.Add(2)
	var ready sync.WaitGroup
	ready.Add(2)
	errsOut := make([]error, 2)
	for i, order := range [][2]int{{1, 2}, {2, 1}} {
		go func() {
			defer both.Done()
			first := true
			errsOut[i] = uow.Do(ctx, func(ctx context.Context) error {
				runs.Add(1)
				_, seen := probeKey.Get(ctx)
				require.False(t, seen, "every attempt starts with a fresh memo")
				probeKey.Set(ctx, 1)
				c := pg.Conn(ctx, db.App)
				if _, err := c.Exec(ctx, `UPDATE deadlock_probe SET n = n + 1 WHERE id = $1`, order[0]); err != nil {
					return err
				}
				if first {
					first = false
					ready.Done()
					ready.Wait()
				}
				_, err := c.Exec(ctx, `UPDATE deadlock_probe SET n = n + 1 WHERE id = $1`, order[1])
				return err
			})
		}()
	}
	both.Wait()
	require.NoError(t, errsOut[0])
	require.NoError(t, errsOut[1])
	// At least one of the two ran again. The exact count is not fixed: the
	// retry of the aborted one can take a row before the other wakes up
	// from its wait and so deadlock once more (PostgreSQL re-checks a row
	// after the holder ends; it does not hand the lock over in order).
	require.GreaterOrEqual(t, runs.Load(), int32(3), "one of the two ran again after the deadlock")
	require.LessOrEqual(t, runs.Load(), int32(2+3), "each ran at most database.tx_retry_max more times")
	var total int
	require.NoError(t, db.App.QueryRow(ctx, `SELECT sum(n) FROM deadlock_probe`).Scan(&total))
	require.Equal(t, 4, total)
}

func TestRetryable(t *testing.T) {
	t.Parallel()
	require.True(t, pg.Retryable(&pgconn.PgError{Code: "40001"}))
	require.True(t, pg.Retryable(&pgconn.PgError{Code: "40P01"}))
	require.False(t, pg.Retryable(&pgconn.PgError{Code: "23505"}))
	require.False(t, pg.Retryable(errors.New("other")))
}

func TestUnitOfWorkRollsBackOnPanic(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	_, err := db.Owner.Exec(ctx, `CREATE TABLE panic_probe (x int); GRANT SELECT, INSERT ON panic_probe TO bothy_app`)
	require.NoError(t, err)
	uow := pg.NewUnitOfWork(db.App, 0, 0)
	require.Panics(t, func() {
		_ = uow.Do(ctx, func(ctx context.Context) error {
			if _, err := pg.Conn(ctx, db.App).Exec(ctx, `INSERT INTO panic_probe VALUES (1)`); err != nil {
				return err
			}
			panic("handler bug")
		})
	})
	var n int
	require.NoError(t, db.App.QueryRow(ctx, `SELECT count(*) FROM panic_probe`).Scan(&n))
	require.Zero(t, n)
	require.Zero(t, db.App.Stat().AcquiredConns(), "the connection went back to the pool")
}

// statementLog records the round trips a pool sends (pgtest.Trips), each
// read back as its statements joined with "; ".
type statementLog struct{ pgtest.Trips }

func (l *statementLog) take() []string {
	var out []string
	for _, trip := range l.Take() {
		out = append(out, strings.Join(trip, "; "))
	}
	return out
}

// tracedPool returns a pool of one connection over db whose statements log
// records.
func tracedPool(t testing.TB, db *pgtest.DB, log *statementLog) *pgxpool.Pool {
	t.Helper()
	return db.TracedApp(t, log, 1)
}

// quietTracedPool returns a pool of one connection over a new test
// database whose statements log records, with the connection made and the
// log empty.
func quietTracedPool(t *testing.T) (*pgxpool.Pool, *statementLog) {
	t.Helper()
	log := &statementLog{}
	pool := tracedPool(t, pgtest.New(t), log)
	require.NoError(t, pool.Ping(context.Background()))
	log.take()
	return pool, log
}

// TestUnitOfWorkWithGenericPlans (D-SQ-19, D-SQ-25): a unit of work made
// with GenericPlans also sets plan_cache_mode to force_generic_plan and
// enable_seqscan off in its begin pipeline, no round trip of its own; the
// settings end with the transaction and the unit of work it was made from
// keeps the defaults.
func TestUnitOfWorkWithGenericPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, log := quietTracedPool(t)

	plain := pg.NewUnitOfWork(pool, 0, 1500*time.Millisecond)
	generic := plain.GenericPlans()
	show := func(uow *pg.UnitOfWork) string {
		var mode, seqscan string
		require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
			return pg.Conn(ctx, pool).QueryRow(ctx, `SELECT current_setting('plan_cache_mode'), current_setting('enable_seqscan')`).
				Scan(&mode, &seqscan)
		}))
		return mode + " " + seqscan
	}
	require.Equal(t, "force_generic_plan off", show(generic))
	require.Equal(t, []string{"begin; SET LOCAL lock_timeout = 1500; SET LOCAL plan_cache_mode = force_generic_plan; " +
		"SET LOCAL enable_seqscan = off; SELECT current_setting('plan_cache_mode'), current_setting('enable_seqscan')", "commit"},
		log.take(), "the settings travel with BEGIN")
	require.Equal(t, "auto on", show(plain), "the unit of work it was made from keeps the defaults")
	var after string
	require.NoError(t, pool.QueryRow(ctx, `SELECT current_setting('plan_cache_mode') || ' ' || current_setting('enable_seqscan')`).Scan(&after))
	require.Equal(t, "auto on", after, "SET LOCAL ends with the transaction")
}

// TestUnitOfWorkSendsBeginWithItsFirstStatement (ADR 0084): BEGIN and
// SET LOCAL lock_timeout (database.lock_timeout) go to the server in the
// round trip of the unit of work's first statement, the timeout holds
// inside the unit of work and ends with it, and a unit of work that sends
// no statement sends nothing at all.
func TestUnitOfWorkSendsBeginWithItsFirstStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, log := quietTracedPool(t)

	uow := pg.NewUnitOfWork(pool, 0, 1500*time.Millisecond)
	var inside string
	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		return pg.Conn(ctx, pool).QueryRow(ctx, `SHOW lock_timeout`).Scan(&inside)
	}))
	require.Equal(t, "1500ms", inside)
	require.Equal(t, []string{"begin; SET LOCAL lock_timeout = 1500; SHOW lock_timeout", "commit"}, log.take(),
		"two round trips: begin with the timeout and the query, then commit")

	var after string
	require.NoError(t, pool.QueryRow(ctx, `SHOW lock_timeout`).Scan(&after))
	require.Equal(t, "0", after, "SET LOCAL ends with the transaction")

	log.take()
	require.NoError(t, pg.NewUnitOfWork(pool, 0, 0).Do(ctx, func(ctx context.Context) error {
		return pg.Conn(ctx, pool).QueryRow(ctx, `SHOW lock_timeout`).Scan(&inside)
	}))
	require.Equal(t, "0", inside, "without database.lock_timeout the server default holds")
	require.Equal(t, []string{"begin; SHOW lock_timeout", "commit"}, log.take())

	require.NoError(t, uow.Do(ctx, func(context.Context) error { return nil }))
	require.Empty(t, log.take(), "nothing to begin, nothing to commit")
}

// TestUnitOfWorkKeepsTransactionRules (ADR 0084): what the unit of work
// sends after its first statement is inside the same transaction; a
// savepoint (pgx's nested Begin, which River uses) rolls back alone; a
// failed unit of work leaves nothing; and a statement that fails in the
// first round trip fails the unit of work with the server's error.
func TestUnitOfWorkKeepsTransactionRules(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	pool := db.App
	uow := pg.NewUnitOfWork(pool, 0, time.Second)
	_, err := db.Owner.Exec(ctx, `CREATE TABLE lazy_probe (n int PRIMARY KEY); GRANT ALL ON lazy_probe TO bothy_app`)
	require.NoError(t, err)

	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		tx, err := pg.RequireTx(ctx)
		require.NoError(t, err)
		var x1, x2 string
		require.NoError(t, tx.QueryRow(ctx, `SELECT pg_current_xact_id()::text`).Scan(&x1))
		require.NoError(t, tx.QueryRow(ctx, `SELECT pg_current_xact_id()::text`).Scan(&x2))
		require.Equal(t, x1, x2, "one transaction")
		_, err = tx.Exec(ctx, `INSERT INTO lazy_probe VALUES (1)`)
		require.NoError(t, err)
		sp, err := tx.Begin(ctx)
		require.NoError(t, err)
		_, err = sp.Exec(ctx, `INSERT INTO lazy_probe VALUES (2)`)
		require.NoError(t, err)
		require.NoError(t, sp.Rollback(ctx))
		_, err = tx.Exec(ctx, `INSERT INTO lazy_probe VALUES (3)`)
		return err
	}))
	var kept []int32
	rows, err := pool.Query(ctx, `SELECT n FROM lazy_probe ORDER BY n`)
	require.NoError(t, err)
	kept, err = pgx.CollectRows(rows, pgx.RowTo[int32])
	require.NoError(t, err)
	require.Equal(t, []int32{1, 3}, kept, "the savepoint's row rolled back alone")

	boom := errors.New("boom")
	require.ErrorIs(t, uow.Do(ctx, func(ctx context.Context) error {
		if _, err := pg.Conn(ctx, pool).Exec(ctx, `INSERT INTO lazy_probe VALUES (4)`); err != nil {
			return err
		}
		return boom
	}), boom)
	err = uow.Do(ctx, func(ctx context.Context) error {
		_, err := pg.Conn(ctx, pool).Exec(ctx, `INSERT INTO lazy_probe VALUES (1)`)
		return err
	})
	require.True(t, pg.IsUniqueViolation(err, "lazy_probe_pkey"), "the first statement's own error: %v", err)
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM lazy_probe`).Scan(&n))
	require.Equal(t, 2, n, "the failed units of work left nothing")
	var status byte
	c, err := pool.Acquire(ctx)
	require.NoError(t, err)
	status = c.Conn().PgConn().TxStatus()
	c.Release()
	require.Equal(t, byte('I'), status, "connections go back to the pool idle")
}

// BenchmarkUnitOfWork measures units of work of short queries on one
// connection: one query, whose BEGIN (with the lock timeout of
// database.lock_timeout) travels with it, then COMMIT (ADR 0084); and two
// queries one after the other against the same two in txn.Together, which
// saves a round trip and adds its goroutines and the copy of the rows (ADR
// 0085). stmts/op counts round trips.
func BenchmarkUnitOfWork(b *testing.B) {
	db := pgtest.New(b)
	ctx := context.Background()
	log := &statementLog{}
	pool := tracedPool(b, db, log)
	uow := pg.NewUnitOfWork(pool, 0, time.Second)
	query := func(ctx context.Context) error {
		var one int
		return pg.Conn(ctx, pool).QueryRow(ctx, `SELECT 1`).Scan(&one)
	}
	for _, bc := range []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"queries=1", query},
		{"queries=2/one-after-another", func(ctx context.Context) error {
			if err := query(ctx); err != nil {
				return err
			}
			return query(ctx)
		}},
		{"queries=2/together", func(ctx context.Context) error { return txn.Together(ctx, query, query) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			require.NoError(b, uow.Do(ctx, bc.run))
			log.take()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				require.NoError(b, uow.Do(ctx, bc.run))
			}
			b.ReportMetric(float64(len(log.take()))/float64(b.N), "stmts/op")
		})
	}
}
