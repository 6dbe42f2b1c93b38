package wire

import (
	"context"
	"log/slog"

	appspg "bothy/server/internal/apps/adapters/postgres"
	appsapp "bothy/server/internal/apps/app"
	idpg "bothy/server/internal/identity/adapters/postgres"
	"bothy/server/internal/platform/jobs"
	"bothy/server/internal/platform/otel/attr"
)

// deliveriesPurge is the periodic job that deletes finished webhook
// deliveries older than retention.webhook_deliveries (issue 13 item 3).
type deliveriesPurge struct{}

// Kind implements jobs.Args.
func (deliveriesPurge) Kind() string { return "apps.webhook_deliveries_purge" }

// sessionsPurge is the periodic job that deletes expired sessions.
type sessionsPurge struct{}

// Kind implements jobs.Args.
func (sessionsPurge) Kind() string { return "identity.sessions_purge" }

// registerRetention registers the retention jobs of the modules, each
// deleting its own module's rows through its own adapter in batches of
// retention.batch_size, every retention.purge_interval in the maintenance
// queue (River runs a periodic job on the leader only, so one process
// purges at a time). The idempotency purge (kernel.idempotency_purge) is
// registered with the HTTP layer, which owns its store. Each run logs one
// line with the rows it deleted.
func (p *Process) registerRetention() error {
	r := p.cfg.Retention
	purger, err := appsapp.NewDeliveryPurger(appspg.NewDeliveryStore(p.pool), p.clock, appsapp.PurgeOptions{
		Retention: r.WebhookDeliveries, BatchSize: r.BatchSize,
	})
	if err != nil {
		return err
	}
	if err := jobs.Register(p.jobs, func(ctx context.Context, _ jobs.Job[deliveriesPurge]) error {
		n, err := purger.Purge(ctx)
		p.logPurge(ctx, deliveriesPurge{}.Kind(), n)
		return err
	}, jobs.HandlerOptions{Queue: jobs.QueueMaintenance}); err != nil {
		return err
	}
	sessions := idpg.New(p.pool)
	if err := jobs.Register(p.jobs, func(ctx context.Context, _ jobs.Job[sessionsPurge]) error {
		n, err := sessions.DeleteExpiredSessions(ctx, p.clock.Now(), r.BatchSize)
		p.logPurge(ctx, sessionsPurge{}.Kind(), n)
		return err
	}, jobs.HandlerOptions{Queue: jobs.QueueMaintenance}); err != nil {
		return err
	}
	for _, args := range []jobs.Args{deliveriesPurge{}, sessionsPurge{}} {
		if err := p.jobs.RegisterPeriodic(r.PurgeInterval, args); err != nil {
			return err
		}
	}
	return nil
}

// logPurge writes the one line of a retention run: the job kind and the
// rows deleted (also when the run failed part way).
func (p *Process) logPurge(ctx context.Context, kind string, deleted int64) {
	p.log.InfoContext(ctx, "retention purge", slog.String(string(attr.JobKind), kind), slog.Int64(string(attr.Count), deleted))
}
