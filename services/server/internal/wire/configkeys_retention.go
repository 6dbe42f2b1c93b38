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
	}
}

// RetentionConfig holds the retention periods.
type RetentionConfig struct {
	// WebhookDeliveries is retention.webhook_deliveries.
	WebhookDeliveries time.Duration `config:"retention.webhook_deliveries"`
}
