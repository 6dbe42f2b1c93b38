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

// SecretsConfig holds the secret store settings.
type SecretsConfig struct {
	// Dir is secrets.dir.
	Dir string `config:"secrets.dir"`
	// CacheTTL is secrets.cache_ttl.
	CacheTTL time.Duration `config:"secrets.cache_ttl"`
}
