// Package auditpg is the PostgreSQL implementation of auditing.Recorder: it
// writes audit_events rows through the ambient transaction of the context
// (pg.Conn), or on a connection of its own for detached entries.
package auditpg

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/correlation"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
)

// Recorder writes audit entries into audit_events.
type Recorder struct {
	pool  *pgxpool.Pool
	clock clock.Clock
	rand  io.Reader
}

var _ auditing.Recorder = (*Recorder)(nil)

// New returns a Recorder over pool (connected as bothy_app). clk stamps
// created_at and the time part of the entry ID, so a fake clock moves both.
// It panics on a nil dependency, because that is a wiring bug.
func New(pool *pgxpool.Pool, clk clock.Clock) *Recorder {
	if pool == nil || clk == nil {
		panic("auditpg: New needs a pool and a clock")
	}
	return &Recorder{pool: pool, clock: clk, rand: rand.Reader}
}

const insertEntry = `
INSERT INTO audit_events
    (id, created_at, action, actor_id, actor_kind, resource_kind, resource_id,
     outcome, reason, details, correlation_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULLIF($9, ''), $10, NULLIF($11, ''))`

// Record implements auditing.Recorder: it joins the unit of work of ctx.
func (r *Recorder) Record(ctx context.Context, e auditing.Entry) error {
	return r.insert(ctx, pg.Conn(ctx, r.pool), e)
}

// RecordDetached implements auditing.Recorder: it writes through the pool,
// never through the ambient transaction, so the row commits at once. It
// takes a second connection while the caller may hold one in its
// transaction; the pool must leave room for that (database.max_conns).
func (r *Recorder) RecordDetached(ctx context.Context, e auditing.Entry) error {
	return r.insert(ctx, r.pool, e)
}

func (r *Recorder) insert(ctx context.Context, db pg.DBTX, e auditing.Entry) error {
	if err := e.Validate(); err != nil {
		return err
	}
	a, err := auditing.ActorColumns(e.Actor)
	if err != nil {
		return err
	}
	details, err := json.Marshal(e.DetailsMap())
	if err != nil {
		return errs.Wrap(err, "audit details do not encode")
	}
	now := r.clock.Now()
	id, err := ids.NewAt(now, r.rand)
	if err != nil {
		return errs.Wrap(err, "audit entry ID")
	}
	_, err = db.Exec(ctx, insertEntry, id, now, e.Action, a.ID, a.Kind, e.ResourceKind, e.ResourceID,
		string(e.Outcome), e.Reason, details, correlation.From(ctx))
	if err != nil {
		return errs.Wrap(fmt.Errorf("auditpg: insert: %w", err), "audit entry not written")
	}
	return nil
}
