package pg

import (
	"context"
	"errors"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"bothy/server/internal/kernel/errs"
)

// ErrNotFollowed is what FollowCommit's done gets when its statements did
// not run: the unit of work rolled back, a statement before the COMMIT or
// the COMMIT failed, or the functions of the Last sent nothing.
var ErrNotFollowed = errs.New(errs.CodeInternal, "pg: the statements that were to follow a commit did not run")

// FollowCommit asks for the statements that fn sends through its DBTX to
// run right after the COMMIT that travels with the statements of the
// txn.Last whose function calls it, in that round trip (ADR 0094): on the
// same connection, in a transaction of their own, once the COMMIT went
// through. It is for a statement that must see the commit and that
// nothing waits for, such as the consumers' wake-up: it costs no round
// trip and no hand-off to another goroutine, and the unit of work is one
// round trip from its end when it asks.
//
// fn runs at once; its DBTX takes only Exec, which queues the statement
// and returns no error (Query, QueryRow, SendBatch and CopyFrom fail, so
// a query is an :exec query of sqlc). The statements are not part of the
// unit of work: their failure changes neither the commit nor what Do
// returns. done, called exactly once when it returns true, gets nil when
// they ran, the error of the first that failed, or ErrNotFollowed.
//
// It returns false, queues nothing and never calls done outside a
// function of the outermost txn.Last of a unit of work of UnitOfWork, once
// that Last's COMMIT went, and when fn fails.
func FollowCommit(ctx context.Context, done func(error), fn func(ctx context.Context, q DBTX) error) bool {
	tx, ok := TxFrom(ctx)
	if !ok {
		return false
	}
	g, ok := tx.(*gatheredTx)
	if !ok || g.follow == nil {
		return false
	}
	q := &followQueue{}
	if fn(ctx, q) != nil {
		return false
	}
	return g.follow.add(followGroup{queries: q.queries, done: done})
}

// followGroup is what one call of FollowCommit queued.
type followGroup struct {
	queries []*pgx.QueuedQuery
	done    func(error)
}

// follows are the statements of FollowCommit of one transaction. The
// functions of a Last that add to them run concurrently, so they are
// guarded, and none is taken once the COMMIT went (or will not go).
type follows struct {
	mu     sync.Mutex
	groups []followGroup
	taken  bool
}

// add queues g; false once the statements were taken.
func (f *follows) add(g followGroup) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.taken {
		return false
	}
	f.groups = append(f.groups, g)
	return true
}

// take returns the queued groups; add refuses from then on.
func (f *follows) take() []followGroup {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.taken = true
	groups := f.groups
	f.groups = nil
	return groups
}

// queueFollows puts the statements of groups in b, after the COMMIT.
func queueFollows(b *pgx.Batch, groups []followGroup) {
	for _, g := range groups {
		b.QueuedQueries = append(b.QueuedQueries, g.queries...)
	}
}

// readFollows reads the results of the statements of groups from br,
// after the COMMIT's, and tells each group's done.
func readFollows(br pgx.BatchResults, groups []followGroup) {
	for _, g := range groups {
		var first error
		for range g.queries {
			if _, err := br.Exec(); err != nil && first == nil {
				first = err
			}
		}
		g.done(first)
	}
}

// notFollowed tells the done of every group that its statements did not
// run.
func notFollowed(groups []followGroup) {
	for _, g := range groups {
		g.done(ErrNotFollowed)
	}
}

// errFollowQuery is what the DBTX of FollowCommit answers to anything
// but Exec: a statement whose results someone reads cannot follow.
var errFollowQuery = errors.New("pg: only Exec may follow a commit (FollowCommit)")

// followQueue is the DBTX of the fn of FollowCommit.
type followQueue struct {
	queries []*pgx.QueuedQuery
}

func (q *followQueue) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	q.queries = append(q.queries, &pgx.QueuedQuery{SQL: sql, Arguments: args})
	return pgconn.CommandTag{}, nil
}

func (q *followQueue) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errFollowQuery
}

func (q *followQueue) QueryRow(context.Context, string, ...any) pgx.Row {
	return &lazyRow{err: errFollowQuery}
}

func (q *followQueue) SendBatch(context.Context, *pgx.Batch) pgx.BatchResults {
	return errResults{err: errFollowQuery}
}

func (q *followQueue) CopyFrom(context.Context, pgx.Identifier, []string, pgx.CopyFromSource) (int64, error) {
	return 0, errFollowQuery
}
