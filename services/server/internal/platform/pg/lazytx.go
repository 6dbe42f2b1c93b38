package pg

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/kernel/errs"
)

// lazyTx is the transaction of a unit of work (ADR 0084): its BEGIN (and
// SET LOCAL lock_timeout) goes to the server in one pipeline with the
// unit of work's first statement instead of a round trip of its own,
// which on this kind of machine costs about as much CPU as a short
// statement. Exec, Query, QueryRow and SendBatch carry it; CopyFrom,
// Prepare and a nested Begin send it on its own first. A unit of work
// that sends no statement sends neither BEGIN nor COMMIT. Large objects
// are not supported (bothy stores none). Like pgx's own transaction it is
// used by one goroutine at a time.
type lazyTx struct {
	conn   *pgxpool.Conn
	begin  []string
	begun  bool
	closed bool
	// committed is set once a COMMIT travelled with the last statements
	// (txn.Last, ADR 0090), with what the server answered; the unit of
	// work's Commit then only reports it.
	committed bool
	commitTag pgconn.CommandTag
	commitRes error
	// follow holds the statements that go after the COMMIT of a Last, in
	// its round trip (FollowCommit, ADR 0094).
	follow follows
}

// errAfterCommit is the error of a statement sent after the COMMIT that
// travelled with txn.Last: the transaction has ended, so the statement is
// not sent at all.
var errAfterCommit = errs.New(errs.CodeInternal, "pg: a statement after the commit of its unit of work (txn.Last)")

// committedWith keeps the outcome of the COMMIT that travelled with the
// last statements.
func (t *lazyTx) committedWith(tag pgconn.CommandTag, err error) {
	t.committed, t.commitTag, t.commitRes = true, tag, err
}

// commitErr is the error of the COMMIT that travelled with the last
// statements, as Commit reports it.
func (t *lazyTx) commitErr() error {
	if t.commitRes == nil && t.commitTag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return t.commitRes
}

var _ pgx.Tx = (*lazyTx)(nil)

// prefixed returns b with the statements of BEGIN in front.
func (t *lazyTx) prefixed(b *pgx.Batch) *pgx.Batch {
	nb := &pgx.Batch{}
	for _, q := range t.begin {
		nb.Queue(q)
	}
	nb.QueuedQueries = append(nb.QueuedQueries, b.QueuedQueries...)
	return nb
}

// send sends b with the BEGIN in front when the transaction has not begun,
// and reads the results of the BEGIN.
func (t *lazyTx) send(ctx context.Context, b *pgx.Batch) (pgx.BatchResults, error) {
	if t.committed {
		return nil, errAfterCommit
	}
	if t.begun {
		return t.conn.SendBatch(ctx, b), nil
	}
	t.begun = true
	br := t.conn.SendBatch(ctx, t.prefixed(b))
	for range t.begin {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return nil, err
		}
	}
	return br, nil
}

// first sends the unit of work's first statement with BEGIN.
func (t *lazyTx) first(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	return t.send(ctx, b)
}

