package otel

import (
	"slices"
	"sync"

	"go.opentelemetry.io/otel/metric"
)

// namingProvider is the meter provider of Telemetry: it passes every call
// to the SDK provider and remembers the name of every instrument created
// through it, so that a test can compare the metrics a process registers
// with the list in docs/observability/signals.md 6.2, including the ones
// that have no data point yet.
type namingProvider struct {
	metric.MeterProvider
	names *instrumentNames
}

type instrumentNames struct {
	mu    sync.Mutex
	names map[string]struct{}
}

func (n *instrumentNames) add(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.names[name] = struct{}{}
}

func (n *instrumentNames) sorted() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.names))
	for name := range n.names {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

func newNamingProvider(mp metric.MeterProvider) *namingProvider {
	return &namingProvider{MeterProvider: mp, names: &instrumentNames{names: map[string]struct{}{}}}
}

// Meter returns the SDK meter wrapped so that it records instrument names.
func (p *namingProvider) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	return namingMeter{Meter: p.MeterProvider.Meter(name, opts...), names: p.names}
}

// namingMeter records the name of every instrument it creates.
type namingMeter struct {
	metric.Meter
	names *instrumentNames
}

func (m namingMeter) Int64Counter(name string, o ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	m.names.add(name)
	return m.Meter.Int64Counter(name, o...)
}

func (m namingMeter) Int64UpDownCounter(name string, o ...metric.Int64UpDownCounterOption) (metric.Int64UpDownCounter, error) {
	m.names.add(name)
	return m.Meter.Int64UpDownCounter(name, o...)
}

func (m namingMeter) Int64Histogram(name string, o ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	m.names.add(name)
	return m.Meter.Int64Histogram(name, o...)
}

func (m namingMeter) Int64Gauge(name string, o ...metric.Int64GaugeOption) (metric.Int64Gauge, error) {
	m.names.add(name)
	return m.Meter.Int64Gauge(name, o...)
}

func (m namingMeter) Int64ObservableCounter(name string, o ...metric.Int64ObservableCounterOption) (metric.Int64ObservableCounter, error) {
	m.names.add(name)
	return m.Meter.Int64ObservableCounter(name, o...)
}

func (m namingMeter) Int64ObservableUpDownCounter(name string, o ...metric.Int64ObservableUpDownCounterOption) (metric.Int64ObservableUpDownCounter, error) {
	m.names.add(name)
	return m.Meter.Int64ObservableUpDownCounter(name, o...)
}

func (m namingMeter) Int64ObservableGauge(name string, o ...metric.Int64ObservableGaugeOption) (metric.Int64ObservableGauge, error) {
	m.names.add(name)
	return m.Meter.Int64ObservableGauge(name, o...)
}

func (m namingMeter) Float64Counter(name string, o ...metric.Float64CounterOption) (metric.Float64Counter, error) {
	m.names.add(name)
	return m.Meter.Float64Counter(name, o...)
}

func (m namingMeter) Float64UpDownCounter(name string, o ...metric.Float64UpDownCounterOption) (metric.Float64UpDownCounter, error) {
	m.names.add(name)
	return m.Meter.Float64UpDownCounter(name, o...)
}

func (m namingMeter) Float64Histogram(name string, o ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	m.names.add(name)
	return m.Meter.Float64Histogram(name, o...)
}

func (m namingMeter) Float64Gauge(name string, o ...metric.Float64GaugeOption) (metric.Float64Gauge, error) {
	m.names.add(name)
	return m.Meter.Float64Gauge(name, o...)
}

func (m namingMeter) Float64ObservableCounter(name string, o ...metric.Float64ObservableCounterOption) (metric.Float64ObservableCounter, error) {
	m.names.add(name)
	return m.Meter.Float64ObservableCounter(name, o...)
}

func (m namingMeter) Float64ObservableUpDownCounter(name string, o ...metric.Float64ObservableUpDownCounterOption) (metric.Float64ObservableUpDownCounter, error) {
	m.names.add(name)
	return m.Meter.Float64ObservableUpDownCounter(name, o...)
}

func (m namingMeter) Float64ObservableGauge(name string, o ...metric.Float64ObservableGaugeOption) (metric.Float64ObservableGauge, error) {
	m.names.add(name)
	return m.Meter.Float64ObservableGauge(name, o...)
}
