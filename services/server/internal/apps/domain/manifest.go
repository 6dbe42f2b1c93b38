package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/kernel/ids"
)

// The app scopes (docs/spec/05-actions.md 2.6): what an installed app may do
// at most, whatever its grants. The list is closed.
const (
	// ScopeEventsSubscribe lets an app receive durable events by webhook;
	// each event also needs the scope of its receive action.
	ScopeEventsSubscribe = "events:subscribe"
	// ScopeMessagesRead lets an app read messages (message.read).
	ScopeMessagesRead = "messages:read"
	// ScopeMessagesWrite lets an app post, edit and delete messages.
	ScopeMessagesWrite = "messages:write"
	// ScopeChannelsRead lets an app read channels (channel.read).
	ScopeChannelsRead = "channels:read"
)

// appScopes is the closed scope list in catalogue order, the order granted
// scopes are stored in.
var appScopes = []string{ScopeEventsSubscribe, ScopeMessagesRead, ScopeMessagesWrite, ScopeChannelsRead}

// receiveScopes maps a receive action to the app scope it needs. Receive
// actions that are absent and scope-free (instance.read, the metadata
// action, and self, the receiver's own resource) need only
// events:subscribe; any other receive action is not receivable at all, so
// a new action fails closed until it gets a row here.
var receiveScopes = map[authorize.Action]string{
	authorize.MessageRead: ScopeMessagesRead,
	authorize.ChannelRead: ScopeChannelsRead,
}

var scopeFree = []authorize.Action{authorize.InstanceRead, authorize.ReceiveSelf}

// ValidScope reports whether s is a grantable app scope.
func ValidScope(s string) bool { return slices.Contains(appScopes, s) }

// EventScopes returns the scopes an app needs among its granted scopes to
// receive eventType by webhook: events:subscribe and, unless the event's
// receive action is scope-free, the scope of that action (for example
// messages:read for message.created, whose receive action is
// message.read). It returns false for a type that is not AppSubscribable.
func EventScopes(eventType string) ([]string, bool) {
	if !AppSubscribable(eventType) {
		return nil, false
	}
	info, ok := eventlog.Lookup(eventlog.Type(eventType))
	if !ok {
		return nil, false
	}
	if slices.Contains(scopeFree, info.ReceiveAction) {
		return []string{ScopeEventsSubscribe}, true
	}
	scope, ok := receiveScopes[info.ReceiveAction]
	if !ok {
		return nil, false
	}
	return []string{ScopeEventsSubscribe, scope}, true
}

// EventAllowed reports whether scopes allow receiving eventType
// (EventScopes are all among scopes).
func EventAllowed(eventType string, scopes []string) bool {
	need, ok := EventScopes(eventType)
	if !ok {
		return false
	}
	for _, s := range need {
		if !slices.Contains(scopes, s) {
			return false
		}
	}
	return true
}

// AllowedEvents returns the events that scopes allow, in the order of
// events, as a fresh non-nil slice.
func AllowedEvents(events, scopes []string) []string {
	out := []string{}
	for _, e := range events {
		if EventAllowed(e, scopes) {
			out = append(out, e)
		}
	}
	return out
}

// DeliveryMode says how an app receives its events (docs/spec/11-extensions.md
// 3.1).
type DeliveryMode string

// The delivery modes.
const (
	// DeliveryNone: the manifest asks for no webhook subscription at
	// install; an owner may still create subscriptions for the app.
	DeliveryNone DeliveryMode = "none"
	// DeliveryWebhook: installing the app creates its webhook subscription
	// to EventsURL.
	DeliveryWebhook DeliveryMode = "webhook"
)

// Delivery is the delivery member of a manifest.
type Delivery struct {
	// Mode is none or webhook.
	Mode DeliveryMode `json:"mode"`
	// EventsURL is the https address of the subscription created at
	// install; required for webhook, not allowed for none.
	EventsURL string `json:"events_url,omitempty"`
	// InteractionsURL is the https address the app receives interactions
	// at; optional in both modes.
	InteractionsURL string `json:"interactions_url,omitempty"`
}

