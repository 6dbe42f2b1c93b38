package wire

import (
	"context"

	"bothy/server/internal/platform/otel"
)

// startGauges starts, in the worker roles, the goroutines that refresh the
// gauges read by a query (the webhook backlog and the River queue depth)
// every metrics.gauge_interval until ctx ends (D-OB-2). The api role
// leaves the reads to the workers, so that a fleet does not multiply them
// by its api processes.
func (p *Process) startGauges(ctx context.Context) {
	if !p.role.works() {
		return
	}
	every := p.cfg.Metrics.GaugeInterval
	go otel.Poll(ctx, every, p.log, p.modules.Backlog.Refresh)
	go otel.Poll(ctx, every, p.log, p.jobs.QueueDepth().Refresh)
}
