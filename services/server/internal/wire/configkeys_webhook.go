package wire

import (
	"time"

	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/platform/config"
)

// webhookConfigKeys are the keys of outgoing webhook delivery (D-M2-26-16).
// webhook.allowed_hosts is registered once, in appsConfigKeys;
// webhook.receiver_tolerance is a receiver value and has no
// server key.
func webhookConfigKeys() []config.Key {
	return []config.Key{
		{Name: "webhook.delivery_timeout", Kind: config.KindDuration, Default: "10s", Min: "0s", MinExclusive: true, Max: "5m", Chapter: chapter11,
			Doc: "Time limit of one delivery attempt; its lease lasts this plus webhook.lease_record_allowance, after which an unfinished attempt is sent again by a lease wake-up due no earlier than its end (ADR 0067, ADR 0087)."},
		{Name: "webhook.lease_record_allowance", Kind: config.KindDuration, Default: "2s", Min: "10ms", Max: "1m", Chapter: chapter11,
			Doc: "How much longer the lease of an attempt lasts than the attempt itself, so its answer is recorded before any other job may claim the head again."},
		{Name: "webhook.max_consecutive_failures", Kind: config.KindInt, Default: "50", Min: "1", Unit: "failures", Chapter: chapter03,
			Doc: "Failed attempts in a row after which a subscription is disabled; throttled attempts do not count."},
		{Name: "webhook.retry_backoff_base", Kind: config.KindDuration, Default: "5s", Min: "0s", MinExclusive: true, Chapter: chapter03,
			Doc: "First retry delay; every further failure doubles it, with full jitter, up to webhook.retry_backoff_cap."},
		{Name: "webhook.retry_backoff_cap", Kind: config.KindDuration, Default: "1h", Min: "0s", MinExclusive: true, Chapter: chapter03,
			Doc: "Largest retry delay of the exponential backoff."},
		{Name: "webhook.max_pending_per_subscription", Kind: config.KindInt, Default: "10000", Min: "1", Unit: "deliveries", Chapter: chapter11,
			Doc: "Delivery quota: a subscription whose open deliveries reach this number is paused."},
		{Name: "webhook.retry_max_age", Kind: config.KindDuration, Default: "3d", Min: "0s", MinExclusive: true, Chapter: chapter11,
			Doc: "Age of an undelivered delivery after which it is dead and its subscription disabled."},
		{Name: "webhook.secret_rotation_overlap", Kind: config.KindDuration, Default: "24h", Min: "0s", MinExclusive: true, Chapter: chapter11,
			Doc: "How long the server signs with the previous HMAC secret generation as well after rotate_hmac_secret."},
		{Name: "webhook.hmac_master_key_ref", Kind: config.KindSecretRef, Default: "file:<secrets.dir>/webhook_hmac_master_key", Chapter: chapter11,
			Doc: "Reference to the master key from which the HMAC secrets of the subscriptions are derived (docs/api/webhooks.md section 2.1)."},
		{Name: "webhook.page_size_default", Kind: config.KindInt, Default: "50", Min: "1", Max: "1000", Unit: "deliveries", Chapter: chapter06,
			Doc: "Deliveries on one page of listWebhookDeliveries when the request names no limit; at most webhook.page_size_max."},
		{Name: "webhook.page_size_max", Kind: config.KindInt, Default: "200", Min: "1", Max: "1000", Unit: "deliveries", Chapter: chapter06,
			Doc: "Most deliveries on one page of listWebhookDeliveries; a larger limit is lowered to it."},
		{Name: "webhook.rate_limit_max", Kind: config.KindInt, Default: "100", Min: "1", Max: "1000", Unit: "requests", Chapter: chapter11,
			Doc: "Highest max_per_second a subscription may have: the most requests a second its receiver may be limited to (ADR 0081); each claim and record of a limited subscription writes up to this many attempt ends."},
		{Name: "webhook.recover_max_deliveries", Kind: config.KindInt, Default: "1000", Min: "1", Max: "100000", Unit: "deliveries", Chapter: chapter06,
			Doc: "Most deliveries one recoverWebhookDeliveries request makes pending again, lowest event_seq first; the answer's has_more says that the same request recovers more (ADR 0079)."},
		{Name: "webhook.chain_max_deliveries", Kind: config.KindInt, Default: "1000", Min: "1", Max: "100000", Unit: "deliveries", Chapter: chapter02,
			Doc: "Budget of one run of the delivery job: most deliveries it sends before it leaves the next head to a new job. That job serves its subscription alone and waits in the queue behind the jobs inserted before it, so a larger budget spares a busy subscription's hand-offs and a smaller one lets other subscriptions' jobs start sooner where more subscriptions are busy than the queue has workers (D-M2-26-92)."},
		{Name: "webhook.job_max_attempts", Kind: config.KindInt, Default: "25", Min: "1", Max: "100", Unit: "runs", Chapter: chapter02,
			Doc: "Runs a failing delivery job gets (River's backoff between them); after the last, the head names last_error internal_error and gets a job webhook.retry_backoff_cap later."},
		{Name: "webhook.chain_max_duration", Kind: config.KindDuration, Default: "30s", Min: "0s", MinExclusive: true, Max: "10m", Chapter: chapter02,
			Doc: "Budget of one run of the delivery job: how long it goes on with the next head before it leaves it to a new job; the run's lease wake-up is due this long plus one lease (webhook.delivery_timeout, webhook.lease_record_allowance and, with batches, webhook.batch_max_duration) after its start (ADR 0067)."},
		{Name: "webhook.batch_max_deliveries", Kind: config.KindInt, Default: "64", Min: "1", Max: "1000", Unit: "deliveries", Chapter: chapter02,
			Doc: "Most due deliveries of one subscription a claim takes and sends one after the other under one lease, each after the one before it was accepted (ADR 0088); 1 claims one at a time. A subscription with max_per_second claims one at a time. A run whose batches show that webhook.batch_max_duration holds fewer sends at its receiver's pace claims that many (D-M2-26-88), and so does the next run of the subscription in the same worker within twice webhook.chain_max_duration (D-M2-26-89). After a crash during a batch, every delivery of it that was sent is sent again."},
		{Name: "webhook.batch_max_duration", Kind: config.KindDuration, Default: "1s", Min: "0s", MinExclusive: true, Max: "1m", Chapter: chapter02,
			Doc: "How long after its claim a batch starts a send after its first; every send gets the whole webhook.delivery_timeout, so with webhook.batch_max_deliveries above 1 a lease lasts this much longer (ADR 0088)."},
		{Name: "webhook.run_max_subscriptions", Kind: config.KindInt, Default: "32", Min: "1", Max: "1000", Unit: "subscriptions", Chapter: chapter02,
			Doc: "Most subscriptions served by one consumer round whose delivery runs start in one job: their locks and claims share one transaction and its round trips, then each run sends on its own, concurrently with the others, and the records whose answers arrive together share the next transaction (ADR 0089); 1 gives each subscription its own job."},
		{Name: "webhook.run_gather_pause", Kind: config.KindDuration, Default: "3ms", Min: "0s", Max: "1s", Chapter: chapter02,
			Doc: "How long a record of a job of several subscriptions (webhook.run_max_subscriptions) waits for the answers of the job's other runs that are still sending, so their records and next claims share its transaction (D-M2-26-90); the wait ends once every run of the job that has not ended is ready, so answers that arrive together wait for nothing. With receivers that take their time, each answer otherwise pays a transaction of its own. 0 waits for none."},
		{Name: "webhook.round_insert_max_deliveries", Kind: config.KindInt, Default: "5000", Min: "1", Max: "100000", Unit: "deliveries", Chapter: chapter02,
			Doc: "Most deliveries a consumer round routes and inserts at once: a round whose events call for more (consumer.batch_size events, each for every subscription that may see it) writes them with several inserts, so the worker's memory follows this number; the rows of one event always go together (D-M2-26-82)."},
	}
}

