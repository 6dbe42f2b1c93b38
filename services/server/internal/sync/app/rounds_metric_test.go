package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"bothy/server/internal/platform/otel/attr"
	"bothy/server/internal/sync/app"
)

// rounds returns bothy.consumer.rounds of the test consumer for outcome.
func rounds(t *testing.T, b *testBundle, outcome string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, b.metrics.Collect(context.Background(), &rm))
	want := attribute.NewSet(attr.Consumer.String(string(consumer)), attr.Outcome.String(outcome))
	var total int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != app.MetricRounds {
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			require.True(t, ok, "%s is an int64 counter", app.MetricRounds)
			for _, dp := range sum.DataPoints {
				if dp.Attributes.Equals(&want) {
					total += dp.Value
				}
			}
		}
	}
	return total
}

// TestConsumerRoundsAreCounted: every round counts once by outcome, also
// a round without events (a live consumer that has nothing to do), so a
// stalled consumer shows as a rate of zero (alert ConsumerStalled).
func TestConsumerRoundsAreCounted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := newRecorder(b.db)
	r := b.runner(t, h, app.Options{BatchSize: 2, PollInterval: time.Hour})
	_, err := r.RunRound(context.Background())
	require.NoError(t, err)
	b.appendMessages(t, 1)
	h.failAt = 1
	_, err = r.RunRound(context.Background())
	require.ErrorIs(t, err, errHandler)
	require.Equal(t, int64(1), rounds(t, b, app.RoundCompleted))
	require.Equal(t, int64(1), rounds(t, b, app.RoundFailed))
}
