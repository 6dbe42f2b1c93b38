package deliveryjobs_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/adapters/deliveryjobs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/jobs"
)

func TestWebhookDeliverArgsAreValid(t *testing.T) {
	t.Parallel()
	require.NoError(t, jobs.ValidateArgsType(deliveryjobs.WebhookDeliver{SubscriptionID: ids.New()}))
	require.NoError(t, jobs.ValidateArgsType(deliveryjobs.WebhookDeliver{SubscriptionIDs: []ids.ID{ids.New(), ids.New()}}))
	require.Equal(t, "apps.webhook_deliver", deliveryjobs.WebhookDeliver{}.Kind())
}

// deliverFunc adapts a function to deliveryjobs.Deliverer.
type deliverFunc func(ctx context.Context, subscriptionID ids.ID) error

func (f deliverFunc) DeliverScheduled(ctx context.Context, subscriptionID ids.ID, _ time.Time) error {
	return f(ctx, subscriptionID)
}

func (f deliverFunc) DeliverTogether(ctx context.Context, subscriptionIDs []ids.ID, _ time.Time) error {
	for _, id := range subscriptionIDs {
		if err := f(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

func (deliverFunc) Stalled(context.Context, ids.ID, error) error { return nil }

func TestRegisterWebhookDeliverUsesTheDeliveryQueue(t *testing.T) {
	t.Parallel()
	// The pool connects lazily: registration needs no database.
	pool, err := pgxpool.New(context.Background(), "postgres://bothy_app@127.0.0.1:1/bothy")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	rt, err := jobs.New(jobs.Options{Role: "api", FetchPollInterval: time.Second, FetchCooldown: 10 * time.Millisecond},
		jobs.Deps{Pool: pool, Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	require.NoError(t, deliveryjobs.RegisterWebhookDeliver(rt, deliverFunc(func(context.Context, ids.ID) error { return nil }), 0))
	o, ok := rt.Registered(deliveryjobs.KindWebhookDeliver)
	require.True(t, ok)
	require.Equal(t, jobs.QueueDelivery, o.Queue)
	require.Error(t, deliveryjobs.RegisterWebhookDeliver(rt, deliverFunc(func(context.Context, ids.ID) error { return nil }), 0),
		"a kind is registered once")
}
