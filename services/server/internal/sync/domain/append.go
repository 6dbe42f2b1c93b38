package domain

import (
	"encoding/json"
	"errors"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/eventlog"
)

// The append errors besides the payload errors. Like those, they are
// internal: the event is built by a use case, so a violation is its bug.
var (
	// ErrUnknownType: the event type is not in the closed catalogue of
	// kernel/eventlog.
	ErrUnknownType = errs.New(errs.CodeInternal, "sync: event type is not in the catalogue")
	// ErrAudience: a personal type without AudiencePrincipalID, or a shared
	// type with one.
	ErrAudience = errs.New(errs.CodeInternal, "sync: event audience does not match its type")
	// ErrNoResource: the event names no resource.
	ErrNoResource = errs.New(errs.CodeInternal, "sync: event names no resource")
)

// Prepared is an event checked and ready to store.
type Prepared struct {
	// Info is the catalogue entry of the type: the stored resource_kind and
	// receive_action come from it, never from the caller.
	Info eventlog.TypeInfo
	// Payload is the normalized payload (NormalizePayload).
	Payload []byte
	// Truncated reports that text in the payload was cut.
	Truncated bool
}

// PrepareAppend checks ev against the append rules of
// kernel/eventlog.Appender and the payload rules, and returns what to store.
// A nil Payload is the empty object. textMaxBytes is
// sync.payload_text_max_bytes.
//
// Errors: ErrUnknownType, ErrAudience, ErrNoResource and the errors of
// NormalizePayload.
func PrepareAppend(ev eventlog.Event, textMaxBytes int) (Prepared, error) {
	info, ok := eventlog.Lookup(ev.Type)
	if !ok {
		return Prepared{}, ErrUnknownType
	}
	if info.Personal == ev.AudiencePrincipalID.IsZero() {
		return Prepared{}, ErrAudience
	}
	if ev.ResourceID.IsZero() {
		return Prepared{}, ErrNoResource
	}
	payload, truncated, err := preparePayload(ev.Payload, textMaxBytes)
	if err != nil {
		return Prepared{}, err
	}
	return Prepared{Info: info, Payload: payload, Truncated: truncated}, nil
}

// preparePayload normalizes an event's payload: a map as the use cases
// build it on its Go values (normalize, D-SY-24), any other value, or a map
// holding a kind normalize does not take, marshalled and normalized
// (NormalizePayload).
func preparePayload(payload any, textMaxBytes int) (out []byte, truncated bool, err error) {
	if obj, ok := payload.(map[string]any); ok {
		out, truncated, err = normalize(obj, textMaxBytes)
		if !errors.Is(err, errOtherKind) {
			return out, truncated, err
		}
	}
	raw := []byte(`{}`)
	if payload != nil {
		if raw, err = json.Marshal(payload); err != nil {
			return nil, false, ErrPayloadInvalid
		}
	}
	return NormalizePayload(raw, textMaxBytes)
}
