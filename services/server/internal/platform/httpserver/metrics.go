package httpserver

import (
	"fmt"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"bothy/server/internal/platform/otel/attr"
)

// Names of the HTTP server metrics, after the OpenTelemetry semantic
// conventions for HTTP servers (docs/observability/signals.md 6.2). The
// request count is the count of the duration histogram.
const (
	// MetricRequestDuration is the time from the start of the chain to the
	// end of the handler in seconds, by http.request.method, http.route
	// (absent when no route matched) and http.response.status_code.
	MetricRequestDuration = "http.server.request.duration"
	// MetricActiveRequests is the number of requests in the chain now, by
	// http.request.method (the route is not known yet when one starts).
	MetricActiveRequests = "http.server.active_requests"
)

// requestBuckets are the boundaries of the request duration in seconds,
// those the semantic conventions recommend.
var requestBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// serverMetrics holds the instruments of the chain.
type serverMetrics struct {
	duration metric.Float64Histogram
	active   metric.Int64UpDownCounter
}

// newServerMetrics creates the instruments on mp; a nil mp records
// nothing.
func newServerMetrics(mp metric.MeterProvider) (serverMetrics, error) {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	m := mp.Meter("bothy/server/internal/platform/httpserver")
	duration, err := m.Float64Histogram(MetricRequestDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of HTTP server requests by method, route and status."),
		metric.WithExplicitBucketBoundaries(requestBuckets...))
	if err != nil {
		return serverMetrics{}, fmt.Errorf("httpserver: metric %s: %w", MetricRequestDuration, err)
	}
	active, err := m.Int64UpDownCounter(MetricActiveRequests, metric.WithUnit("{request}"),
		metric.WithDescription("HTTP server requests in flight by method."))
	if err != nil {
		return serverMetrics{}, fmt.Errorf("httpserver: metric %s: %w", MetricActiveRequests, err)
	}
	return serverMetrics{duration: duration, active: active}, nil
}

// served counts r as in flight and returns the function that ends it: it
// records the duration since start with the route and status the chain
// learned. The method is the telemetry method (methodOf), never raw input.
func (m serverMetrics) served(r *http.Request, w *statusWriter, st *reqState, start time.Time) func() {
	ctx := r.Context()
	method := attr.HTTPRequestMethod.String(methodOf(r))
	inFlight := metric.WithAttributeSet(attribute.NewSet(method))
	m.active.Add(ctx, 1, inFlight)
	return func() {
		m.active.Add(ctx, -1, inFlight)
		status := w.status
		if status == 0 {
			status = http.StatusOK
		}
		attrs := []attribute.KeyValue{method, attr.HTTPResponseStatusCode.Int(status)}
		if st.route != "" {
			attrs = append(attrs, attr.HTTPRoute.String(st.route))
		}
		m.duration.Record(ctx, time.Since(start).Seconds(), metric.WithAttributeSet(attribute.NewSet(attrs...)))
	}
}
