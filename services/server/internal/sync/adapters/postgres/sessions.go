package postgres

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/pg"
	eventsync "bothy/server/internal/sync"
	"bothy/server/internal/sync/adapters/postgres/db"
	"bothy/server/internal/sync/app"
)

// SessionOptions configure Sessions.
type SessionOptions struct {
	// PollInterval is consumer.poll_interval: how often a process waiting
	// for a consumer held elsewhere tries its lock again. Positive.
	PollInterval time.Duration
}

// Sessions implements app.Coordinator with one dedicated connection per
// consumer session, outside the pool: it holds the consumer's session-level
// advisory lock and LISTENs on NotifyChannel. When the process dies, or
// only its connection, PostgreSQL releases the lock and a waiting process
// takes over within one PollInterval.
type Sessions struct {
	cfg   *pgx.ConnConfig
	clock clock.Clock
	poll  time.Duration
}

var _ app.Coordinator = (*Sessions)(nil)

// NewSessions returns a coordinator whose connections use the configuration
// of pool (same URL, role and parameters). clk stamps a cursor row it
// creates. It returns an error for invalid options and panics on a nil pool
// or clock (a wiring bug).
func NewSessions(pool *pgxpool.Pool, clk clock.Clock, o SessionOptions) (*Sessions, error) {
	if pool == nil || clk == nil {
		panic("sync: NewSessions needs a pool and a clock")
	}
	if o.PollInterval <= 0 {
		return nil, errors.New("sync: consumer.poll_interval must be positive")
	}
	return &Sessions{cfg: pg.DedicatedConnConfig(pool), clock: clk, poll: o.PollInterval}, nil
}

// Acquire implements app.Coordinator.
func (s *Sessions) Acquire(ctx context.Context, name eventsync.ConsumerName) (app.Session, error) {
	conn, err := pgx.ConnectConfig(ctx, s.cfg.Copy())
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errs.Wrap(err, "sync: connecting the consumer session failed")
	}
	held := false
	defer func() {
		if !held {
			pg.CloseDedicated(conn)
		}
	}()
	q := db.New(conn)
	if err := q.ConsumerCursorEnsure(ctx, db.ConsumerCursorEnsureParams{Name: string(name), UpdatedAt: clock.Stamp(s.clock)}); err != nil {
		return nil, sessionErr(ctx, err)
	}
	key, err := q.ConsumerCursorLockKeyByName(ctx, string(name))
	if err != nil {
		return nil, sessionErr(ctx, err)
	}
	lock := db.ConsumerCursorTryLockSessionParams{LockClass: LockClassConsumer, LockKey: key}
	for {
		got, err := q.ConsumerCursorTryLockSession(ctx, lock)
		if err != nil {
			return nil, sessionErr(ctx, err)
		}
		if got {
			break
		}
		t := time.NewTimer(s.poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	if err := listenForAppends(ctx, conn); err != nil {
		return nil, sessionErr(ctx, err)
	}
	held = true
	return newSession(conn), nil
}

// listenForAppends subscribes conn to NotifyChannel. It is SQL written in
// Go (inline_sql, ADR 0078): LISTEN is a utility statement whose channel is
// an identifier, not a parameter, so sqlc cannot express it.
func listenForAppends(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, `LISTEN `+NotifyChannel)
	return err
}

func sessionErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errs.Wrap(err, "sync: preparing the consumer session failed")
}

type session struct {
	conn   *pgx.Conn
	notify chan struct{}
	lost   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

func newSession(conn *pgx.Conn) *session {
	ctx, cancel := context.WithCancel(context.Background())
	s := &session{
		conn:   conn,
		notify: make(chan struct{}, 1),
		lost:   make(chan struct{}),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	go s.listen(ctx)
	return s
}

// listen forwards notifications until Close or until the connection dies;
// only the latter closes lost.
func (s *session) listen(ctx context.Context) {
	defer close(s.done)
	for {
		if _, err := s.conn.WaitForNotification(ctx); err != nil {
			if ctx.Err() == nil {
				close(s.lost)
			}
			return
		}
		select {
		case s.notify <- struct{}{}:
		default:
		}
	}
}

func (s *session) Notifications() <-chan struct{} { return s.notify }
func (s *session) Lost() <-chan struct{}          { return s.lost }

// Close stops listening and closes the connection, which releases the
// consumer's lock.
func (s *session) Close() {
	s.once.Do(func() {
		s.cancel()
		<-s.done
		pg.CloseDedicated(s.conn)
	})
}
