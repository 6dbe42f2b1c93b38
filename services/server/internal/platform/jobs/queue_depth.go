package jobs

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"bothy/server/internal/platform/otel/attr"
)

// MetricQueueDepth is the number of jobs ready to run (River state
// available) per bothy.queue: work the workers have not picked up yet. A
// job scheduled for later, or waiting for its retry, is not counted
// (docs/observability/signals.md 6.2).
const MetricQueueDepth = "bothy.job.queue.depth"

// queueDepthSQL counts the available jobs per queue. River's fetch index
// (state, queue, priority, scheduled_at, id) answers it, so its cost grows
// with the jobs waiting, never with the finished ones River keeps.
const queueDepthSQL = `SELECT queue, count(*) FROM river_job WHERE state = 'available' GROUP BY queue`

// QueueDepth sets bothy.job.queue.depth with one statement per Refresh.
// Every Runtime has one (Runtime.QueueDepth); the worker roles refresh it
// once per metrics.gauge_interval (otel.Poll).
type QueueDepth struct {
	pool  *pgxpool.Pool
	depth metric.Int64Gauge
}

// newQueueDepth returns the gauge over pool (connected as bothy_app). It
// returns an error when pool or mp is nil or the gauge cannot be created
// (wiring bugs).
func newQueueDepth(pool *pgxpool.Pool, mp metric.MeterProvider) (*QueueDepth, error) {
	if pool == nil || mp == nil {
		return nil, errors.New("jobs: the queue depth needs a pool and a meter provider")
	}
	depth, err := mp.Meter("bothy/server/internal/platform/jobs").Int64Gauge(MetricQueueDepth,
		metric.WithUnit("{job}"),
		metric.WithDescription("Jobs ready to run that no worker has picked up yet, by queue."))
	if err != nil {
		return nil, fmt.Errorf("jobs: metric %s: %w", MetricQueueDepth, err)
	}
	return &QueueDepth{pool: pool, depth: depth}, nil
}

// Refresh counts the available jobs of every queue of Queues() (0 for a
// queue without any) and sets the gauge. A database error is returned and
// the gauge keeps its last values.
func (q *QueueDepth) Refresh(ctx context.Context) error {
	counts := map[string]int64{}
	for _, name := range Queues() {
		counts[name] = 0
	}
	rows, err := q.pool.Query(ctx, queueDepthSQL)
	if err != nil {
		return fmt.Errorf("jobs: reading the queue depth: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			name string
			n    int64
		)
		if err := rows.Scan(&name, &n); err != nil {
			return fmt.Errorf("jobs: reading the queue depth: %w", err)
		}
		// Only the queues bothy declares label the gauge: a row of another
		// queue (a bug) must not grow the label set.
		if _, ok := counts[name]; ok {
			counts[name] = n
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("jobs: reading the queue depth: %w", err)
	}
	for name, n := range counts {
		q.depth.Record(ctx, n, metric.WithAttributeSet(attribute.NewSet(attr.Queue.String(name))))
	}
	return nil
}

// QueueDepth returns the runtime's gauge bothy.job.queue.depth, created by
// New on Deps.Meter; nothing refreshes it until the caller does.
func (r *Runtime) QueueDepth() *QueueDepth { return r.depth }
