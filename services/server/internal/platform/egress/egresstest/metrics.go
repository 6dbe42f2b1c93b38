package egresstest

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"bothy/server/internal/platform/otel/attr"
)

// BlockedMetric is the name of the counter of refused egress requests.
const BlockedMetric = "bothy.egress.blocked"

// Metrics is an OpenTelemetry SDK meter provider with a manual reader, so a
// test reads exactly what the code under test recorded. Give each test its
// own.
type Metrics struct {
	reader   *sdkmetric.ManualReader
	provider *sdkmetric.MeterProvider
}

// NewMetrics returns a fresh provider that is shut down when the test ends.
func NewMetrics(t testing.TB) *Metrics {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	return &Metrics{reader: reader, provider: provider}
}

// Provider returns the meter provider to pass as egress.Deps.Meter.
func (m *Metrics) Provider() metric.MeterProvider { return m.provider }

// Blocked returns the value of bothy.egress.blocked for purpose and reason.
// It counts only data points whose attributes are exactly
// bothy.egress.purpose and bothy.reason, so a recording with any further
// attribute shows up as a missing count.
func (m *Metrics) Blocked(t testing.TB, purpose, reason string) int64 {
	t.Helper()
	want := attribute.NewSet(attr.EgressPurpose.String(purpose), attr.Reason.String(reason))
	return m.Int64Sum(t, BlockedMetric, want)
}

// Int64Sum returns the value of the int64 counter name for the data point
// whose attribute set equals attrs, or 0 when there is none.
func (m *Metrics) Int64Sum(t testing.TB, name string, attrs attribute.Set) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := m.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("egresstest: collect metrics: %v", err)
	}
	var total int64
	for _, sm := range rm.ScopeMetrics {
		for _, md := range sm.Metrics {
			if md.Name != name {
				continue
			}
			sum, ok := md.Data.(metricdata.Sum[int64])
			if !ok {
				t.Fatalf("egresstest: metric %s is %T, not an int64 sum", name, md.Data)
			}
			for _, dp := range sum.DataPoints {
				if dp.Attributes.Equals(&attrs) {
					total += dp.Value
				}
			}
		}
	}
	return total
}
