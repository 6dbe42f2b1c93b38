package otel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"bothy/server/internal/platform/buildinfo"
	"bothy/server/internal/platform/otel/attr"
)

// ServiceName is the service.name of every signal bothy emits.
const ServiceName = "bothy"

// The values of otel.traces_exporter.
const (
	// ExporterNone turns tracing off (the default): spans cost nothing and
	// are never recorded.
	ExporterNone = "none"
	// ExporterStdout writes finished spans as JSON to Options.TraceWriter.
	ExporterStdout = "stdout"
	// ExporterOTLP sends spans over OTLP/HTTP (protobuf) to
	// otel.otlp_endpoint.
	ExporterOTLP = "otlp"
)

// Options configure Setup.
type Options struct {
	// Role is the process role of serve --role (api, worker or all); it is
	// the resource attribute bothy.role.
	Role string
	// TracesExporter is otel.traces_exporter: ExporterNone (also ""),
	// ExporterStdout or ExporterOTLP.
	TracesExporter string
	// OTLPEndpoint is otel.otlp_endpoint, the base URL of an OTLP/HTTP
	// receiver such as http://127.0.0.1:4318 (https for TLS); spans go to
	// its path /v1/traces. Only used with ExporterOTLP.
	OTLPEndpoint string
	// TraceWriter receives the spans of ExporterStdout; nil means os.Stdout.
	TraceWriter io.Writer
}

// Telemetry holds the providers that Setup built. Pass them to constructors;
// bothy never sets the OpenTelemetry globals.
type Telemetry struct {
	// TracerProvider makes tracers; with tracing off it is a no-op provider.
	TracerProvider trace.TracerProvider
	// MeterProvider makes meters whose metrics show on MetricsHandler. It
	// drops every attribute that attr.ForMetrics refuses.
	MeterProvider metric.MeterProvider
	// MetricsHandler serves the Prometheus text format for GET /metrics. The
	// caller mounts it on the operator listener
	// (http.operator_listen_address), never on the public one.
	MetricsHandler http.Handler

	names    *instrumentNames
	shutdown []func(context.Context) error
}

// MetricNames returns, sorted, the name of every instrument created through
// MeterProvider so far, also those without a data point yet. Tests compare
// it with docs/observability/signals.md 6.2.
func (t *Telemetry) MetricNames() []string { return t.names.sorted() }

// Shutdown flushes pending spans and stops the providers. It returns the
// joined errors of each step; ctx bounds the flush.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	var all []error
	for _, f := range t.shutdown {
		all = append(all, f(ctx))
	}
	return errors.Join(all...)
}

// Setup builds the tracer and meter providers of one process with the
// resource service.name=bothy, service.version=buildinfo.Version() and
// bothy.role. The error names the configuration key at fault, never its
// value.
func Setup(ctx context.Context, o Options) (*Telemetry, error) {
	switch o.Role {
	case "api", "worker", "all":
	default:
		return nil, errors.New("otel: role must be api, worker or all")
	}
	res, err := resource.New(ctx,
		resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithAttributes(
			semconv.ServiceName(ServiceName),
			semconv.ServiceVersion(buildinfo.Version()),
			attr.Role.String(o.Role),
		),
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		return nil, fmt.Errorf("otel: building the resource: %w", err)
	}

	tel := &Telemetry{}
	tp, err := tracerProvider(ctx, o, res)
	if err != nil {
		return nil, err
	}
	tel.TracerProvider = tp
	if sdk, ok := tp.(*sdktrace.TracerProvider); ok {
		tel.shutdown = append(tel.shutdown, sdk.Shutdown)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, fmt.Errorf("otel: prometheus exporter: %w", err)
	}
	mp := NewMeterProvider(res, exporter)
	named := newNamingProvider(mp)
	tel.MeterProvider, tel.names = named, named.names
	tel.shutdown = append(tel.shutdown, mp.Shutdown)
	tel.MetricsHandler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return tel, nil
}

func tracerProvider(ctx context.Context, o Options, res *resource.Resource) (trace.TracerProvider, error) {
	var exporter sdktrace.SpanExporter
	switch o.TracesExporter {
	case "", ExporterNone:
		return noop.NewTracerProvider(), nil
	case ExporterStdout:
		w := o.TraceWriter
		if w == nil {
			w = os.Stdout
		}
		e, err := stdouttrace.New(stdouttrace.WithWriter(w))
		if err != nil {
			return nil, fmt.Errorf("otel: stdout exporter: %w", err)
		}
		exporter = e
	case ExporterOTLP:
		endpoint, err := tracesURL(o.OTLPEndpoint)
		if err != nil {
			return nil, err
		}
		e, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
		if err != nil {
			return nil, fmt.Errorf("otel: otlp exporter for otel.otlp_endpoint: %w", err)
		}
		exporter = e
	default:
		return nil, errors.New("otel: otel.traces_exporter must be none, stdout or otlp")
	}
	return sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithBatcher(exporter),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())),
	), nil
}

// tracesURL checks otel.otlp_endpoint and returns the URL of its traces
// path. Credentials in the URL are refused: they would show wherever the
// configuration is printed.
func tracesURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("otel: otel.otlp_endpoint must be an http or https URL")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("otel: otel.otlp_endpoint must not carry credentials, a query or a fragment")
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	return u.String(), nil
}

// NewMeterProvider returns a meter provider over res and readers whose view
// keeps only the attributes that attr.ForMetrics allows: a key outside
// package attr, or an unbounded one such as bothy.webhook_subscription.id,
// never becomes a metric label whatever the caller passes. Setup uses it with
// the Prometheus exporter, oteltest with a manual reader.
func NewMeterProvider(res *resource.Resource, readers ...sdkmetric.Reader) *sdkmetric.MeterProvider {
	opts := []sdkmetric.Option{
		sdkmetric.WithResource(res),
		sdkmetric.WithView(sdkmetric.NewView(
			sdkmetric.Instrument{Name: "*"},
			sdkmetric.Stream{AttributeFilter: metricAttribute},
		)),
	}
	for _, r := range readers {
		opts = append(opts, sdkmetric.WithReader(r))
	}
	return sdkmetric.NewMeterProvider(opts...)
}

var metricKeys = func() map[attribute.Key]struct{} {
	m := map[attribute.Key]struct{}{}
	for _, k := range attr.All() {
		if attr.ForMetrics(k) {
			m[k] = struct{}{}
		}
	}
	return m
}()

func metricAttribute(kv attribute.KeyValue) bool {
	_, ok := metricKeys[kv.Key]
	return ok
}
