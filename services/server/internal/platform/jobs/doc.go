// Package jobs is bothy's background job system over River
// (docs/spec/02-architecture.md 12): handlers registered per args type, jobs
// inserted inside the unit of work of the rows they serve, and a Runtime per
// process role.
//
//	rt, err := jobs.New(opts, jobs.Deps{Pool: appPool, Log: log, Tracer: tp, Meter: mp})
//	err = jobs.Register(rt, deliver, jobs.HandlerOptions{Queue: jobs.QueueDelivery})
//	err = rt.RegisterPeriodic(interval, sync.PartitionMaintain{})
//	err = rt.Start(ctx)        // roles worker and all work the queues
//	defer rt.Stop(ctx)         // graceful, bounded by jobs.shutdown_timeout
//
//	// in a use case, inside txn.UnitOfWork.Do:
//	err := inserter.InsertTx(ctx, WebhookDeliver{SubscriptionID: sub}, jobs.InsertOptions{ScheduledAt: at})
//
// A job exists exactly when the transaction that inserted it commits, and
// workers learn of it at commit through LISTEN/NOTIFY. Handlers return an
// error to have River retry with its backoff, Snooze to come back later, or
// Cancel to stop for good; the River types stay inside this package.
//
// Every run is measured (bothy.job.finished, bothy.job.duration), traced
// (job.work) and, when it fails, logged with bothy.job.kind and error.type
// only: an error's text may carry a URL or a body and stays in River's row.
package jobs
