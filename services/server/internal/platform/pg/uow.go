package pg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/txn"
)

// DBTX is what a query needs: satisfied by *pgxpool.Pool, *pgxpool.Conn and
// pgx.Tx, and the interface sqlc's generated code accepts.
type DBTX interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
}

type txKey struct{}

// TxFrom returns the transaction of the unit of work in ctx, if any.
func TxFrom(ctx context.Context) (pgx.Tx, bool) {
	tx, ok := ctx.Value(txKey{}).(pgx.Tx)
	return tx, ok
}

// ErrNoUnitOfWork is returned by RequireTx outside a unit of work. It is an
// internal *errs.Error: a caller that needs a transaction and has none is a
// bug of the code, never of the request.
var ErrNoUnitOfWork = errs.New(errs.CodeInternal, "no unit of work in the context")

// RequireTx returns the transaction of the unit of work in ctx, or
// ErrNoUnitOfWork outside one. It is the one guard of the statements that
// mean nothing on their own (D-CL-13): a row or advisory lock that would end
// with its statement, an event or a job that must commit with the change it
// belongs to.
func RequireTx(ctx context.Context) (pgx.Tx, error) {
	if tx, ok := TxFrom(ctx); ok {
		return tx, nil
	}
	return nil, ErrNoUnitOfWork
}

// WithTx returns ctx carrying tx as the ambient transaction, with a fresh
// memo and the gatherer of txn.Together over tx (ADR 0085). UnitOfWork
// uses it; tests use it to run adapters inside a transaction they roll
// back.
func WithTx(ctx context.Context, tx pgx.Tx) context.Context {
	return txn.WithGatherer(context.WithValue(txn.WithMemo(ctx), txKey{}, tx), gather(tx))
}

// Conn returns the ambient transaction of ctx, or pool when there is none.
// Adapters call it on every query so that they join the use case's unit of
// work without knowing about it.
func Conn(ctx context.Context, pool *pgxpool.Pool) DBTX {
	if tx, ok := TxFrom(ctx); ok {
		return tx
	}
	return pool
}

// UnitOfWork implements txn.UnitOfWork over a pgx pool.
type UnitOfWork struct {
	pool     *pgxpool.Pool
	retryMax int
	// begin opens a transaction and sets its lock timeout; it goes to the
	// server in the round trip of the unit of work's first statement
	// (lazyTx, ADR 0084).
	begin []string
}

var _ txn.UnitOfWork = (*UnitOfWork)(nil)

// NewUnitOfWork returns a unit of work over pool. retryMax (database.tx_retry_max)
// is how many times a transaction is run again after a serialization failure
// or a deadlock; lockTimeout (database.lock_timeout) bounds every lock wait, so
// a stuck lock surfaces as an error instead of a hung request. It panics on a
// nil pool, because that is a wiring bug.
func NewUnitOfWork(pool *pgxpool.Pool, retryMax int, lockTimeout time.Duration) *UnitOfWork {
	if pool == nil {
		panic("pg: NewUnitOfWork needs a pool")
	}
	u := &UnitOfWork{pool: pool, retryMax: retryMax, begin: []string{"begin"}}
	if lockTimeout > 0 {
		// SET LOCAL ends with the transaction.
		u.begin = append(u.begin, fmt.Sprintf("SET LOCAL lock_timeout = %d", lockTimeout.Milliseconds()))
	}
	return u
}

// GenericPlans returns a unit of work like u whose transactions also run
// their prepared statements under generic plans (SET LOCAL
// plan_cache_mode = force_generic_plan, D-SQ-19) planned without
// sequential scans where an index serves (SET LOCAL enable_seqscan = off,
// D-SQ-25), both in the begin pipeline, so no round trip of their own. It
// is for a path whose statements find their rows by keys whatever the
// plan, where PostgreSQL's choice between a custom and the generic plan
// turns, as a table grows, to planning a statement anew at every call, and
// where a generic plan made while a table was still small (a new
// installation, a fresh database) would otherwise read the whole table for
// as long as the connection keeps the plan. u is unchanged.
func (u *UnitOfWork) GenericPlans() *UnitOfWork {
	g := *u
	g.begin = append(slices.Clip(u.begin), "SET LOCAL plan_cache_mode = force_generic_plan", "SET LOCAL enable_seqscan = off")
	return &g
}

// Do implements txn.UnitOfWork. Transactions run at READ COMMITTED; rules that
// need more take row locks (docs/spec/02-architecture.md 8.2 "Lock order").
func (u *UnitOfWork) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	if _, ok := TxFrom(ctx); ok {
		// A nested Do commits nothing, not even with txn.Last.
		return fn(txn.WithCloser(ctx, nil))
	}
	for attempt := 0; ; attempt++ {
		err := u.once(ctx, fn)
		if err == nil || !Retryable(err) || attempt >= u.retryMax || ctx.Err() != nil {
			return err
		}
	}
}

func (u *UnitOfWork) once(ctx context.Context, fn func(ctx context.Context) error) (err error) {
	// The connection is taken now, so a database that cannot be reached
	// fails here as before; BEGIN waits for the first statement.
	conn, err := u.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pg: begin: %w", err)
	}
	tx := &lazyTx{conn: conn, begin: u.begin}
	// Roll back on an error and on a panic, so neither leaks the transaction
	// and its connection; the panic continues after the rollback.
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	ctx, afterCommit := txn.WithAfterCommit(ctx)
	ctx, atCommit := txn.WithAtCommit(ctx)
	uctx := txn.WithCloser(WithTx(ctx, tx), closeWith(tx, atCommit))
	if err = fn(uctx); err != nil {
		return err
	}
	if !tx.committed {
		// What txn.AtCommit kept travels with the COMMIT (ADR 0093); a
		// Last without functions sends nothing when nothing was kept.
		if err = txn.Last(uctx); err != nil {
			return err
		}
	}
	if err = tx.Commit(ctx); err != nil {
		return fmt.Errorf("pg: commit: %w", err)
	}
	committed = true
	afterCommit()
	return nil
}

// Retryable reports whether err is a serialization failure (40001) or a
// deadlock (40P01): conflicts that a fresh run of the same transaction can
// resolve.
func Retryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "40001" || pgErr.Code == "40P01"
	}
	return false
}

// IsUniqueViolation reports whether err is a unique violation (23505),
// optionally of the named constraint.
func IsUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return constraint == "" || pgErr.ConstraintName == constraint
	}
	return false
}

// IsForeignKeyViolation reports whether err is a foreign key violation
// (23503), optionally of the named constraint.
func IsForeignKeyViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" {
		return constraint == "" || pgErr.ConstraintName == constraint
	}
	return false
}
