package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/sync/adapters/postgres/db"
)

// MaintainerOptions configure partition maintenance.
type MaintainerOptions struct {
	// PartitionInterval is sync.partition_interval: the time span of one
	// event_log partition. A whole number of seconds, at least one.
	PartitionInterval time.Duration
	// PartitionAhead is sync.partition_ahead: how far past now partitions
	// must exist, so appends never meet a missing partition between two
	// maintenance runs. At least the period of the maintenance job.
	PartitionAhead time.Duration
	// EventRetention is sync.event_retention: a partition is dropped once
	// its upper bound is that far in the past. Positive.
	EventRetention time.Duration
}

// Maintainer creates event_log partitions ahead and drops expired ones
// through the SECURITY DEFINER function event_log_maintain_partitions
// (bothy_app has no DDL rights, ADR 0007).
type Maintainer struct {
	pool *pgxpool.Pool
	opts MaintainerOptions
}

// MaintenanceResult tells what one run changed.
type MaintenanceResult struct {
	// Created and Dropped count partitions.
	Created, Dropped int
}

// NewMaintainer returns a maintainer over pool. It returns an error for
// invalid options and panics on a nil pool (a wiring bug).
func NewMaintainer(pool *pgxpool.Pool, o MaintainerOptions) (*Maintainer, error) {
	if pool == nil {
		panic("sync: NewMaintainer needs a pool")
	}
	if o.PartitionInterval < time.Second || o.PartitionInterval%time.Second != 0 {
		return nil, errors.New("sync: sync.partition_interval must be a whole number of seconds, at least one")
	}
	if o.PartitionAhead < 0 {
		return nil, errors.New("sync: sync.partition_ahead must not be negative")
	}
	if o.EventRetention <= 0 {
		return nil, errors.New("sync: sync.event_retention must be positive")
	}
	return &Maintainer{pool: pool, opts: o}, nil
}

// Run makes partitions cover [now, now + PartitionAhead] and drops those
// whose upper bound is at or before now - EventRetention, raising the
// retention watermark. now comes from the caller's clock, so a fake clock
// drives retention in tests. Run is idempotent and safe from several
// processes at once: the function takes a transaction-scoped advisory lock
// (migration 00050), so runs started together wait for each other instead
// of creating one partition twice.
//
// Dropping takes a short exclusive lock on event_log, so appends and rounds
// wait for it; run it periodically, not per request.
func (m *Maintainer) Run(ctx context.Context, now time.Time) (MaintenanceResult, error) {
	r, err := db.New(pg.Conn(ctx, m.pool)).EventLogPartitionMaintain(ctx, db.EventLogPartitionMaintainParams{
		Now: now, PartitionInterval: m.opts.PartitionInterval, PartitionAhead: m.opts.PartitionAhead,
		EventRetention: m.opts.EventRetention,
	})
	if err != nil {
		return MaintenanceResult{}, errs.Wrap(err, "sync: event_log partition maintenance failed")
	}
	return MaintenanceResult{Created: int(r.Created), Dropped: int(r.Dropped)}, nil
}
