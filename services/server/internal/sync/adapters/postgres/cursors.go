package postgres

import (
	"context"
	"errors"

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

// LockCursor implements app.CursorStore.
func (c *Cursors) LockCursor(ctx context.Context, name eventsync.ConsumerName) (int64, error) {
	tx, ok := pg.TxFrom(ctx)
	if !ok {
		return 0, ErrNoUnitOfWork
	}
	if _, err := tx.Exec(ctx, ensureCursor, string(name), c.clock.Now()); err != nil {
		return 0, errs.Wrap(err, "sync: creating the consumer cursor failed")
	}
	var seq int64
	if err := tx.QueryRow(ctx, `SELECT last_seq FROM consumer_cursors WHERE name = $1 FOR UPDATE`, string(name)).Scan(&seq); err != nil {
		return 0, errs.Wrap(err, "sync: locking the consumer cursor failed")
	}
	return seq, nil
}

// SetCursor implements app.CursorStore.
func (c *Cursors) SetCursor(ctx context.Context, name eventsync.ConsumerName, seq int64) error {
	tag, err := pg.Conn(ctx, c.pool).Exec(ctx, `UPDATE consumer_cursors SET last_seq = $2, updated_at = $3 WHERE name = $1`,
		string(name), seq, c.clock.Now())
	if err != nil {
		return errs.Wrap(err, "sync: moving the consumer cursor failed")
	}
	if tag.RowsAffected() != 1 {
		return errs.Wrap(errors.New("no cursor row"), "sync: moving the consumer cursor failed")
	}
	return nil
}
