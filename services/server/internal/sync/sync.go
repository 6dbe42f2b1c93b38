// Package sync is the port of the event-log module: the stored form of a
// durable event, its public envelope (ADR 0052), the worker consumers that
// read the log with a cursor (ADR 0051) and the read port other modules use.
// The package name follows the specification (sync.Event,
// sync.ConsumerWebhooks); files that also need the standard library's sync
// import this one as eventsync.
package sync

import (
	"context"
	"encoding/json"
	"time"

	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
)

// Event is a durable event as stored in event_log.
type Event struct {
	// Seq is the position in the log; consumers read in Seq order.
	Seq int64
	// ID is the event ID (UUIDv7); the webhook-id of its deliveries.
	ID ids.ID
	// Type is the durable event type.
	Type eventlog.Type
	// ResourceKind and ResourceID name the resource; SpaceID, ChannelID and
	// ThreadID place it in the chat tree (Zero when not applicable).
	ResourceKind                             authorize.ResourceKind
	ResourceID, SpaceID, ChannelID, ThreadID ids.ID
	// AudiencePrincipalID is set for personal events only.
	AudiencePrincipalID ids.ID
	// ReceiveAction is what a receiver must be allowed on the resource.
	ReceiveAction authorize.Action
	// ActorID is the principal that caused the event; Zero for the system.
	ActorID ids.ID
	// Payload is the type-specific JSON object, without null members.
	Payload json.RawMessage
	// Truncated is true when the payload was shortened to fit the limits of
	// the envelope (docs/spec/04-sync-protocol.md 2.2).
	Truncated bool
	// OccurredAt is the commit-time timestamp of the event, the partition
	// key of event_log.
	OccurredAt time.Time
}

// EventKey is the primary key of an event in event_log: its seq and its
// occurred_at. The log is partitioned by occurred_at, so a read by the key
// touches one partition, while a read by seq alone would probe the index
// of every partition (ADR 0068). A reader that will read an event again
// later (a delivery row) stores the whole key.
type EventKey struct {
	Seq        int64
	OccurredAt time.Time
}

// Key returns the key of e.
func (e Event) Key() EventKey { return EventKey{Seq: e.Seq, OccurredAt: e.OccurredAt} }

// DeliveryFields are members that exist per delivery, never in the event log
// (docs/spec/04-sync-protocol.md 2.2). Zero fields are omitted.
type DeliveryFields struct {
	// SyncEpoch is instance.sync_epoch at delivery time; only webhook
	// deliveries carry it.
	SyncEpoch ids.ID
}

// ConsumerName names a worker consumer of the event log.
type ConsumerName string

// ConsumerWebhooks is the consumer that turns events into webhook deliveries.
const ConsumerWebhooks ConsumerName = "webhooks"

// ConsumerHandler handles the events of one consumer. The frame calls
// HandleEvent once per event in Seq order inside the round's transaction
// (the ambient unit of work of ctx); an error rolls back the round, so
// neither the handler's writes nor the cursor move. A handler writes only its
// module's rows and jobs, calls nothing outside the process and appends no
// durable event. The round commits without waiting for its WAL flush
// (D-SY-25): a crash may lose a round that committed, which then runs
// again from the cursor, so whatever the handler's process starts after
// the commit must commit with a flush before anything leaves the database
// on the strength of the round's rows (a delivery's claim does; its flush
// takes the round's WAL with it).
type ConsumerHandler interface {
	HandleEvent(ctx context.Context, ev Event) error
}

// ConsumerLossHandler is implemented by handlers that must learn about events
// the consumer lost because its cursor fell behind sync.event_retention. The
// round calls HandleLost once, in its transaction, before the first
// HandleEvent, with the lost range [from, to]; an error rolls the round back.
type ConsumerLossHandler interface {
	HandleLost(ctx context.Context, from, to int64) error
}

// ConsumerRoundEnder is implemented by handlers that finish the work of a
// round once for all its events, for example one insert of every job the
// round's events call for instead of one per event. The round calls
// EndRound once, in its transaction, after its last HandleEvent and before
// the cursor moves; a round that handled no event does not call it. An
// error rolls the round back.
type ConsumerRoundEnder interface {
	EndRound(ctx context.Context) error
}

// Consumers registers consumer handlers before the worker's runner starts.
type Consumers interface {
	// Register binds h to name. It returns an error for a second handler
	// of the same name or after the runner started.
	Register(name ConsumerName, h ConsumerHandler) error
}

// LogReader reads single events, or the types of a few, from the log by
// their keys.
type LogReader interface {
	// EventByKey returns the event with key; false when it is not (or no
	// longer) in the log, or when key.OccurredAt is not the event's.
	EventByKey(ctx context.Context, key EventKey) (Event, bool, error)
	// EventsByKey returns, by seq, every event among keys that is in the
	// log, in one read: a batch of deliveries reads its events together
	// (ADR 0088). A key that is not (or no longer) in the log, or whose
	// OccurredAt is not its event's, has no entry; nil or empty keys read
	// nothing.
	EventsByKey(ctx context.Context, keys []EventKey) (map[int64]Event, error)
	// EventTypesByKey returns, by seq, the type of every event among keys
	// that is in the log, in one read: a page of deliveries names its
	// events' types without a read per item. A key that is not (or no
	// longer) in the log has no entry; nil or empty keys read nothing.
	EventTypesByKey(ctx context.Context, keys []EventKey) (map[int64]eventlog.Type, error)
	// MinRetainedSeq returns the lowest seq a reader can still find: every
	// committed event at or above it is in the log, every event below it
	// was dropped by retention (sync.event_retention). On an empty log it
	// is the lowest seq the next append may get. It is one above the
	// retention watermark, not min(seq): a seq burnt by a rolled-back
	// append never held an event and is not reported as lost.
	MinRetainedSeq(ctx context.Context) (int64, error)
}
