package wire

import (
	"time"

	"bothy/server/internal/platform/config"
)

// retentionConfigKeys are the retention periods of the transient rows
// (docs/spec/20-privacy.md section 2).
func retentionConfigKeys() []config.Key {
	return []config.Key{
		{Name: "retention.webhook_deliveries", Kind: config.KindDuration, Default: "30d", Min: "1d", Max: "3650d", Chapter: chapter20,
			Doc: "Age after which finished webhook deliveries (succeeded, failed, dead) are deleted; pending ones are never deleted."},
		{Name: "retention.purge_interval", Kind: config.KindDuration, Default: "1h", Min: "1m", Max: "7d", Chapter: chapter20,
			Doc: "Period of the retention jobs that delete finished webhook deliveries and expired sessions."},
		{Name: "retention.batch_size", Kind: config.KindInt, Default: "1000", Min: "1", Max: "100000", Unit: "rows", Chapter: chapter20,
			Doc: "Most rows one delete statement of a retention job removes; each batch is its own short statement, so row locks last one batch."},
	}
}

// RetentionConfig holds the retention periods.
type RetentionConfig struct {
	// WebhookDeliveries is retention.webhook_deliveries.
	WebhookDeliveries time.Duration `config:"retention.webhook_deliveries"`
	// PurgeInterval is retention.purge_interval.
	PurgeInterval time.Duration `config:"retention.purge_interval"`
	// BatchSize is retention.batch_size.
	BatchSize int `config:"retention.batch_size"`
}
