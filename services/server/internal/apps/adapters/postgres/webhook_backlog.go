package postgres

import (
	"context"
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/kernel/errs"
)

var _ app.BacklogReader = (*DeliveryStore)(nil)

// DeliveryBacklog implements app.BacklogReader with the one statement
// WebhookBacklog (queries/webhook_backlog.sql): the pending deliveries, the
// created_at of the oldest (now when none is pending) and the subscriptions
// by state, every state present. It runs on the pool, outside any unit of
// work; an error is wrapped as internal.
func (s *DeliveryStore) DeliveryBacklog(ctx context.Context, now time.Time) (app.DeliveryBacklog, error) {
	r, err := s.q(ctx).WebhookBacklog(ctx, now)
	if err != nil {
		return app.DeliveryBacklog{}, errs.Wrap(err, "apps: reading the webhook backlog failed")
	}
	return app.DeliveryBacklog{
		Pending:                r.Pending,
		OldestPendingCreatedAt: r.OldestCreatedAt,
		Subscriptions: map[apps.SubscriptionState]int64{
			apps.SubscriptionActive:   r.Active,
			apps.SubscriptionPaused:   r.Paused,
			apps.SubscriptionDisabled: r.Disabled,
		},
	}, nil
}