// WebhookConfig holds the outgoing webhook settings; the webhook egress
// client, the sender and the delivery job are built from it.
type WebhookConfig struct {
	// AllowedHosts is webhook.allowed_hosts (registered in appsConfigKeys).
	AllowedHosts hostlist.List `config:"webhook.allowed_hosts"`
	// DeliveryTimeout is webhook.delivery_timeout.
	DeliveryTimeout time.Duration `config:"webhook.delivery_timeout"`
	// LeaseRecordAllowance is webhook.lease_record_allowance.
	LeaseRecordAllowance time.Duration `config:"webhook.lease_record_allowance"`
	// MaxConsecutiveFailures is webhook.max_consecutive_failures.
	MaxConsecutiveFailures int `config:"webhook.max_consecutive_failures"`
	// RetryBackoffBase is webhook.retry_backoff_base.
	RetryBackoffBase time.Duration `config:"webhook.retry_backoff_base"`
	// RetryBackoffCap is webhook.retry_backoff_cap.
	RetryBackoffCap time.Duration `config:"webhook.retry_backoff_cap"`
	// MaxPendingPerSubscription is webhook.max_pending_per_subscription.
	MaxPendingPerSubscription int `config:"webhook.max_pending_per_subscription"`
	// RetryMaxAge is webhook.retry_max_age.
	RetryMaxAge time.Duration `config:"webhook.retry_max_age"`
	// SecretRotationOverlap is webhook.secret_rotation_overlap.
	SecretRotationOverlap time.Duration `config:"webhook.secret_rotation_overlap"`
	// HMACMasterKeyRef is webhook.hmac_master_key_ref, placeholders resolved.
	HMACMasterKeyRef string `config:"webhook.hmac_master_key_ref"`
	// PageSizeDefault is webhook.page_size_default.
	PageSizeDefault int `config:"webhook.page_size_default"`
	// PageSizeMax is webhook.page_size_max.
	PageSizeMax int `config:"webhook.page_size_max"`
	// RateLimitMax is webhook.rate_limit_max.
	RateLimitMax int `config:"webhook.rate_limit_max"`
	// RecoverMaxDeliveries is webhook.recover_max_deliveries.
	RecoverMaxDeliveries int `config:"webhook.recover_max_deliveries"`
	// ChainMaxDeliveries is webhook.chain_max_deliveries.
	ChainMaxDeliveries int `config:"webhook.chain_max_deliveries"`
	// JobMaxAttempts is webhook.job_max_attempts.
	JobMaxAttempts int `config:"webhook.job_max_attempts"`
	// ChainMaxDuration is webhook.chain_max_duration.
	ChainMaxDuration time.Duration `config:"webhook.chain_max_duration"`
	// BatchMaxDeliveries is webhook.batch_max_deliveries.
	BatchMaxDeliveries int `config:"webhook.batch_max_deliveries"`
	// BatchMaxDuration is webhook.batch_max_duration.
	BatchMaxDuration time.Duration `config:"webhook.batch_max_duration"`
	// RunMaxSubscriptions is webhook.run_max_subscriptions.
	RunMaxSubscriptions int `config:"webhook.run_max_subscriptions"`
	// RunGatherPause is webhook.run_gather_pause.
	RunGatherPause time.Duration `config:"webhook.run_gather_pause"`
	// RoundInsertMaxDeliveries is webhook.round_insert_max_deliveries.
	RoundInsertMaxDeliveries int `config:"webhook.round_insert_max_deliveries"`
}
