package wire

import (
	"time"

	"bothy/server/internal/platform/config"
)

// platformConfigKeys are the keys of logging, tracing, metrics and the
// secret store.
func platformConfigKeys() []config.Key {
	return []config.Key{
		{Name: "log.level", Kind: config.KindString, Default: "info", Enum: []string{"debug", "info", "warn", "error"}, Chapter: chapter02,
			Doc: "Lowest severity of the JSON log lines the server writes to standard error."},
		{Name: "otel.traces_exporter", Kind: config.KindString, Default: "none", Enum: []string{"none", "stdout", "otlp"}, Chapter: chapter02,
			Doc: "Where spans go: nowhere, to standard output, or over OTLP/HTTP to otel.otlp_endpoint."},
		{Name: "otel.otlp_endpoint", Kind: config.KindURL, Default: "http://127.0.0.1:4318", Schemes: []string{"http", "https"}, Chapter: chapter02,
			Doc: "Base URL of the OTLP/HTTP collector that receives spans when otel.traces_exporter is otlp."},
		{Name: "metrics.gauge_interval", Kind: config.KindDuration, Default: "30s", Min: "1s", Max: "10m", Chapter: chapter02,
			Doc: "How often a worker reads the gauges that come from a query: the webhook backlog (pending deliveries, age of the oldest, subscriptions by state) and the River queue depth; one cheap statement each per read."},
		{Name: "metrics.delivery_lag_threshold", Kind: config.KindDuration, Default: "5m", Min: "1s", Max: "168h", Chapter: chapter02,
			Doc: "Delivery lag above which the example alert WebhookDeliveryLagHigh fires; exposed as the gauge bothy_webhook_delivery_lag_threshold_seconds so the rule follows this key."},
		{Name: "process.gc_percent", Kind: config.KindInt, Default: "400", Min: "25", Max: "10000", Unit: "percent", Chapter: chapter02,
			Doc: "How much the heap of a `bothy serve` process grows over what survived the last garbage collection before the next one starts (Go's GOGC). A higher value spends memory to save CPU: at 400 a process collects about a quarter as often as at Go's default of 100 (D-RT-10). The environment variable GOGC, when set, wins."},
		{Name: "process.memory_limit", Kind: config.KindByteSize, Default: "160MiB", Min: "0", Max: "1024GiB", Chapter: chapter02,
			Doc: "Soft limit of the memory of a `bothy serve` process's Go runtime (Go's GOMEMLIMIT): near it the process collects garbage more often than process.gc_percent says, but never more often than Go's default of 100 would: where what survived a collection needs more, the process grows past the limit instead of collecting without pause (D-RT-15). The process's resident memory is about 20 MiB above it (the program's code). 0 sets none. The environment variable GOMEMLIMIT, when set, wins, as Go's own limit, without that floor."},
		{Name: "process.max_procs", Kind: config.KindInt, Default: "0", Min: "0", Max: "1024", Unit: "processors", Chapter: chapter02,
			Doc: "Processors the Go runtime of a `bothy serve` process runs goroutines on at once (Go's GOMAXPROCS); 0 keeps Go's choice, the processors of the machine or its container. Where api, worker and PostgreSQL share a machine of two cores, 1 spares the CPU Go spends looking for work between round trips (D-RT-11). The environment variable GOMAXPROCS, when set, wins."},
		{Name: "secrets.dir", Kind: config.KindPath, Default: "/var/lib/bothy/secrets", Chapter: chapter19,
			Doc: "Directory of the generated secrets; `bothy secrets init` creates it (mode 0700) and the missing files (mode 0600)."},
		{Name: "secrets.cache_ttl", Kind: config.KindDuration, Default: "5m", Min: "0s", Max: "24h", Chapter: chapter19,
			Doc: "How long a resolved secret is served from memory before its file is read again; 0s reads the file on every use."},
	}
}

// LogConfig holds the log settings.
type LogConfig struct {
	// Level is log.level.
	Level string `config:"log.level"`
}

// OTelConfig holds the tracing settings.
type OTelConfig struct {
	// TracesExporter is otel.traces_exporter: none, stdout or otlp.
	TracesExporter string `config:"otel.traces_exporter"`
	// OTLPEndpoint is otel.otlp_endpoint.
	OTLPEndpoint string `config:"otel.otlp_endpoint"`
}

// MetricsConfig holds the metric settings.
type MetricsConfig struct {
	// GaugeInterval is metrics.gauge_interval.
	GaugeInterval time.Duration `config:"metrics.gauge_interval"`
	// DeliveryLagThreshold is metrics.delivery_lag_threshold.
	DeliveryLagThreshold time.Duration `config:"metrics.delivery_lag_threshold"`
}

// ProcessConfig holds the settings of the Go runtime of a serve process.
type ProcessConfig struct {
	// GCPercent is process.gc_percent.
	GCPercent int `config:"process.gc_percent"`
	// MemoryLimit is process.memory_limit; 0 sets none.
	MemoryLimit int64 `config:"process.memory_limit"`
	// MaxProcs is process.max_procs; 0 keeps Go's choice.
	MaxProcs int `config:"process.max_procs"`
}

// SecretsConfig holds the secret store settings.
type SecretsConfig struct {
	// Dir is secrets.dir.
	Dir string `config:"secrets.dir"`
	// CacheTTL is secrets.cache_ttl.
	CacheTTL time.Duration `config:"secrets.cache_ttl"`
}
