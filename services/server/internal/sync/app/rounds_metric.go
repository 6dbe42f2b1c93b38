package app

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"bothy/server/internal/platform/otel/attr"
)

// MetricRounds counts the rounds of each consumer by bothy.consumer and
// bothy.outcome (RoundCompleted, RoundFailed), also rounds without events,
// so a consumer that no process runs any more shows a rate of zero
// (docs/observability/signals.md 6.2, alert ConsumerStalled).
const MetricRounds = "bothy.consumer.rounds"

// The values of bothy.outcome on bothy.consumer.rounds.
const (
	// RoundCompleted: the round committed (with or without events).
	RoundCompleted = "completed"
	// RoundFailed: the round rolled back with an error.
	RoundFailed = "failed"
)

func newRoundCounter(mp metric.MeterProvider) (metric.Int64Counter, error) {
	c, err := mp.Meter("bothy/server/internal/sync").Int64Counter(MetricRounds,
		metric.WithUnit("{round}"),
		metric.WithDescription("Consumer rounds by consumer and outcome."))
	if err != nil {
		return nil, fmt.Errorf("sync: creating %s: %w", MetricRounds, err)
	}
	return c, nil
}

// countRound counts one round that ended with err.
func (r *Runner) countRound(ctx context.Context, err error) {
	outcome := RoundCompleted
	if err != nil {
		outcome = RoundFailed
	}
	r.rounds.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
		attr.Consumer.String(string(r.name)), attr.Outcome.String(outcome))))
}