// Manifest is what an app declares about itself (docs/spec/11-extensions.md
// 3.1). Its JSON form is the stored form (apps.manifest) and has no JSON
// null (ADR 0053).
type Manifest struct {
	// Name is the app's name and the display name of its principal.
	Name string `json:"name"`
	// Description is optional free text for owners.
	Description string `json:"description,omitempty"`
	// Scopes are the app scopes the app requests; an install grants these
	// or a subset.
	Scopes []string `json:"scopes"`
	// Events are the event types the app wants to receive; an install
	// allows these or a subset as its event subscriptions.
	Events []string `json:"events"`
	// Delivery says how events reach the app.
	Delivery Delivery `json:"delivery"`
}

// MaxAppNameLength is the most characters of a manifest name: the name
// becomes the display name of the app's principal, and the data model
// limits principals.display_name to this length (migration 00010). It is a
// property of the stored format, not a tunable limit.
const MaxAppNameLength = 200

// Item codes and pointers of the manifest and installation rules.
const (
	itemMaxLength    = "max_length"
	itemInvalidChars = "invalid_characters"
	itemUnknownScope = "unknown_scope"
	itemScopeMissing = "scope_missing"
	itemEnum         = "enum"
	itemNotAllowed   = "not_allowed"
	itemNotInManif   = "not_in_manifest"
	pointerManifest  = "/manifest"
)

// ValidateManifest checks m (docs/spec/11-extensions.md 3.2) with the
// parsed webhook.allowed_hosts and returns nil or a *errs.Error listing
// every defect in document order, with pointers into the createApp body
// (/manifest/...):
//
//   - /manifest/name: required (empty or blank), invalid_characters (a
//     control character or invalid UTF-8), max_length (more than
//     MaxAppNameLength characters without surrounding space); the rules
//     of a principal's display name, which the name becomes;
//   - /manifest/scopes/<i>: unknown_scope (not a grantable scope),
//     duplicate;
//   - /manifest/events/<i>: duplicate, not_subscribable (not
//     AppSubscribable), scope_missing (events:subscribe or the scope of
//     the event's receive action is not among the requested scopes);
//   - /manifest/delivery/mode: enum (neither none nor webhook);
//   - /manifest/delivery/events_url: required (mode webhook without it),
//     not_allowed (given with mode none), and the item codes of
//     ValidateTarget (https_required, userinfo_not_allowed,
//     fragment_not_allowed, invalid_url, webhook_host_not_allowed);
//   - /manifest/delivery/interactions_url: the item codes of
//     ValidateTarget.
//
// The addresses follow the one host[:port] rule of D-M2-26-8: a host or port
// not in allowed gives the item code webhook_host_not_allowed. The error's
// code is webhook_host_not_allowed when every defect is such a host defect (as
// for subscription URLs, R-DM-17), and validation_failed otherwise. Messages
// and details never contain input.
func ValidateManifest(m Manifest, allowed hostlist.List) error {
	var fields []errs.FieldError
	add := func(pointer, code string) { fields = append(fields, errs.Field(pointer, code)) }

	switch name := strings.TrimSpace(m.Name); {
	case name == "":
		add(pointerManifest+"/name", itemRequired)
	case !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl):
		add(pointerManifest+"/name", itemInvalidChars)
	case utf8.RuneCountInString(name) > MaxAppNameLength:
		add(pointerManifest+"/name", itemMaxLength)
	}
	fields = append(fields, scopeDefects(pointerManifest+"/scopes", m.Scopes, appScopes)...)

	requested := validDistinct(m.Scopes)
	seen := map[string]bool{}
	for i, ev := range m.Events {
		p := pointerManifest + "/events/" + strconv.Itoa(i)
		switch {
		case seen[ev]:
			add(p, itemDuplicate)
		case !AppSubscribable(ev):
			add(p, itemNotSubscribable)
		case !EventAllowed(ev, requested):
			add(p, itemScopeMissing)
		}
		seen[ev] = true
	}

	const pd = pointerManifest + "/delivery"
	switch m.Delivery.Mode {
	case DeliveryWebhook:
		if m.Delivery.EventsURL == "" {
			add(pd+"/events_url", itemRequired)
		} else {
			fields = append(fields, targetDefects(pd+"/events_url", m.Delivery.EventsURL, allowed)...)
		}
	case DeliveryNone:
		if m.Delivery.EventsURL != "" {
			add(pd+"/events_url", itemNotAllowed)
		}
	default:
		add(pd+"/mode", itemEnum)
	}
	if m.Delivery.InteractionsURL != "" {
		fields = append(fields, targetDefects(pd+"/interactions_url", m.Delivery.InteractionsURL, allowed)...)
	}

	if len(fields) == 0 {
		return nil
	}
	e := errs.Validation(fields...)
	if !slices.ContainsFunc(fields, func(f errs.FieldError) bool { return f.Code != itemHostNotAllowed }) {
		e = errs.New(errs.CodeWebhookHostNotAllowed, "webhook host not allowed")
		e.Fields = fields
	}
	return e
}

