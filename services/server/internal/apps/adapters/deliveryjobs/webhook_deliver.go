// Package deliveryjobs holds the River job of outgoing webhooks:
// apps.webhook_deliver in queue delivery (docs/spec/02-architecture.md
// 12.3), and the DeliveryScheduler that inserts it in the unit of work of
// the rows it serves. Its name says what it runs, so no importer has to
// alias it against internal/platform/jobs.
package deliveryjobs

import (
	"context"
	"errors"
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
//
// The job a consumer round inserts for several subscriptions at once names
// them in SubscriptionIDs instead, and its runs claim together
// (app.Deliveries.DeliverTogether, ADR 0089).
type WebhookDeliver struct {
	// SubscriptionID names the subscription whose head is due; zero in a
	// job for several.
	SubscriptionID ids.ID `json:"subscription_id"`
	// SubscriptionIDs names the subscriptions of a job for several, at
	// least two; empty in a job for one.
	SubscriptionIDs []ids.ID `json:"subscription_ids,omitempty"`
}

// subscriptions returns the subscriptions the job serves.
func (a WebhookDeliver) subscriptions() []ids.ID {
	if len(a.SubscriptionIDs) > 0 {
		return a.SubscriptionIDs
	}
	return []ids.ID{a.SubscriptionID}
}

// Kind implements jobs.Args.
func (WebhookDeliver) Kind() string { return KindWebhookDeliver }

// Deliverer runs the delivery job of one subscription or of several;
// *app.Deliveries implements it.
type Deliverer interface {
	// DeliverScheduled sends the subscription's due heads in order
	// (app.Deliveries.DeliverScheduled) for a job that was due at
	// scheduledAt; an error makes River retry the job.
	DeliverScheduled(ctx context.Context, subscriptionID ids.ID, scheduledAt time.Time) error
	// DeliverTogether does the same for several subscriptions whose runs
	// claim together (app.Deliveries.DeliverTogether); an error makes River
	// retry the job.
	DeliverTogether(ctx context.Context, subscriptionIDs []ids.ID, scheduledAt time.Time) error
	// Stalled runs after the last run of a job failed with cause
	// (app.Deliveries.Stalled): the head names the failure and keeps a job.
	Stalled(ctx context.Context, subscriptionID ids.ID, cause error) error
}

// RegisterWebhookDeliver registers the handler of apps.webhook_deliver in
// queue delivery on rt with maxAttempts runs per job
// (webhook.job_max_attempts; 0 is River's default). Every role calls it:
// role api inserts the job (redelivery, resume, subscription changes),
// roles worker and all run it. The handler calls d.DeliverScheduled, or
// d.DeliverTogether for a job of several subscriptions, with the time the
// job was due; a job that finds nothing due simply ends, and a failure
// returns its error so River retries the job (the subscription's lease
// keeps a retry from sending twice). When the last run fails, the handler
// calls d.Stalled for each subscription of the job, so a head that keeps
// failing on our side is never left silent and without a job
// (D-M2-26-42), and returns the run's error.
// It returns the error of jobs.Register (a kind registered twice, or
// registration already closed) and panics on nil arguments, a wiring bug.
func RegisterWebhookDeliver(rt *jobs.Runtime, d Deliverer, maxAttempts int) error {
	if rt == nil || d == nil {
		panic("apps/jobs: RegisterWebhookDeliver needs a runtime and a deliverer")
	}
	return jobs.Register(rt, func(ctx context.Context, job jobs.Job[WebhookDeliver]) error {
		var err error
		if len(job.Args.SubscriptionIDs) > 0 {
			err = d.DeliverTogether(ctx, job.Args.SubscriptionIDs, job.ScheduledAt)
		} else {
			err = d.DeliverScheduled(ctx, job.Args.SubscriptionID, job.ScheduledAt)
		}
		if err == nil || !job.Final() || ctx.Err() != nil {
			return err
		}
		for _, id := range job.Args.subscriptions() {
			if serr := d.Stalled(ctx, id, err); serr != nil {
				return errors.Join(err, serr)
			}
		}
		return err
	}, jobs.HandlerOptions{Queue: jobs.QueueDelivery, MaxAttempts: maxAttempts})
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

// ScheduleGroups inserts apps.webhook_deliver for each of groups, due at
// at, in one statement in the unit of work of ctx (jobs.ErrNoTransaction
// outside one): the job of a group of one names its subscription as
// Schedule's does, the job of a larger group names them all.
func (s *Scheduler) ScheduleGroups(ctx context.Context, groups [][]ids.ID, at time.Time) error {
	return s.ins.InsertManyTx(ctx, groupArgs(groups), jobs.InsertOptions{ScheduledAt: at})
}

// StartGroups is ScheduleGroups for jobs that start in this process right
// after the commit where the job runtime allows it
// (jobs.InsertOptions.StartInProcess, ADR 0092), and otherwise as
// ScheduleGroups inserts them.
func (s *Scheduler) StartGroups(ctx context.Context, groups [][]ids.ID, at time.Time) error {
	return s.ins.InsertManyTx(ctx, groupArgs(groups), jobs.InsertOptions{ScheduledAt: at, StartInProcess: true})
}

// EndStartedJob deletes the row of the job started in process whose run
// is in ctx with the COMMIT of ctx's unit of work (jobs.RetireStartedRow).
func (s *Scheduler) EndStartedJob(ctx context.Context) error {
	return jobs.RetireStartedRow(ctx)
}

// groupArgs are the args of the jobs of groups: the job of a group of one
// names its subscription as Schedule's does, the job of a larger group
// names them all; an empty group has none.
func groupArgs(groups [][]ids.ID) []jobs.Args {
	args := make([]jobs.Args, 0, len(groups))
	for _, g := range groups {
		switch len(g) {
		case 0:
		case 1:
			args = append(args, WebhookDeliver{SubscriptionID: g[0]})
		default:
			args = append(args, WebhookDeliver{SubscriptionIDs: g})
		}
	}
	return args
}
