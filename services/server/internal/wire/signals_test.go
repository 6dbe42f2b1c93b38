package wire_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/otel/oteltest"
	"bothy/server/internal/wire"
)

// TestSignalsListEveryRegisteredMetric: the metric list of
// docs/observability/signals.md 6.2 names exactly the instruments a process
// of role all creates (the worker's gauges included), so a metric is never
// added without its row, and no row outlives its metric.
func TestSignalsListEveryRegisteredMetric(t *testing.T) {
	t.Parallel()
	p := newProcess(t, wire.RoleAll)
	var listed []string
	for _, m := range oteltest.ListedMetrics(t) {
		listed = append(listed, m.Name)
	}
	slices.Sort(listed)
	require.Equal(t, listed, p.MetricNames())
}
