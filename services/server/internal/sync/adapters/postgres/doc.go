// Package postgres stores the event log of internal/sync in PostgreSQL
// (migrations 00020 to 00022): the Appender of kernel/eventlog, the Log
// (sync.LogReader and the read side of consumer rounds), the consumer
// Cursors, the Sessions that let one process at a time run a consumer and
// wake it by LISTEN/NOTIFY, the Waker that notifies them after appends
// committed, and the Maintainer of the time partitions.
// Statements are sqlc queries (queries/*.sql, generated into db/, ADR
// 0078); only the appender's batch and the session's LISTEN are written in
// Go, because sqlc cannot express them.
//
// One advisory lock class is used, in the two-key form so it never meets
// River's single-key locks: LockClassConsumer holds a consumer for one
// process (key: consumer_cursors.lock_key). Appends take no lock (ADR 0070);
// the class 0x62740001 served them before and stays unused.
package postgres

import (
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/pg"
)

// The advisory lock classes (first key of pg_advisory_*lock(int, int)).
const (
	// LockClassConsumer with a consumer's lock_key is held by the process
	// that runs the consumer, for the life of its session.
	LockClassConsumer int32 = 0x62740002
)

// NotifyChannel is the LISTEN/NOTIFY channel the Waker notifies after
// appends committed (ADR 0091).
const NotifyChannel = "bothy_event_log"

// ErrNoUnitOfWork is returned by Append and LockCursor outside a unit of
// work: an event must commit with the change it reports, and a cursor lock
// means nothing without a transaction. It is pg.ErrNoUnitOfWork, the error
// of the one guard pg.RequireTx.
var ErrNoUnitOfWork = pg.ErrNoUnitOfWork

// ErrNoPartition is returned by Append when no event_log partition covers
// the event's occurred_at: partition maintenance has not run far enough
// ahead. The event is not stored; the unit of work must fail.
var ErrNoPartition = errs.New(errs.CodeInternal, "sync: event_log partitions are missing for the event time; partition maintenance must run")
