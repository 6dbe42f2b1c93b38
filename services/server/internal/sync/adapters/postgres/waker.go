package postgres

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/platform/otel"
	"bothy/server/internal/sync/adapters/postgres/db"
)

// Waker wakes the consumers of the event log after appends committed: it
// notifies NotifyChannel in a transaction of its own, at most one at a
// time per process, and one notification serves every append that
// committed while the previous one was on its way.
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
		// The error's class only, as everywhere: a message may carry data.
		w.log.Warn("sync: waking the event log's consumers failed; they read the log at their next poll",
			otel.ErrorAttr(err))
	}
}
