package sync

import (
	"bytes"
	"encoding/json"

	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
)

// OccurredAtLayout is the form of EventEnvelope.OccurredAt: RFC 3339 in UTC
// with exactly six fractional digits. The log stores microseconds
// (PostgreSQL timestamptz), so six digits lose nothing, and a fixed width
// makes the strings sort like the instants (ADR 0052).
const OccurredAtLayout = "2006-01-02T15:04:05.000000Z07:00"

// EventEnvelope is the public JSON form of a durable event
// (docs/spec/04-sync-protocol.md 2.2, ADR 0052): the body of a webhook
// delivery and the item of every REST list of events. json.Marshal renders
// it without any JSON null (ADR 0053): absent members are omitted.
type EventEnvelope struct {
	// ID is the event ID (UUIDv7); the webhook-id of its deliveries.
	ID ids.ID `json:"id"`
	// Seq is the event's position in the log.
	Seq int64 `json:"seq"`
	// Type is the durable event type.
	Type eventlog.Type `json:"type"`
	// OccurredAt is the event time in OccurredAtLayout.
	OccurredAt string `json:"occurred_at"`
	// Resource names the resource the event is about and places it.
	Resource EnvelopeResource `json:"resource"`
	// Actor is the principal that caused the event; absent for the system.
	Actor *EnvelopePrincipal `json:"actor,omitempty"`
	// Audience is the only receiver of a personal event; absent otherwise.
	Audience *EnvelopePrincipal `json:"audience,omitempty"`
	// Payload is the type-specific object (payload rules of 04 2.2).
	Payload json.RawMessage `json:"payload"`
	// Truncated is present, and true, only when text in the payload was cut
	// to sync.payload_text_max_bytes.
	Truncated bool `json:"truncated,omitempty"`
	// SyncEpoch is a delivery field: present only when the DeliveryFields
	// given to Envelope carry it (webhook deliveries). It is never stored
	// in the event log.
	SyncEpoch ids.ID `json:"sync_epoch,omitzero"`
}

// EnvelopeResource is the "resource" member of an envelope.
type EnvelopeResource struct {
	// Kind is the resource kind, for example "message".
	Kind authorize.ResourceKind `json:"kind"`
	// ID is the resource ID.
	ID ids.ID `json:"id"`
	// SpaceID, ChannelID and ThreadID place the resource in the chat tree;
	// each is absent when it does not apply.
	SpaceID   ids.ID `json:"space_id,omitzero"`
	ChannelID ids.ID `json:"channel_id,omitzero"`
	ThreadID  ids.ID `json:"thread_id,omitzero"`
}

// EnvelopePrincipal names a principal in an envelope ("actor", "audience").
type EnvelopePrincipal struct {
	// ID is the principal ID.
	ID ids.ID `json:"id"`
}

var emptyObject = json.RawMessage(`{}`)

// Envelope returns the public form of ev with the delivery fields df. Zero
// fields of df are omitted, so REST (which passes none) and webhooks (which
// pass the sync epoch) share one rendering. A missing or null payload
// renders as the empty object. The result marshals without error whenever
// ev.Payload is valid JSON, which the log guarantees.
func (ev Event) Envelope(df DeliveryFields) EventEnvelope {
	env := EventEnvelope{
		ID:         ev.ID,
		Seq:        ev.Seq,
		Type:       ev.Type,
		OccurredAt: ev.OccurredAt.UTC().Format(OccurredAtLayout),
		Resource: EnvelopeResource{
			Kind:      ev.ResourceKind,
			ID:        ev.ResourceID,
			SpaceID:   ev.SpaceID,
			ChannelID: ev.ChannelID,
			ThreadID:  ev.ThreadID,
		},
		Payload:   ev.Payload,
		Truncated: ev.Truncated,
		SyncEpoch: df.SyncEpoch,
	}
	if !ev.ActorID.IsZero() {
		env.Actor = &EnvelopePrincipal{ID: ev.ActorID}
	}
	if !ev.AudiencePrincipalID.IsZero() {
		env.Audience = &EnvelopePrincipal{ID: ev.AudiencePrincipalID}
	}
	if p := bytes.TrimSpace(ev.Payload); len(p) == 0 || bytes.Equal(p, []byte("null")) {
		env.Payload = emptyObject
	}
	return env
}
