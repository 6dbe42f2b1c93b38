// Package eventlog is the append port of the durable event log and the closed
// catalogue of durable event types. A use case appends its event in its own
// unit of work, never after commit, so an event exists exactly when the
// change it reports was committed (docs/spec/04-sync-protocol.md 9). The
// event log itself (table, partitions, reading, consumers) belongs to
// internal/sync, which implements Appender.
package eventlog

import (
	"time"

	"context"

	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
)

// Type is a durable event type such as "message.created".
type Type string

// The durable event types.
const (
	MessageCreated           Type = "message.created"
	MessageUpdated           Type = "message.updated"
	MessageDeleted           Type = "message.deleted"
	ThreadCreated            Type = "thread.created"
	ChannelCreated           Type = "channel.created"
	ChannelUpdated           Type = "channel.updated"
	InstanceUpdated          Type = "instance.updated"
	AppInstallationUpdated   Type = "app.installation.updated"
	AgentInvocationRequested Type = "agent.invocation.requested"
)

// Receiver is a kind of principal that may receive events of a type.
type Receiver string

// The receivers.
const (
	ReceiverPerson Receiver = "person"
	ReceiverApp    Receiver = "app"
	ReceiverAgent  Receiver = "agent"
)

// TypeInfo describes one durable event type.
type TypeInfo struct {
	// Type is the event type.
	Type Type
	// ResourceKind is the kind of resource the event is about.
	ResourceKind authorize.ResourceKind
	// ReceiveAction is what a receiver must be allowed to do on the resource
	// to receive the event; authorize.ReceiveSelf for personal events.
	ReceiveAction authorize.Action
	// Receivers lists the principal kinds that may receive it.
	Receivers []Receiver
	// Personal events have an audience principal and reach only it.
	Personal bool
}

var catalogue = []TypeInfo{
	{MessageCreated, authorize.KindMessage, authorize.MessageRead, []Receiver{ReceiverPerson, ReceiverApp}, false},
	{MessageUpdated, authorize.KindMessage, authorize.MessageRead, []Receiver{ReceiverPerson, ReceiverApp}, false},
	{MessageDeleted, authorize.KindMessage, authorize.MessageRead, []Receiver{ReceiverPerson, ReceiverApp}, false},
	{ThreadCreated, authorize.KindThread, authorize.MessageRead, []Receiver{ReceiverPerson, ReceiverApp}, false},
	{ChannelCreated, authorize.KindChannel, authorize.ChannelRead, []Receiver{ReceiverPerson, ReceiverApp}, false},
	{ChannelUpdated, authorize.KindChannel, authorize.ChannelRead, []Receiver{ReceiverPerson, ReceiverApp}, false},
	{InstanceUpdated, authorize.KindInstance, authorize.InstanceRead, []Receiver{ReceiverPerson, ReceiverApp}, false},
	{AppInstallationUpdated, authorize.KindAppInstallation, authorize.ReceiveSelf, []Receiver{ReceiverApp}, true},
	{AgentInvocationRequested, authorize.KindAgent, authorize.ReceiveSelf, []Receiver{ReceiverAgent}, true},
}

// Types returns the catalogue in a stable order. The slice is a copy.
func Types() []TypeInfo { return append([]TypeInfo(nil), catalogue...) }

// Lookup returns the entry of t.
func Lookup(t Type) (TypeInfo, bool) {
	for _, info := range catalogue {
		if info.Type == t {
			return info, true
		}
	}
	return TypeInfo{}, false
}

// Event is a durable event to append.
type Event struct {
	// Type must be in the catalogue; ResourceKind and ReceiveAction are
	// taken from its entry.
	Type Type
	// ResourceID names the resource; SpaceID, ChannelID and ThreadID place it.
	ResourceID, SpaceID, ChannelID, ThreadID ids.ID
	// AudiencePrincipalID is set exactly for personal events.
	AudiencePrincipalID ids.ID
	// ActorID is the principal whose action caused the event; Zero for the
	// system.
	ActorID ids.ID
	// Payload is marshalled to a JSON object. It must contain no JSON null
	// (ADR 0053): omit absent members instead.
	Payload any
}

// Appended tells where an event landed.
type Appended struct {
	// Seq is the event's position in the log.
	Seq int64
	// ID is the event ID (a UUIDv7), the webhook-id of every delivery of it.
	ID ids.ID
	// OccurredAt is the stored occurred_at (microseconds, UTC); with Seq it
	// is the event's key in the log.
	OccurredAt time.Time
}

// Appender appends durable events.
type Appender interface {
	// Append writes ev in the unit of work of ctx. It returns an error
	// outside a unit of work, for a type outside the catalogue, for a
	// personal type without audience (or a non-personal one with), and for a
	// payload that is not a JSON object or contains null.
	Append(ctx context.Context, ev Event) (Appended, error)
	// AppendAll writes evs in the unit of work of ctx, in their order
	// (ascending seqs), as one write whatever their number, and returns
	// where each landed, in the same order. Its errors are Append's, for
	// any of evs; on an error none of them is written.
	AppendAll(ctx context.Context, evs []Event) ([]Appended, error)
}
