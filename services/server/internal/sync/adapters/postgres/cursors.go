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
	"bothy/server/internal/sync/app"
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

// ensureCursor creates the cursor of a consumer seen for the first time
// right below the retained log: it handles every event still in the log and
// reports no loss for events dropped before it existed.
const ensureCursor = `
INSERT INTO consumer_cursors (name, last_seq, updated_at)
SELECT $1, dropped_through_seq, $2 FROM event_log_watermark
ON CONFLICT (name) DO NOTHING`

const cursorColumns = `last_seq, coalesce(gap_horizon, '0'::xid8), coalesce(gap_through, 0)`

// ReadCursor implements app.CursorStore. It reads first and writes only for
// a consumer without a cursor, so a round that finds its cursor has no
// transaction id before its read of the log (domain.Settle needs the round's
// id to be taken after that read).
func (c *Cursors) ReadCursor(ctx context.Context, name eventsync.ConsumerName) (app.Cursor, bool, error) {
	tx, ok := pg.TxFrom(ctx)
	if !ok {
		return app.Cursor{}, false, ErrNoUnitOfWork
	}
	var cur app.Cursor
	err := tx.QueryRow(ctx, `SELECT `+cursorColumns+` FROM consumer_cursors WHERE name = $1`, string(name)).
		Scan(&cur.Seq, &cur.Horizon.XID, &cur.Horizon.Through)
	if err == nil {
		return cur, false, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return app.Cursor{}, false, errs.Wrap(err, "sync: reading the consumer cursor failed")
	}
	if _, err := tx.Exec(ctx, ensureCursor, string(name), c.clock.Now()); err != nil {
		return app.Cursor{}, false, errs.Wrap(err, "sync: creating the consumer cursor failed")
	}
	if err := tx.QueryRow(ctx, `SELECT `+cursorColumns+` FROM consumer_cursors WHERE name = $1`, string(name)).
		Scan(&cur.Seq, &cur.Horizon.XID, &cur.Horizon.Through); err != nil {
		return app.Cursor{}, false, errs.Wrap(err, "sync: reading the consumer cursor failed")
	}
	return cur, true, nil
}

// LockCursor implements app.CursorStore.
func (c *Cursors) LockCursor(ctx context.Context, name eventsync.ConsumerName) (app.Cursor, uint64, error) {
	tx, ok := pg.TxFrom(ctx)
	if !ok {
		return app.Cursor{}, 0, ErrNoUnitOfWork
	}
	var cur app.Cursor
	var xid uint64
	if err := tx.QueryRow(ctx, `SELECT `+cursorColumns+`, pg_current_xact_id() FROM consumer_cursors WHERE name = $1 FOR UPDATE`,
		string(name)).Scan(&cur.Seq, &cur.Horizon.XID, &cur.Horizon.Through, &xid); err != nil {
		return app.Cursor{}, 0, errs.Wrap(err, "sync: locking the consumer cursor failed")
	}
	return cur, xid, nil
}

// SetCursor implements app.CursorStore.
func (c *Cursors) SetCursor(ctx context.Context, name eventsync.ConsumerName, cur app.Cursor) error {
	var horizon *uint64
	var through *int64
	if cur.Horizon.XID != 0 {
		horizon, through = &cur.Horizon.XID, &cur.Horizon.Through
	}
	tag, err := pg.Conn(ctx, c.pool).Exec(ctx,
		`UPDATE consumer_cursors SET last_seq = $2, gap_horizon = $3, gap_through = $4, updated_at = $5 WHERE name = $1`,
		string(name), cur.Seq, horizon, through, c.clock.Now())
	if err != nil {
		return errs.Wrap(err, "sync: moving the consumer cursor failed")
	}
	if tag.RowsAffected() != 1 {
		return errs.Wrap(errors.New("no cursor row"), "sync: moving the consumer cursor failed")
	}
	return nil
}
