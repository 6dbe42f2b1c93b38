// Package jobs holds the River job of outgoing webhooks: apps.webhook_deliver
// in queue delivery (docs/spec/02-architecture.md 12.3), and the
// DeliveryScheduler that inserts it in the unit of work of the rows it serves.
package jobs

import (
	"context"
	"time"

	"bothy/server/internal/apps/app"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/jobs"
)

// KindWebhookDeliver is the job kind of webhook deliveries.
const KindWebhookDeliver = "apps.webhook_deliver"

// WebhookDeliver is the argument of apps.webhook_deliver: one job kind serves
// every trigger (consumer round, chain, retry, lease wake-up, resume,
// redelivery), because all of them mean "look at this subscription's head"
// (D-M2-26-3).
type WebhookDeliver struct {
	// SubscriptionID names the subscription whose head is due.
	SubscriptionID ids.ID `json:"subscription_id"`
}

// Kind implements jobs.Args.
func (WebhookDeliver) Kind() string { return KindWebhookDeliver }

// Scheduler implements app.DeliveryScheduler over the job inserter.
type Scheduler struct {
	ins *jobs.Inserter
}

var _ app.DeliveryScheduler = (*Scheduler)(nil)

// NewScheduler returns a scheduler inserting through ins. It panics on nil, a
// wiring bug.
func NewScheduler(ins *jobs.Inserter) *Scheduler {
	if ins == nil {
		panic("apps/jobs: NewScheduler needs an inserter")
	}
	return &Scheduler{ins: ins}
}

// Schedule inserts apps.webhook_deliver for subscriptionID due at at, in the
// unit of work of ctx (jobs.ErrNoTransaction outside one).
func (s *Scheduler) Schedule(ctx context.Context, subscriptionID ids.ID, at time.Time) error {
	return s.ins.InsertTx(ctx, WebhookDeliver{SubscriptionID: subscriptionID}, jobs.InsertOptions{ScheduledAt: at})
}
