package app

import (
	"context"
	"errors"
	"time"

	"bothy/server/internal/kernel/clock"
)

// DeliveryPurgeStore deletes finished webhook deliveries for retention.
// Implemented by adapters/postgres.DeliveryStore.
type DeliveryPurgeStore interface {
	// DeleteFinishedDeliveries deletes the deliveries in state succeeded,
	// failed or dead whose last change (the time they finished) is before
	// before, never a pending one, in batches of at most batchSize rows,
	// each its own short statement, and returns how many it deleted (also
	// when it fails part way).
	DeleteFinishedDeliveries(ctx context.Context, before time.Time, batchSize int) (int64, error)
}

// PurgeOptions configure DeliveryPurger.
type PurgeOptions struct {
	// Retention is retention.webhook_deliveries: a finished delivery is
	// deleted once it finished that long ago. Positive.
	Retention time.Duration
	// BatchSize is retention.batch_size: the most rows one delete
	// statement removes, which bounds how long it holds row locks. At
	// least 1.
	BatchSize int
}

// DeliveryPurger is the retention use case of webhook deliveries
// (docs/spec/20-privacy.md section 2): it deletes finished deliveries older
// than retention.webhook_deliveries. Pending deliveries are never deleted,
// whatever their age; a subscription's progress lives in its own row
// (last_delivered_seq), so no delivery row has to stay for it.
type DeliveryPurger struct {
	store DeliveryPurgeStore
	clock clock.Clock
	opts  PurgeOptions
}

// NewDeliveryPurger returns the purger. It returns an error for invalid
// options and panics on a nil store or clock (a wiring bug).
func NewDeliveryPurger(store DeliveryPurgeStore, clk clock.Clock, o PurgeOptions) (*DeliveryPurger, error) {
	if store == nil || clk == nil {
		panic("apps: NewDeliveryPurger needs a store and a clock")
	}
	if o.Retention <= 0 {
		return nil, errors.New("apps: retention.webhook_deliveries must be positive")
	}
	if o.BatchSize < 1 {
		return nil, errors.New("apps: retention.batch_size must be at least 1")
	}
	return &DeliveryPurger{store: store, clock: clk, opts: o}, nil
}

// Purge deletes every finished delivery that finished before now minus
// retention.webhook_deliveries and returns how many it deleted. It is
// called by the periodic job apps.webhook_deliveries_purge; a run cut off
// by ctx keeps what it deleted and the next run goes on. Errors are
// *errs.Error values of code internal.
func (p *DeliveryPurger) Purge(ctx context.Context) (int64, error) {
	return p.store.DeleteFinishedDeliveries(ctx, p.clock.Now().Add(-p.opts.Retention), p.opts.BatchSize)
}
