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

// Deliverer runs the delivery job of one subscription; *app.Deliveries
// implements it.
type Deliverer interface {
	// Deliver sends the subscription's due heads in order (app.Deliveries.
	// Deliver); an error makes River retry the job.
	Deliver(ctx context.Context, subscriptionID ids.ID) error
}

// RegisterWebhookDeliver registers the handler of apps.webhook_deliver in
// queue delivery on rt. Every role calls it: role api inserts the job
// (redelivery, resume, subscription changes), roles worker and all run it.
// The handler calls d.Deliver; a job that finds nothing due simply ends,
// and a failure returns its error so River retries the job with its
// defaults (the lease of Design note 4 keeps a retry from sending twice).
// It returns the error of jobs.Register (a kind registered twice, or
// registration already closed) and panics on nil arguments, a wiring bug.
func RegisterWebhookDeliver(rt *jobs.Runtime, d Deliverer) error {
	if rt == nil || d == nil {
		panic("apps/jobs: RegisterWebhookDeliver needs a runtime and a deliverer")
	}
	return jobs.Register(rt, func(ctx context.Context, job jobs.Job[WebhookDeliver]) error {
		return d.Deliver(ctx, job.Args.SubscriptionID)
	}, jobs.HandlerOptions{Queue: jobs.QueueDelivery})
}

// Scheduler implements app.DeliveryScheduler over the job inserter.
type Scheduler struct {
	ins *jobs.Inserter
}

var (
	_ app.DeliveryScheduler = (*Scheduler)(nil)
	_ Deliverer             = (*app.Deliveries)(nil)
)

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
