package wire

import (
	"time"

	"bothy/server/internal/platform/config"
	"bothy/server/internal/platform/jobs"
)

// jobsConfigKeys are the keys of the River job runtime of the worker role.
func jobsConfigKeys() []config.Key {
	return []config.Key{
		{Name: "jobs.queue.default.max_workers", Kind: config.KindInt, Default: "10", Min: "1", Max: "10000", Unit: "jobs", Chapter: chapter02,
			Doc: "Jobs of the queue default that one worker process runs at once."},
		{Name: "jobs.queue.delivery.max_workers", Kind: config.KindInt, Default: "200", Min: "1", Max: "10000", Unit: "jobs", Chapter: chapter02,
			Doc: "Jobs of the queue delivery (webhook deliveries) that one worker process runs at once, beside as many started in the process by its consumer rounds (ADR 0092). A job keeps its worker while its requests wait for the receivers' answers, and a subscription with more pending than one run sends (webhook.chain_max_deliveries) goes on in a job of its own: keep it at least the subscriptions that have deliveries pending at once, or their receivers get requests a few subscriptions at a time (D-RT-13)."},
		{Name: "jobs.queue.maintenance.max_workers", Kind: config.KindInt, Default: "2", Min: "1", Max: "10000", Unit: "jobs", Chapter: chapter02,
			Doc: "Jobs of the queue maintenance (retention, rotation) that one worker process runs at once."},
		{Name: "jobs.shutdown_timeout", Kind: config.KindDuration, Default: "30s", Min: "0s", MinExclusive: true, Max: "10m", Chapter: chapter02,
			Doc: "Graceful stop deadline: time in-flight jobs get to finish after SIGTERM before they are cancelled and retried later."},
		{Name: "jobs.in_process_start_fallback", Kind: config.KindDuration, Default: "30s", Min: "1s", Max: "10m", Chapter: chapter02,
			Doc: "How long after its insert a job started in the worker that inserted it (the delivery jobs of a consumer round, ADR 0092) is due for River anyway: the fallback when the worker stops or crashes before the start, or the start fails."},
		{Name: "jobs.job_timeout", Kind: config.KindDuration, Default: "5m", Min: "1s", Max: "24h", Chapter: chapter02,
			Doc: "Deadline of one job run unless its kind sets its own; a run past it is cancelled and retried."},
		{Name: "jobs.maintenance_interval", Kind: config.KindDuration, Default: "1h", Min: "1m", Max: "24h", Chapter: chapter02,
			Doc: "Period of the maintenance jobs: event log partitions, expired idempotency keys, signing key rotation."},
		{Name: "jobs.fetch_poll_interval", Kind: config.KindDuration, Default: "250ms", Min: "1ms", Max: "1m", Chapter: chapter02,
			Doc: "Interval of the periodic fetch of available jobs, the backstop when no insert notification arrives."},
		{Name: "jobs.fetch_cooldown", Kind: config.KindDuration, Default: "2ms", Min: "1ms", Max: "10s", Chapter: chapter02,
			Doc: "Shortest pause between two fetches of a queue, and between two insert notifications of it: it bounds the fetch load when many jobs are inserted at once and delays the start of a job by up to its length (D-RT-9)."},
	}
}

// JobsConfig holds the job runtime settings.
type JobsConfig struct {
	// Queues holds the worker counts per queue.
	Queues struct {
		// DefaultMaxWorkers is jobs.queue.default.max_workers.
		DefaultMaxWorkers int `config:"jobs.queue.default.max_workers"`
		// DeliveryMaxWorkers is jobs.queue.delivery.max_workers.
		DeliveryMaxWorkers int `config:"jobs.queue.delivery.max_workers"`
		// MaintenanceMaxWorkers is jobs.queue.maintenance.max_workers.
		MaintenanceMaxWorkers int `config:"jobs.queue.maintenance.max_workers"`
	}
	// ShutdownTimeout is jobs.shutdown_timeout.
	ShutdownTimeout time.Duration `config:"jobs.shutdown_timeout"`
	// InProcessStartFallback is jobs.in_process_start_fallback.
	InProcessStartFallback time.Duration `config:"jobs.in_process_start_fallback"`
	// JobTimeout is jobs.job_timeout.
	JobTimeout time.Duration `config:"jobs.job_timeout"`
	// MaintenanceInterval is jobs.maintenance_interval.
	MaintenanceInterval time.Duration `config:"jobs.maintenance_interval"`
	// FetchPollInterval is jobs.fetch_poll_interval.
	FetchPollInterval time.Duration `config:"jobs.fetch_poll_interval"`
	// FetchCooldown is jobs.fetch_cooldown.
	FetchCooldown time.Duration `config:"jobs.fetch_cooldown"`
}

// QueueOptions returns the workers of every queue of the job runtime as
// c names them (jobs.queue.<name>.max_workers): what buildJobs gives a
// process, and what a test gives a runtime that runs as one started with
// this configuration.
func (c JobsConfig) QueueOptions() map[string]jobs.QueueOptions {
	return map[string]jobs.QueueOptions{
		jobs.QueueDefault:     {MaxWorkers: c.Queues.DefaultMaxWorkers},
		jobs.QueueDelivery:    {MaxWorkers: c.Queues.DeliveryMaxWorkers},
		jobs.QueueMaintenance: {MaxWorkers: c.Queues.MaintenanceMaxWorkers},
	}
}
