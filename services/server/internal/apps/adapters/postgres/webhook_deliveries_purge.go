package postgres

import (
	"context"
	"fmt"
	"time"

	"bothy/server/internal/apps/adapters/postgres/db"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/pg"
)

var _ app.DeliveryPurgeStore = (*DeliveryStore)(nil)

// DeleteFinishedDeliveries implements app.DeliveryPurgeStore: it deletes
// the finished deliveries (succeeded, failed, dead) that finished before
// before, in batches of batchSize rows, each one statement on the pool
// (query WebhookDeliveryDeleteFinished, index
// webhook_deliveries_finished_idx), and returns how many it deleted. It
// never runs inside a unit of work, so no batch's locks outlive it.
func (s *DeliveryStore) DeleteFinishedDeliveries(ctx context.Context, before time.Time, batchSize int) (int64, error) {
	q := db.New(s.pool)
	n, err := pg.DeleteInBatches(ctx, batchSize, func(ctx context.Context, limit int) (int64, error) {
		return q.WebhookDeliveryDeleteFinished(ctx, db.WebhookDeliveryDeleteFinishedParams{Before: before, Batch: int32(limit)})
	})
	if err != nil {
		return n, errs.Wrap(fmt.Errorf("apps: deleting finished deliveries: %w", err), "apps: purging webhook deliveries failed")
	}
	return n, nil
}