// targetDefects runs ValidateTarget on raw and returns its field errors at
// pointer.
func targetDefects(pointer, raw string, allowed hostlist.List) []errs.FieldError {
	_, err := ValidateTarget(raw, allowed)
	if err == nil {
		return nil
	}
	e, ok := errs.As(err)
	if !ok {
		return []errs.FieldError{errs.Field(pointer, itemInvalidURL)}
	}
	out := make([]errs.FieldError, 0, len(e.Fields))
	for _, f := range e.Fields {
		f.Pointer = pointer
		out = append(out, f)
	}
	return out
}

// scopeDefects lists the defects of a scope list at base/<i>: duplicate,
// unknown_scope (not grantable) and not_in_manifest (grantable but not in
// within). Pass appScopes as within when any grantable scope is fine.
func scopeDefects(base string, scopes, within []string) []errs.FieldError {
	var fields []errs.FieldError
	seen := map[string]bool{}
	for i, s := range scopes {
		p := base + "/" + strconv.Itoa(i)
		switch {
		case seen[s]:
			fields = append(fields, errs.Field(p, itemDuplicate))
		case !ValidScope(s):
			fields = append(fields, errs.Field(p, itemUnknownScope))
		case !slices.Contains(within, s):
			fields = append(fields, errs.Field(p, itemNotInManif))
		}
		seen[s] = true
	}
	return fields
}

// validDistinct returns the grantable scopes of scopes in catalogue order,
// each once, as a fresh non-nil slice.
func validDistinct(scopes []string) []string {
	out := []string{}
	for _, s := range appScopes {
		if slices.Contains(scopes, s) {
			out = append(out, s)
		}
	}
	return out
}

// EncodeManifest returns the stored JSON form of m: lists always present
// (an absent list is stored as []), optional strings omitted when empty,
// no JSON null.
func EncodeManifest(m Manifest) ([]byte, error) {
	if m.Scopes == nil {
		m.Scopes = []string{}
	}
	if m.Events == nil {
		m.Events = []string{}
	}
	return json.Marshal(m)
}

// DecodeManifest parses a stored manifest. Absent lists decode as empty
// slices and an absent delivery as mode none, so a decoded manifest never
// holds nil lists. It returns an error for anything but a JSON object.
func DecodeManifest(raw []byte) (Manifest, error) {
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		return Manifest{}, errors.New("apps: a manifest is a JSON object")
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return Manifest{}, err
	}
	if m.Scopes == nil {
		m.Scopes = []string{}
	}
	if m.Events == nil {
		m.Events = []string{}
	}
	if m.Delivery.Mode == "" {
		m.Delivery.Mode = DeliveryNone
	}
	return m, nil
}

// App is a registered app (table apps).
type App struct {
	// ID identifies the app.
	ID ids.ID
	// PrincipalID is the app's principal, created at registration.
	PrincipalID ids.ID
	// Name is the manifest's name.
	Name string
	// Manifest is the validated manifest.
	Manifest Manifest
	// CreatedBy is the owner who registered the app.
	CreatedBy ids.ID
	// CreatedAt and UpdatedAt are the registration and last change times.
	CreatedAt, UpdatedAt time.Time
}
