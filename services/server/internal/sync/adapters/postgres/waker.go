package postgres

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/platform/otel"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/sync/adapters/postgres/db"
)

// Waker wakes the consumers of the event log after appends committed: it
// notifies NotifyChannel in a transaction of its own, at most one at a
// time per process, and one notification serves every append that
// committed while the previous one was on its way. The one on its way may
// also be one that a unit of work carries with its COMMIT (Carry, ADR
// 0094).
//
// Why not NOTIFY in the appending transaction: PostgreSQL serializes the
// commits of all transactions that notified, with their WAL flush, under
// one lock of the database (PreCommit_Notify), so appends that notified
// committed one at a time. The Waker's transaction writes nothing of its
// own and commits asynchronously, so it holds that lock briefly, and
// appends commit together again (ADR 0091).
//
// A wake-up is best effort: one lost to a crash or a failed notification
// costs a consumer at most consumer.poll_interval, after which it reads
// the log anyway. For the same reason a notification is given up after
// consumer.poll_interval.
type Waker struct {
	pool         *pgxpool.Pool
	log          *slog.Logger
	pollInterval time.Duration

	mu      sync.Mutex
	pending bool // an append committed since the last notification left
	running bool // a goroutine is sending notifications
}

// NewWaker returns a Waker that notifies through pool, gives each
// notification at most pollInterval (consumer.poll_interval) and logs a
// failed one on log as a warning: the consumers' next poll covers it, but
// until it is mended every wake-up waits for that poll.
// It panics on a nil pool or logger or a pollInterval that is not
// positive, a wiring bug.
func NewWaker(pool *pgxpool.Pool, log *slog.Logger, pollInterval time.Duration) *Waker {
	if pool == nil || log == nil || pollInterval <= 0 {
		panic("sync: NewWaker needs a pool, a logger and a positive poll interval")
	}
	return &Waker{pool: pool, log: log, pollInterval: pollInterval}
}

// Carry reports whether the caller may send the next notification
// itself, with the COMMIT of its unit of work (pg.FollowCommit, ADR 0094):
// true when no notification is on its way. The caller then counts as one
// on its way until it calls Carried, so wake-ups meanwhile wait for it and
// share the notification after it, as they share the Waker's.
func (w *Waker) Carry() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running {
		return false
	}
	w.running, w.pending = true, false
	return true
}

// Carried ends a notification that Carry allowed, with its outcome: nil
// when it went, pg.ErrNotFollowed when it did not (nothing committed that
// needs it), or the error of a notification that failed, which is logged
// as Wake's are. Wake-ups that arrived meanwhile get the next
// notification.
func (w *Waker) Carried(err error) {
	if err != nil && !errors.Is(err, pg.ErrNotFollowed) {
		w.failed(err)
	}
	w.mu.Lock()
	if !w.pending {
		w.running = false
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	go w.run()
}

// Wake asks for a notification after this call. It does not wait: the
// notification is sent by a goroutine that runs while wake-ups arrive.
func (w *Waker) Wake() {
	w.mu.Lock()
	w.pending = true
	if w.running {
		w.mu.Unlock()
		return
	}
	w.running = true
	w.mu.Unlock()
	go w.run()
}

func (w *Waker) run() {
	for {
		w.mu.Lock()
		if !w.pending {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.pending = false
		w.mu.Unlock()
		w.notify()
	}
}

func (w *Waker) notify() {
	ctx, cancel := context.WithTimeout(context.Background(), w.pollInterval)
	defer cancel()
	// The pool directly, never a unit of work of ctx: the notification
	// is a transaction of its own (EventLogWake).
	if err := db.New(w.pool).EventLogWake(ctx, NotifyChannel); err != nil {
		w.failed(err)
	}
}

// failed warns of a notification that failed.
func (w *Waker) failed(err error) {
	// The error's class only, as everywhere: a message may carry data.
	w.log.Warn("sync: waking the event log's consumers failed; they read the log at their next poll",
		otel.ErrorAttr(err))
}
