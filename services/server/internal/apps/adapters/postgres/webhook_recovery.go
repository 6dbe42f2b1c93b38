package postgres

import (
	"context"

	"bothy/server/internal/apps/adapters/postgres/db"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/pg"
)

// This file is the bulk recovery of the webhook tables (ADR 0079):
// app.RecoveryStore over the query of queries/webhook_recovery.sql.

var _ app.RecoveryStore = (*SubscriptionStore)(nil)

// RecoverDeliveries implements app.RecoveryStore in one statement
// (WebhookDeliveryRecoverWindow). It needs a unit of work: the caller holds
// the subscription's row lock, and the rows it recovers are locked until
// that unit of work ends.
func (s *SubscriptionStore) RecoverDeliveries(ctx context.Context, w app.RecoveryWindow) (app.RecoveredDeliveries, error) {
	if _, err := pg.RequireTx(ctx); err != nil {
		return app.RecoveredDeliveries{}, err
	}
	if w.Max < 1 || w.Max > 1<<30 {
		return app.RecoveredDeliveries{}, errs.Internalf("apps: a recovery bound lies between 1 and 2^30 deliveries")
	}
	row, err := s.q(ctx).WebhookDeliveryRecoverWindow(ctx, db.WebhookDeliveryRecoverWindowParams{
		MaxRows: int32(w.Max), SubscriptionID: w.SubscriptionID, MinSeq: w.MinSeq, Since: w.Since, Until: w.Until, Now: w.Now,
	})
	if err != nil {
		return app.RecoveredDeliveries{}, errs.Wrap(err, "apps: recovering webhook deliveries failed")
	}
	return app.RecoveredDeliveries{Count: int(row.Recovered), FirstSeq: row.FirstSeq, LastSeq: row.LastSeq, HasMore: row.HasMore}, nil
}
