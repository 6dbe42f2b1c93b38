// Package otel sets up bothy's telemetry: the JSON log handler with its
// attribute allow list, the OpenTelemetry tracer provider (off, stdout or
// OTLP over HTTP), the meter provider with its Prometheus /metrics handler,
// and the rules that keep unbounded or unsafe attributes out of every signal
// (docs/observability/signals.md).
//
// Attribute keys come only from the subpackage attr. Tests of other packages
// assert spans, metrics and logs with the subpackage oteltest.
package otel
