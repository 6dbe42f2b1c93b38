// Package oteltest lets tests assert spans, metrics and logs without a
// collector: an in-memory span recorder, a manual metric reader behind the
// same attribute rules as production, and a log buffer behind the production
// log handler.
//
//	spans := oteltest.NewSpans(t)
//	metrics := oteltest.NewMetrics(t)
//	logs := oteltest.NewLogs(t, slog.LevelInfo)
//	client := egress.New(egress.Options{...}, egress.Deps{
//		Tracer: spans.Provider, Meter: metrics.Provider, Log: logs.Logger(),
//	})
//	// ... exercise the client ...
//	require.Len(t, spans.Named("webhook.deliver"), 1)
//	require.EqualValues(t, 1, metrics.Sum(t, "bothy.egress.blocked", attr.Reason.String("address_blocked")))
package oteltest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"bothy/server/internal/platform/otel"
)

// Spans records every span of its Provider in memory.
type Spans struct {
	// Provider is the tracer provider to give to the code under test.
	Provider *sdktrace.TracerProvider
	rec      *tracetest.SpanRecorder
}

// NewSpans returns a recorder whose provider samples every span. The
// provider shuts down when the test ends.
func NewSpans(t testing.TB) *Spans {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return &Spans{Provider: tp, rec: rec}
}

// Ended returns the spans that have ended, in the order they ended.
func (s *Spans) Ended() []sdktrace.ReadOnlySpan { return s.rec.Ended() }

// Named returns the ended spans called name.
func (s *Spans) Named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, sp := range s.rec.Ended() {
		if sp.Name() == name {
			out = append(out, sp)
		}
	}
	return out
}

// Attrs returns the attributes of span as a map for easy assertions.
func Attrs(span sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	out := make(map[attribute.Key]attribute.Value, len(span.Attributes()))
	for _, kv := range span.Attributes() {
		out[kv.Key] = kv.Value
	}
	return out
}

// Metrics collects the metrics of its Provider on demand. The provider is
// built by otel.NewMeterProvider, so the same attributes are dropped as in
// production: a test sees exactly the labels /metrics would show.
type Metrics struct {
	// Provider is the meter provider to give to the code under test.
	Provider *sdkmetric.MeterProvider
	reader   *sdkmetric.ManualReader
}

// NewMetrics returns a collector with a manual reader. The provider shuts
// down when the test ends.
func NewMetrics(t testing.TB) *Metrics {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := otel.NewMeterProvider(resource.Empty(), reader)
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return &Metrics{Provider: mp, reader: reader}
}

// Collect returns everything recorded so far (cumulative).
func (m *Metrics) Collect(t testing.TB) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, m.reader.Collect(context.Background(), &rm))
	return rm
}

