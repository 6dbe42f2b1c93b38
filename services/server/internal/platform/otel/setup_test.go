package otel_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"bothy/server/internal/platform/buildinfo"
	"bothy/server/internal/platform/otel"
	"bothy/server/internal/platform/otel/attr"
)

func setup(t *testing.T, o otel.Options) *otel.Telemetry {
	t.Helper()
	tel, err := otel.Setup(context.Background(), o)
	require.NoError(t, err)
	return tel
}

func TestSetupTracingIsOffByDefault(t *testing.T) {
	t.Parallel()
	for _, exporter := range []string{"", "none"} {
		tel := setup(t, otel.Options{Role: "api", TracesExporter: exporter})
		_, span := tel.TracerProvider.Tracer("test").Start(context.Background(), "webhook.deliver")
		require.False(t, span.IsRecording(), "exporter %q records nothing", exporter)
		require.False(t, span.SpanContext().IsValid())
		span.End()
		require.NoError(t, tel.Shutdown(context.Background()))
	}
}

func TestSetupStdoutExporterWritesSpansWithResource(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	tel := setup(t, otel.Options{Role: "worker", TracesExporter: "stdout", TraceWriter: &buf})
	_, span := tel.TracerProvider.Tracer("test").Start(context.Background(), "webhook.deliver")
	span.SetAttributes(attr.ServerAddress.String("hooks.example.com"))
	span.End()
	require.NoError(t, tel.Shutdown(context.Background()))

	out := buf.String()
	require.Contains(t, out, `"Name":"webhook.deliver"`)
	require.Contains(t, out, `"Key":"service.name","Value":{"Type":"STRING","Value":"bothy"}`)
	require.Contains(t, out, `"Key":"service.version","Value":{"Type":"STRING","Value":"`+buildinfo.Version()+`"}`)
	require.Contains(t, out, `"Key":"bothy.role","Value":{"Type":"STRING","Value":"worker"}`)
}

// TestSetupOTLPExporterSendsToEndpoint runs a real OTLP/HTTP receiver on
// 127.0.0.1 and decodes what the exporter sent.
func TestSetupOTLPExporterSendsToEndpoint(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []*collectortrace.ExportTraceServiceRequest
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, &req)
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)

	tel := setup(t, otel.Options{Role: "all", TracesExporter: "otlp", OTLPEndpoint: srv.URL})
	_, span := tel.TracerProvider.Tracer("test").Start(context.Background(), "webhook.deliver")
	span.End()
	require.NoError(t, tel.Shutdown(context.Background()))

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, got)
	require.Equal(t, "/v1/traces", paths[0])
	rs := got[0].GetResourceSpans()[0]
	res := map[string]string{}
	for _, kv := range rs.GetResource().GetAttributes() {
		res[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	require.Equal(t, "bothy", res["service.name"])
	require.Equal(t, buildinfo.Version(), res["service.version"])
	require.Equal(t, "all", res["bothy.role"])
	require.Equal(t, "webhook.deliver", rs.GetScopeSpans()[0].GetSpans()[0].GetName())
}

func TestSetupRejectsBadOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    otel.Options
		key  string
	}{
		{"an unknown exporter", otel.Options{Role: "api", TracesExporter: "jaeger"}, "otel.traces_exporter"},
		{"otlp without an endpoint", otel.Options{Role: "api", TracesExporter: "otlp"}, "otel.otlp_endpoint"},
		{"otlp with a relative endpoint", otel.Options{Role: "api", TracesExporter: "otlp", OTLPEndpoint: "collector.example.com:4318"}, "otel.otlp_endpoint"},
		{"otlp with credentials in the endpoint", otel.Options{Role: "api", TracesExporter: "otlp", OTLPEndpoint: "https://alex:secret@collector.example.com"}, "otel.otlp_endpoint"},
		{"an unknown role", otel.Options{Role: "scheduler"}, "role"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := otel.Setup(context.Background(), tc.o)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.key)
			require.NotContains(t, err.Error(), "secret")
		})
	}
}

func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}

// TestMetricsHandlerNeverExposesUnboundedAttributes records a counter with a
// webhook subscription ID and proves that /metrics keeps the bounded labels
// and drops the ID (and any key outside package attr).
func TestMetricsHandlerNeverExposesUnboundedAttributes(t *testing.T) {
	t.Parallel()
	tel := setup(t, otel.Options{Role: "worker"})
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	c, err := tel.MeterProvider.Meter("test").Int64Counter("bothy.test.sent", metric.WithUnit("{request}"))
	require.NoError(t, err)
	c.Add(context.Background(), 2, metric.WithAttributes(
		attr.Outcome.String("succeeded"),
		attr.WebhookSubscriptionID.String("0190b6a2-7c4e-7b1a-9c3e-6f1d2a3b4c5d"),
		attr.RequestID.String("req-1"),
		attribute.String("url.full", "https://hooks.example.com/x"),
	))

	body := scrape(t, tel.MetricsHandler)
	var line string
	for l := range strings.SplitSeq(body, "\n") {
		if strings.HasPrefix(l, "bothy_test_sent_total{") {
			line = l
		}
	}
	require.NotEmpty(t, line, body)
	require.Contains(t, line, `bothy_outcome="succeeded"`)
	require.True(t, strings.HasSuffix(line, " 2"), line)
	require.NotContains(t, body, "0190b6a2")
	require.NotContains(t, body, "req-1")
	require.NotContains(t, body, "hooks.example.com")
	require.Contains(t, body, "go_goroutines", "the Go runtime collector is registered")
}

// syncBuffer is a bytes.Buffer safe for the exporter's goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestMetricNamesListsInstrumentsWithoutData: MetricNames knows every
// instrument created through the meter provider, also one that recorded
// nothing yet (so signals.md can be compared with what a process
// registers, not only with what it happened to record).
func TestMetricNamesListsInstrumentsWithoutData(t *testing.T) {
	t.Parallel()
	tel := setup(t, otel.Options{Role: "worker"})
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	m := tel.MeterProvider.Meter("test")
	_, err := m.Int64Counter("bothy.test.sent")
	require.NoError(t, err)
	_, err = m.Float64Histogram("bothy.test.duration")
	require.NoError(t, err)
	_, err = tel.MeterProvider.Meter("other").Int64Gauge("bothy.test.depth")
	require.NoError(t, err)
	require.Equal(t, []string{"bothy.test.depth", "bothy.test.duration", "bothy.test.sent"}, tel.MetricNames())
}
