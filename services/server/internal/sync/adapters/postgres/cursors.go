package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/pg"
	eventsync "bothy/server/internal/sync"
	"bothy/server/internal/sync/adapters/postgres/db"
	"bothy/server/internal/sync/app"
	"bothy/server/internal/sync/domain"
)

// Cursors implements app.CursorStore over consumer_cursors.
type Cursors struct {
	pool  *pgxpool.Pool
	clock clock.Clock
}

var _ app.CursorStore = (*Cursors)(nil)

// NewCursors returns the cursor store; clk stamps updated_at. It panics on
// a nil pool or clock (a wiring bug).
func NewCursors(pool *pgxpool.Pool, clk clock.Clock) *Cursors {
	if pool == nil || clk == nil {
		panic("sync: NewCursors needs a pool and a clock")
	}
	return &Cursors{pool: pool, clock: clk}
}

// q returns the sqlc queries on the ambient unit of work of ctx, or on the
// pool.
func (c *Cursors) q(ctx context.Context) *db.Queries { return db.New(pg.Conn(ctx, c.pool)) }

// ReadCursor implements app.CursorStore. It reads first and writes only for
// a consumer without a cursor, so a round that finds its cursor has no
// transaction id before its read of the log (domain.Settle needs the round's
// id to be taken after that read).
func (c *Cursors) ReadCursor(ctx context.Context, name eventsync.ConsumerName) (app.Cursor, bool, error) {
	tx, err := pg.RequireTx(ctx)
	if err != nil {
		return app.Cursor{}, false, err
	}
	q := db.New(tx)
	row, err := q.ConsumerCursorGet(ctx, string(name))
	if err == nil {
		return cursor(row.LastSeq, row.GapHorizon, row.GapThrough), false, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return app.Cursor{}, false, errs.Wrap(err, "sync: reading the consumer cursor failed")
	}
	// The first round of a consumer creates its cursor right below the
	// retained log (ConsumerCursorEnsure).
	if err := q.ConsumerCursorEnsure(ctx, db.ConsumerCursorEnsureParams{Name: string(name), UpdatedAt: clock.Stamp(c.clock)}); err != nil {
		return app.Cursor{}, false, errs.Wrap(err, "sync: creating the consumer cursor failed")
	}
	if row, err = q.ConsumerCursorGet(ctx, string(name)); err != nil {
		return app.Cursor{}, false, errs.Wrap(err, "sync: reading the consumer cursor failed")
	}
	return cursor(row.LastSeq, row.GapHorizon, row.GapThrough), true, nil
}

// cursor builds the cursor of a row; the queries read a NULL horizon as 0
// and 0, the zero domain.Horizon.
func cursor(lastSeq int64, horizon uint64, through int64) app.Cursor {
	return app.Cursor{Seq: lastSeq, Horizon: domain.Horizon{XID: horizon, Through: through}}
}

// LockCursor implements app.CursorStore.
func (c *Cursors) LockCursor(ctx context.Context, name eventsync.ConsumerName) (app.Cursor, uint64, error) {
	tx, err := pg.RequireTx(ctx)
	if err != nil {
		return app.Cursor{}, 0, err
	}
	row, err := db.New(tx).ConsumerCursorLock(ctx, string(name))
	if err != nil {
		return app.Cursor{}, 0, errs.Wrap(err, "sync: locking the consumer cursor failed")
	}
	return cursor(row.LastSeq, row.GapHorizon, row.GapThrough), row.XactID, nil
}

// SetCursor implements app.CursorStore.
func (c *Cursors) SetCursor(ctx context.Context, name eventsync.ConsumerName, cur app.Cursor) error {
	var horizon *uint64
	var through *int64
	if cur.Horizon.XID != 0 {
		horizon, through = &cur.Horizon.XID, &cur.Horizon.Through
	}
	n, err := c.q(ctx).ConsumerCursorUpdate(ctx, db.ConsumerCursorUpdateParams{
		Name: string(name), LastSeq: cur.Seq, GapHorizon: horizon, GapThrough: through, UpdatedAt: clock.Stamp(c.clock),
	})
	if err != nil {
		return errs.Wrap(err, "sync: moving the consumer cursor failed")
	}
	if n != 1 {
		return errs.Wrap(errors.New("no cursor row"), "sync: moving the consumer cursor failed")
	}
	return nil
}
