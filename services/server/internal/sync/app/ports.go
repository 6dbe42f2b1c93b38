// Package app runs the worker consumers of the event log (M2-01,
// docs/spec/04-sync-protocol.md 7.6, ADR 0051): a registry of consumer
// handlers (Consumers, the implementation of sync.Consumers) and a Runner
// per consumer that handles the log in rounds, each one unit of work that
// also moves the consumer's cursor.
package app

import (
	"context"
	"time"

	eventsync "bothy/server/internal/sync"
	"bothy/server/internal/sync/domain"
)

// EventSource reads the event log inside the round's unit of work.
type EventSource interface {
	// MinRetainedSeq is sync.LogReader.MinRetainedSeq: every committed event
	// at or above it is still in the log, everything below it is gone.
	MinRetainedSeq(ctx context.Context) (int64, error)
	// ReadAfter returns up to limit events with seq > after, in seq order.
	ReadAfter(ctx context.Context, after int64, limit int) ([]eventsync.Event, error)
	// ReadRecentAfter is ReadAfter over the events stamped at or after
	// since alone, which it reads in their partitions only (ADR 0105): an
	// event stamped earlier is missing from it even when its seq is above
	// after.
	ReadRecentAfter(ctx context.Context, after int64, since time.Time, limit int) ([]eventsync.Event, error)
	// WritersEndedBefore reports whether no transaction of this database
	// whose id is older than xid (an xid8) still runs, not counting the
	// caller's own: then every seq taken by such a transaction is settled
	// for reads that start afterwards (domain.Settle).
	WritersEndedBefore(ctx context.Context, xid uint64) (bool, error)
	// HeadSeq returns the highest seq in the log, or 0 when it is empty. It
	// feeds the lag metric only, after a read of the log that came back
	// full; it looks into every partition of the log (D-SY-26).
	HeadSeq(ctx context.Context) (int64, error)
}

// Cursor is a consumer's place in the log.
type Cursor struct {
	// Seq is the seq of the last event the consumer handled.
	Seq int64
	// Horizon is kept while events after Seq wait behind a gap whose
	// writers may still run (domain.Settle); zero otherwise.
	Horizon domain.Horizon
}

// CursorStore keeps one cursor per consumer.
type CursorStore interface {
	// ReadCursor returns the cursor of name without locking it, creating
	// it right below the retained log when it does not exist yet (created
	// is then true: the unit of work has written before the round's read).
	// It reads in the ambient unit of work and returns an error outside
	// one.
	ReadCursor(ctx context.Context, name eventsync.ConsumerName) (c Cursor, created bool, err error)
	// LockCursor returns the cursor of name locked for the rest of the
	// ambient unit of work (concurrent rounds of the same consumer wait on
	// it) and the unit of work's transaction id (xid8), assigned by this
	// call if it had none. It returns an error outside a unit of work or
	// when the cursor does not exist.
	LockCursor(ctx context.Context, name eventsync.ConsumerName) (c Cursor, xid uint64, err error)
	// SetCursor stores c as the cursor of name in the ambient unit of work.
	SetCursor(ctx context.Context, name eventsync.ConsumerName, c Cursor) error
}

// Coordinator makes sure only one process runs a given consumer and wakes
// it when events are appended.
type Coordinator interface {
	// Acquire blocks until this process holds the consumer's exclusive
	// session, polling while another process holds it, and returns it
	// listening for appended events. It returns ctx's error when ctx ends
	// and any other error when the database cannot be reached; the caller
	// retries after a pause.
	Acquire(ctx context.Context, name eventsync.ConsumerName) (Session, error)
}

// Session is the exclusive right of one process to run a consumer, held as
// long as its database connection lives.
type Session interface {
	// Notifications receives a value (coalesced) after events were
	// committed.
	Notifications() <-chan struct{}
	// Lost is closed when the session's connection died: another process
	// may take the consumer over, so the runner stops starting rounds.
	Lost() <-chan struct{}
	// Close gives the session up. It is safe to call more than once.
	Close()
}
