// Package txn is the unit-of-work port: one database transaction per use case,
// carried in the context so that repositories, the audit recorder, the job
// inserter and the event log all write through the same transaction without
// passing it around.
//
// The implementation lives in platform/pg. A use case writes
//
//	err := uow.Do(ctx, func(ctx context.Context) error {
//		// every store call here joins the transaction
//	})
//
// Do may run fn more than once (serialization failures and deadlocks are
// retried), so fn must not have effects outside the transaction, such as
// network calls (docs/spec/02-architecture.md 8.5).
//
// Calls whose statements do not depend on one another run in Together, so
// that their statements share a round trip (ADR 0085); the last statements
// of a use case run in Last, so that they share it with the COMMIT (ADR
// 0090); a write that nothing later in the unit of work reads runs in
// AtCommit, so that it travels with the COMMIT too, wherever in the use
// case it is decided (ADR 0093).
package txn

import (
	"context"
	"sync"

	"bothy/server/internal/kernel/errs"
)

// UnitOfWork runs a function inside one transaction.
type UnitOfWork interface {
	// Do runs fn in a transaction and commits when fn returns nil; otherwise it
	// rolls back and returns fn's error. When ctx already carries a
	// transaction, fn joins it and Do neither commits nor rolls back. fn may be
	// called again after a retryable database conflict, with a fresh memo.
	Do(ctx context.Context, fn func(ctx context.Context) error) error
}

type memoKey struct{}

type memo struct {
	mu     sync.Mutex
	values map[any]any
}

// WithMemo returns ctx with a fresh per-transaction memo. Only UnitOfWork
// implementations call it, once per transaction attempt.
func WithMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, memoKey{}, &memo{values: map[any]any{}})
}

// InUnitOfWork reports whether ctx carries the unit of work of a caller,
// which a use case then joins instead of running its own (UnitOfWork.Do).
func InUnitOfWork(ctx context.Context) bool {
	_, ok := ctx.Value(memoKey{}).(*memo)
	return ok
}

// Refused reports whether err, returned by UnitOfWork.Do, is an answer of
// the database: an error that carries a SQLSTATE (errs.SQLState), as every
// error PostgreSQL reports does. The database refused a statement
// of the unit of work or its COMMIT, so the unit of work rolled back and
// nothing of it was written; running its work again cannot write it
// twice. An error without one (a lost connection, an ended context)
// leaves open whether the COMMIT went through.
func Refused(err error) bool {
	_, answered := errs.SQLState(err)
	return answered
}

// Key names one value memoised for the duration of a transaction, such as the
// candidate subscriptions of a consumer round. Declare keys as package
// variables: var candidatesKey = txn.NewKey[[]Candidate]("apps.candidates").
type Key[T any] struct{ name string }

// NewKey returns a key; name is for debugging only.
func NewKey[T any](name string) *Key[T] { return &Key[T]{name: name} }

