package wire

import (
	"time"

	"bothy/server/internal/platform/config"
)

// syncConfigKeys are the keys of the event log and its worker consumers.
func syncConfigKeys() []config.Key {
	return []config.Key{
		{Name: "sync.event_retention", Kind: config.KindDuration, Default: "30d", Min: "1d", Max: "3650d", Chapter: chapter04,
			Doc: "How long events stay in the event log; a consumer or delivery that falls behind it finds a gap."},
		{Name: "sync.partition_interval", Kind: config.KindDuration, Default: "1d", Min: "1h", Max: "31d", Chapter: chapter03,
			Doc: "Time span of one partition of the event log; retention drops whole partitions. A consumer round of a worker that knows where it is reads only the partitions of the events stamped at most this long before the last one it handled (ADR 0105)."},
		{Name: "sync.partition_ahead", Kind: config.KindDuration, Default: "3d", Min: "1h", Max: "90d", Chapter: chapter03,
			Doc: "How far past now event log partitions must exist, so appends never meet a missing partition between two maintenance runs."},
		{Name: "sync.payload_text_max_bytes", Kind: config.KindInt, Default: "16384", Min: "64", Max: "1048576", Unit: "bytes", Chapter: chapter04,
			Doc: "Most bytes of one string in an event payload; longer text is cut and the event marked truncated."},
		{Name: "consumer.batch_size", Kind: config.KindInt, Default: "500", Min: "1", Max: "10000", Unit: "events", Chapter: chapter02,
			Doc: "Most events a worker consumer reads in one round, which is one transaction."},
		{Name: "consumer.poll_interval", Kind: config.KindDuration, Default: "500ms", Min: "10ms", Max: "1m", Chapter: chapter02,
			Doc: "Pause of a worker consumer that found no new event before it reads again; also the longest its rounds read the recent partitions of the event log alone before one reads every partition (ADR 0105)."},
		{Name: "consumer.gather_pause", Kind: config.KindDuration, Default: "10ms", Min: "0s", Max: "1s", Chapter: chapter02,
			Doc: "Pause of a worker consumer after a round that handled at least consumer.gather_min_events events and left none to read, before it reads again: the events appended meanwhile go into one round, whose statements and delivery runs cost about what one event's do, so a busy server delivers more with less CPU; 0 turns it off (ADR 0095)."},
		{Name: "consumer.gather_min_events", Kind: config.KindInt, Default: "4", Min: "1", Max: "10000", Unit: "events", Chapter: chapter02,
			Doc: "Events a consumer round must handle for consumer.gather_pause to follow it; a round of fewer (a quiet server's) is followed by no pause, so its next event goes on at once."},
	}
}

// SyncConfig holds the event log settings.
type SyncConfig struct {
	// EventRetention is sync.event_retention.
	EventRetention time.Duration `config:"sync.event_retention"`
	// PartitionInterval is sync.partition_interval.
	PartitionInterval time.Duration `config:"sync.partition_interval"`
	// PartitionAhead is sync.partition_ahead.
	PartitionAhead time.Duration `config:"sync.partition_ahead"`
	// PayloadTextMaxBytes is sync.payload_text_max_bytes.
	PayloadTextMaxBytes int `config:"sync.payload_text_max_bytes"`
}

// ConsumerConfig holds the settings of the worker consumers.
type ConsumerConfig struct {
	// BatchSize is consumer.batch_size.
	BatchSize int `config:"consumer.batch_size"`
	// PollInterval is consumer.poll_interval.
	PollInterval time.Duration `config:"consumer.poll_interval"`
	// GatherPause is consumer.gather_pause.
	GatherPause time.Duration `config:"consumer.gather_pause"`
	// GatherMinEvents is consumer.gather_min_events.
	GatherMinEvents int `config:"consumer.gather_min_events"`
}