// ensure sends BEGIN on its own when the transaction has not begun, for
// the calls that cannot carry it.
func (t *lazyTx) ensure(ctx context.Context) error {
	if t.committed {
		return errAfterCommit
	}
	if t.begun {
		return nil
	}
	t.begun = true
	for _, q := range t.begin {
		if _, err := t.conn.Exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

func (t *lazyTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if t.committed {
		return pgconn.CommandTag{}, errAfterCommit
	}
	if t.begun {
		return t.conn.Exec(ctx, sql, args...)
	}
	br, err := t.first(ctx, sql, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	return tag, errors.Join(err, br.Close())
}

func (t *lazyTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if t.committed {
		return nil, errAfterCommit
	}
	if t.begun {
		return t.conn.Query(ctx, sql, args...)
	}
	br, err := t.first(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, errors.Join(err, br.Close())
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (t *lazyTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := t.Query(ctx, sql, args...)
	return &lazyRow{rows: rows, err: err}
}

func (t *lazyTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	br, err := t.send(ctx, b)
	if err != nil {
		return errResults{err: err}
	}
	return br
}

func (t *lazyTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if err := t.ensure(ctx); err != nil {
		return 0, err
	}
	return t.conn.CopyFrom(ctx, table, columns, src)
}

func (t *lazyTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	if err := t.ensure(ctx); err != nil {
		return nil, err
	}
	return t.conn.Conn().Prepare(ctx, name, sql)
}

func (t *lazyTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }

func (t *lazyTx) Conn() *pgx.Conn { return t.conn.Conn() }

func (t *lazyTx) Begin(ctx context.Context) (pgx.Tx, error) {
	if err := t.ensure(ctx); err != nil {
		return nil, err
	}
	return beginSavepoint(ctx, t, 1)
}

func (t *lazyTx) Commit(ctx context.Context) error {
	if t.committed {
		_, _ = t.end(ctx, "")
		return t.commitErr()
	}
	tag, err := t.end(ctx, "commit")
	if err == nil && tag.String() == "ROLLBACK" {
		// The server rolled back a transaction that had failed, as pgx's
		// own transaction reports it.
		return pgx.ErrTxCommitRollback
	}
	return err
}

func (t *lazyTx) Rollback(ctx context.Context) error {
	_, err := t.end(ctx, "rollback")
	return err
}

// end ends the transaction with sql when it has begun and gives the
// connection back to the pool, which closes it when it is not idle.
func (t *lazyTx) end(ctx context.Context, sql string) (pgconn.CommandTag, error) {
	if t.closed {
		return pgconn.CommandTag{}, pgx.ErrTxClosed
	}
	t.closed = true
	defer t.conn.Release()
	// What was to follow a COMMIT that did not travel with a Last does
	// not run.
	notFollowed(t.follow.take())
	if !t.begun || t.committed {
		// Nothing began, or the COMMIT went with the last statements: a
		// rollback now has nothing to undo.
		return pgconn.CommandTag{}, nil
	}
	return t.conn.Exec(ctx, sql)
}

// savepointTx is a pseudo nested transaction of a lazyTx, a savepoint as
// pgx's own nested Begin makes (River uses it); statements go through
// the lazyTx, which has begun.
type savepointTx struct {
	*lazyTx
	n      int
	closed bool
}

func beginSavepoint(ctx context.Context, t *lazyTx, n int) (pgx.Tx, error) {
	if _, err := t.conn.Exec(ctx, fmt.Sprintf("savepoint sp_%d", n)); err != nil {
		return nil, err
	}
	return &savepointTx{lazyTx: t, n: n}, nil
}

func (s *savepointTx) Begin(ctx context.Context) (pgx.Tx, error) {
	return beginSavepoint(ctx, s.lazyTx, s.n+1)
}

func (s *savepointTx) Commit(ctx context.Context) error { return s.end(ctx, "release savepoint sp_%d") }

func (s *savepointTx) Rollback(ctx context.Context) error {
	return s.end(ctx, "rollback to savepoint sp_%d")
}

// end releases or rolls back the savepoint once, with format naming it.
func (s *savepointTx) end(ctx context.Context, format string) error {
	if s.closed {
		return pgx.ErrTxClosed
	}
	s.closed = true
	_, err := s.conn.Exec(ctx, fmt.Sprintf(format, s.n))
	return err
}

// batchRows are the rows of a unit of work's first statement: closing them
// also reads the end of the pipeline, whose error Err reports.
type batchRows struct {
	pgx.Rows
	br     pgx.BatchResults
	closed bool
	err    error
}

func (r *batchRows) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.Rows.Close()
	r.err = r.br.Close()
}

func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// lazyRow is QueryRow's row over lazyTx.Query, with pgx's rules: no row
// is pgx.ErrNoRows, the rows are closed after Scan.
type lazyRow struct {
	rows pgx.Rows
	err  error
}

func (r *lazyRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

// errResults are the results of a batch whose BEGIN failed: every read
// returns that error.
type errResults struct{ err error }

func (e errResults) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, e.err }
func (e errResults) Query() (pgx.Rows, error)         { return nil, e.err }
func (e errResults) QueryRow() pgx.Row                { return &lazyRow{err: e.err} }
func (e errResults) Close() error                     { return e.err }
func (e errResults) Tx() pgx.Tx                       { return nil }