// Get returns the value stored under k in the transaction of ctx.
func (k *Key[T]) Get(ctx context.Context) (T, bool) {
	var zero T
	m, ok := ctx.Value(memoKey{}).(*memo)
	if !ok {
		return zero, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.values[k]
	if !ok {
		return zero, false
	}
	return v.(T), true
}

// GetOrSet returns the value stored under k in the transaction of ctx and
// true; when there is none it stores v and returns it with false, in one
// step, so functions of Together that start a memo at the same time share
// one. Outside a transaction it returns v and false and stores nothing.
func (k *Key[T]) GetOrSet(ctx context.Context, v T) (T, bool) {
	m, ok := ctx.Value(memoKey{}).(*memo)
	if !ok {
		return v, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.values[k]; ok {
		return old.(T), true
	}
	m.values[k] = v
	return v, false
}

// Set stores v under k for the rest of the transaction of ctx. Outside a
// transaction it does nothing, so a memo can never outlive its transaction.
func (k *Key[T]) Set(ctx context.Context, v T) {
	m, ok := ctx.Value(memoKey{}).(*memo)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.values[k] = v
}

// Gatherer runs functions so that the statements they send travel to the
// database together (ADR 0085); UnitOfWork implementations provide one
// through WithGatherer.
type Gatherer func(ctx context.Context, fns []func(ctx context.Context) error) error

type gathererKey struct{}

// WithGatherer returns ctx with g as the Gatherer of Together; a nil g
// makes Together run its functions one after another. Only UnitOfWork
// implementations call it, with the transaction they put into ctx.
func WithGatherer(ctx context.Context, g Gatherer) context.Context {
	return context.WithValue(ctx, gathererKey{}, g)
}

// Together runs fns, whose statements do not depend on one another, so
// that in a unit of work the statements they send travel to the database
// in one round trip: each fn runs in a goroutine of its own until it sends
// a statement or returns, and the statements that all of them sent go
// together, in the order of fns, as often as they send more (ADR 0085).
// The fns share the transaction and its memo and must not share anything
// else that is not safe for concurrent use. A round trip waits until
// every fn sent its statement or returned, so no fn may wait for a lock
// another fn can hold while it waits for its statement (instance/app.Keys
// reads its keys outside its cache's lock for this reason). Outside a
// unit of work, and inside a function of Together, fns run one after
// another.
//
// It returns nil when every fn returned nil, else the error of the fn that
// failed (the errors joined when several did). When a statement fails, the
// statements that travelled after it in the same round trip are not run,
// and their fns' errors are left out in favour of the failure itself. Run
// one after another, the first error ends the run.
func Together(ctx context.Context, fns ...func(ctx context.Context) error) error {
	if g, _ := ctx.Value(gathererKey{}).(Gatherer); g != nil && len(fns) > 1 {
		return g(ctx, fns)
	}
	for _, fn := range fns {
		if err := fn(ctx); err != nil {
			return err
		}
	}
	return nil
}

type closerKey struct{}

// WithCloser returns ctx with g as the Gatherer of Last: g runs the fns of
// Last as Together's gatherer does and sends the unit of work's COMMIT in
// the round trip of their statements (ADR 0090). Only UnitOfWork
// implementations call it, for the function of an outermost Do; a nil g
// (a nested Do, a function of Together) makes Last run as Together.
func WithCloser(ctx context.Context, g Gatherer) context.Context {
	return context.WithValue(ctx, closerKey{}, g)
}

// Last runs fns, the last statements of the unit of work, as Together
// does; where the unit of work supports it (platform/pg, in the function
// of an outermost Do) their statements travel in one round trip with the
// unit of work's COMMIT, which saves the round trip of the commit (ADR
// 0090). Each fn must send all its statements in one round trip (one
// statement or one batch) and nothing after them: a statement sent after
// the commit fails with an internal error and changes nothing.
//
// It returns nil when every fn returned nil and the unit of work
// committed; the function given to Do must then return nil without
// sending anything more. When a fn fails (before or after its
// statements), a statement or the commit fails, it returns the error (a
// fn's own, else the commit's), nothing is committed, and Do rolls back
// (and retries a conflict as for any commit). Outside a unit of
// work, in a nested Do and inside a function of Together, Last is
// Together and commits nothing.
func Last(ctx context.Context, fns ...func(ctx context.Context) error) error {
	if g, _ := ctx.Value(closerKey{}).(Gatherer); g != nil {
		return g(ctx, fns)
	}
	return Together(ctx, fns...)
}

type afterCommitKey struct{}

// afterCommit is the list of functions of one attempt of a unit of work.
type afterCommit struct {
	mu  sync.Mutex
	fns []func()
}

// WithAfterCommit returns ctx with a fresh list for AfterCommit and the
// function that runs the listed functions. Only UnitOfWork
// implementations call it, once per attempt of an outermost Do, and call
// run after that attempt committed (never after a rollback).
func WithAfterCommit(ctx context.Context) (_ context.Context, run func()) {
	l := &afterCommit{}
	return context.WithValue(ctx, afterCommitKey{}, l), func() {
		l.mu.Lock()
		fns := l.fns
		l.fns = nil
		l.mu.Unlock()
		for _, fn := range fns {
			fn()
		}
	}
}

// AfterCommit runs fn once the unit of work of ctx has committed, in the
// goroutine that committed it, before Do returns; it is never run when
// the unit of work rolls back, and an attempt that is retried drops its
// functions. fn must be quick and must not fail: it is for effects that
// may be lost without harm, such as a wake-up whose receiver also polls.
// Outside a unit of work fn runs at once.
func AfterCommit(ctx context.Context, fn func()) {
	l, ok := ctx.Value(afterCommitKey{}).(*afterCommit)
	if !ok {
		fn()
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fns = append(l.fns, fn)
}

type atCommitKey struct{}

// atCommit is the list of AtCommit's functions of one attempt of a unit of
// work; taken is set once its commit took them.
type atCommit struct {
	mu    sync.Mutex
	fns   []func(ctx context.Context) error
	taken bool
}

// WithAtCommit returns ctx with a fresh list for AtCommit and the function
// that takes the listed functions for the commit; once it has, AtCommit
// runs its function at once. Only UnitOfWork implementations call it, once
// per attempt of an outermost Do, and run what take returns with the
// unit of work's COMMIT.
func WithAtCommit(ctx context.Context) (_ context.Context, take func() []func(ctx context.Context) error) {
	l := &atCommit{}
	return context.WithValue(ctx, atCommitKey{}, l), func() []func(ctx context.Context) error {
		l.mu.Lock()
		defer l.mu.Unlock()
		fns := l.fns
		l.fns, l.taken = nil, true
		return fns
	}
}

// AtCommit keeps fn, a write of the unit of work in ctx that nothing
// later in it reads (nor needs its result), for the unit of work's
// commit: where the unit of work supports it (platform/pg, ADR 0093) fn
// runs as a function of Last, before Last's own, so that its statements
// travel with the COMMIT; a unit of work that ends without a Last sends
// them in one round trip with its COMMIT. fn must therefore keep Last's
// rule: all its statements in one round trip, nothing after them. It is
// for a write decided in the middle of a use case whose own round trip
// would otherwise be on the way to the commit (the consumer round's job
// insert).
//
// It returns nil once fn is kept; fn's error, or its statement's, is then
// the error of the commit (Last's, or Do's), and nothing of the unit of
// work is committed. An attempt that is retried drops what it kept. A
// nested Do and a function of Together keep fn for the outermost commit.
// Outside a unit of work, and after the unit of work's commit took its
// list (a Last that committed), fn runs at once and AtCommit returns its
// error.
func AtCommit(ctx context.Context, fn func(ctx context.Context) error) error {
	if l, ok := ctx.Value(atCommitKey{}).(*atCommit); ok {
		l.mu.Lock()
		if !l.taken {
			l.fns = append(l.fns, fn)
			l.mu.Unlock()
			return nil
		}
		l.mu.Unlock()
	}
	return fn(ctx)
}
