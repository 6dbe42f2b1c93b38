package otel

import (
	"context"
	"log/slog"
	"time"
)

// Poll calls refresh at once and then every interval until ctx ends; it
// is how gauges read by a query (the webhook backlog, the River queue
// depth) stay current without a query per scrape or per event
// (metrics.gauge_interval). A failed refresh is logged at warn level as
// "gauge refresh failed" with its error class only and tried again at the
// next tick: telemetry never stops the process. interval must be positive.
func Poll(ctx context.Context, interval time.Duration, log *slog.Logger, refresh func(context.Context) error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := refresh(ctx); err != nil && ctx.Err() == nil {
			log.LogAttrs(ctx, slog.LevelWarn, "gauge refresh failed", ErrorAttr(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