// Find returns the metric called name, if it was recorded.
func (m *Metrics) Find(t testing.TB, name string) (metricdata.Metrics, bool) {
	t.Helper()
	for _, sm := range m.Collect(t).ScopeMetrics {
		for _, mt := range sm.Metrics {
			if mt.Name == name {
				return mt, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

// point is one data point of any aggregation, reduced to what the helpers
// below read.
type point struct {
	attrs attribute.Set
	value float64 // value of a sum or gauge
	count uint64  // number of values of a histogram
}

// points flattens the data points of mt and names their aggregation: sum,
// gauge or histogram.
func points(mt metricdata.Metrics) ([]point, string) {
	switch data := mt.Data.(type) {
	case metricdata.Sum[int64]:
		return values(data.DataPoints), "sum"
	case metricdata.Sum[float64]:
		return values(data.DataPoints), "sum"
	case metricdata.Gauge[int64]:
		return values(data.DataPoints), "gauge"
	case metricdata.Gauge[float64]:
		return values(data.DataPoints), "gauge"
	case metricdata.Histogram[int64]:
		return counts(data.DataPoints), "histogram"
	case metricdata.Histogram[float64]:
		return counts(data.DataPoints), "histogram"
	}
	return nil, fmt.Sprintf("%T", mt.Data)
}

func values[N int64 | float64](dps []metricdata.DataPoint[N]) []point {
	out := make([]point, len(dps))
	for i, dp := range dps {
		out[i] = point{attrs: dp.Attributes, value: float64(dp.Value)}
	}
	return out
}

func counts[N int64 | float64](dps []metricdata.HistogramDataPoint[N]) []point {
	out := make([]point, len(dps))
	for i, dp := range dps {
		out[i] = point{attrs: dp.Attributes, count: dp.Count}
	}
	return out
}

// Sum returns the total of the counter or up-down counter name over the data
// points whose attributes include every one of attrs; 0 when nothing
// matches. Float sums are truncated.
func (m *Metrics) Sum(t testing.TB, name string, attrs ...attribute.KeyValue) int64 {
	t.Helper()
	mt, ok := m.Find(t, name)
	if !ok {
		return 0
	}
	pts, kind := points(mt)
	require.Equal(t, "sum", kind, "metric %s", name)
	var total float64
	for _, p := range pts {
		if includes(p.attrs, attrs) {
			total += p.value
		}
	}
	return int64(total)
}

// HistogramCount returns how many values the histogram name recorded over
// the data points whose attributes include every one of attrs.
func (m *Metrics) HistogramCount(t testing.TB, name string, attrs ...attribute.KeyValue) uint64 {
	t.Helper()
	mt, ok := m.Find(t, name)
	if !ok {
		return 0
	}
	pts, kind := points(mt)
	require.Equal(t, "histogram", kind, "metric %s", name)
	var total uint64
	for _, p := range pts {
		if includes(p.attrs, attrs) {
			total += p.count
		}
	}
	return total
}

// Gauge returns the value of the gauge name at the data point whose
// attributes include every one of attrs, and whether there is one; the
// test fails when several data points match.
func (m *Metrics) Gauge(t testing.TB, name string, attrs ...attribute.KeyValue) (float64, bool) {
	t.Helper()
	mt, ok := m.Find(t, name)
	if !ok {
		return 0, false
	}
	pts, kind := points(mt)
	require.Equal(t, "gauge", kind, "metric %s", name)
	var (
		value float64
		found int
	)
	for _, p := range pts {
		if includes(p.attrs, attrs) {
			value, found = p.value, found+1
		}
	}
	require.LessOrEqual(t, found, 1, "metric %s has one data point for %v", name, attrs)
	return value, found == 1
}

// AttributeKeys returns every attribute key seen on the data points of the
// metric name, so a test can prove that no unbounded key is among them.
func (m *Metrics) AttributeKeys(t testing.TB, name string) []attribute.Key {
	t.Helper()
	mt, ok := m.Find(t, name)
	if !ok {
		return nil
	}
	pts, _ := points(mt)
	seen := map[attribute.Key]bool{}
	var out []attribute.Key
	for _, p := range pts {
		for _, kv := range p.attrs.ToSlice() {
			if !seen[kv.Key] {
				seen[kv.Key] = true
				out = append(out, kv.Key)
			}
		}
	}
	return out
}

func includes(set attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		v, ok := set.Value(kv.Key)
		if !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// Logs captures the lines of a logger built by otel.NewLogger, so a test
// sees exactly what production would write.
type Logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
	log *slog.Logger
}

// NewLogs returns a capture at level.
func NewLogs(t testing.TB, level slog.Level) *Logs {
	t.Helper()
	l := &Logs{}
	l.log = otel.NewLogger(lockedWriter{l}, level)
	return l
}

type lockedWriter struct{ l *Logs }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	return w.l.buf.Write(p)
}

// Logger returns the logger to give to the code under test.
func (l *Logs) Logger() *slog.Logger { return l.log }

// Lines returns every line written so far, each parsed as a JSON object.
func (l *Logs) Lines(t testing.TB) []map[string]any {
	t.Helper()
	l.mu.Lock()
	text := l.buf.String()
	l.mu.Unlock()
	var out []map[string]any
	for line := range strings.SplitSeq(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "a log line is one JSON object")
		out = append(out, m)
	}
	return out
}

// WithMessage returns the lines whose msg is msg.
func (l *Logs) WithMessage(t testing.TB, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range l.Lines(t) {
		if m[slog.MessageKey] == msg {
			out = append(out, m)
		}
	}
	return out
}
