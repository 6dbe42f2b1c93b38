// Package app runs the worker consumers of the event log (M2-01,
// docs/spec/04-sync-protocol.md 7.6, ADR 0051): a registry of consumer
// handlers (Consumers, the implementation of sync.Consumers) and a Runner
// per consumer that handles the log in rounds, each one unit of work that
// also moves the consumer's cursor.
package app

import (
	"context"

	eventsync "bothy/server/internal/sync"
)

// EventSource reads the event log inside the round's unit of work.
type EventSource interface {
	// MinRetainedSeq is sync.LogReader.MinRetainedSeq: every committed event
	// at or above it is still in the log, everything below it is gone.
	MinRetainedSeq(ctx context.Context) (int64, error)
	// ReadAfter returns up to limit events with seq > after, in seq order.
	ReadAfter(ctx context.Context, after int64, limit int) ([]eventsync.Event, error)
	// HeadSeq returns the highest seq in the log, or 0 when it is empty. It
	// feeds the lag metric only.
	HeadSeq(ctx context.Context) (int64, error)
}

// CursorStore keeps one cursor per consumer: the seq of the last event the
// consumer handled.
type CursorStore interface {
	// LockCursor returns the cursor of name locked for the rest of the
	// ambient unit of work (concurrent rounds of the same consumer wait on
	// it), creating it right below the retained log when it does not exist
	// yet. It returns an error outside a unit of work.
	LockCursor(ctx context.Context, name eventsync.ConsumerName) (int64, error)
	// SetCursor moves the cursor of name to seq in the ambient unit of work.
	SetCursor(ctx context.Context, name eventsync.ConsumerName, seq int64) error
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
