package domain

import (
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"bothy/server/internal/apps"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/hostlist"
)

// SubscriptionEvent is something that may change a subscription's state
// (Design note 5). The values of the system events are the cause codes of
// the audit entry webhook_out.transition and of the log attribute
// bothy.reason.
type SubscriptionEvent string

// The subscription events.
const (
	// EventOwnerPause: the owner sets state paused (from active, or from
	// disabled to keep the subscription switched off but collecting).
	EventOwnerPause SubscriptionEvent = "owner_pause"
	// EventOwnerResume: the owner sets state active, a resume from paused or
	// a re-enable from disabled. Both reset consecutive_failures and make the
	// head due now (Design note 2 b).
	EventOwnerResume SubscriptionEvent = "owner_resume"
	// EventGone: the receiver answered 410.
	EventGone SubscriptionEvent = "gone"
	// EventMaxConsecutiveFailures: consecutive_failures reached
	// webhook.max_consecutive_failures; the head stays pending.
	EventMaxConsecutiveFailures SubscriptionEvent = "max_consecutive_failures"
	// EventRetryMaxAge: a delivery became dead after webhook.retry_max_age.
	EventRetryMaxAge SubscriptionEvent = "retry_max_age"
	// EventGap: an event the subscription should deliver left the event log
	// (detected at the head or from the consumer's lost range).
	EventGap SubscriptionEvent = "gap"
	// EventMaxPending: a round brought the open deliveries of an active
	// subscription to webhook.max_pending_per_subscription.
	EventMaxPending SubscriptionEvent = "max_pending"
	// EventUninstall: the app was uninstalled; audited by app.uninstall.
	EventUninstall SubscriptionEvent = "uninstall"
)

// ReasonInvalidStateTransition is the conflict reason of NextSubscriptionState
// for an event that does not apply to the current state.
const ReasonInvalidStateTransition = "invalid_state_transition"

// transitions is the whole state machine of Design note 5: event, then
// current state, then next state. A pair that is missing is rejected.
var transitions = map[SubscriptionEvent]map[apps.SubscriptionState]apps.SubscriptionState{
	EventOwnerPause:  {apps.SubscriptionActive: apps.SubscriptionPaused, apps.SubscriptionDisabled: apps.SubscriptionPaused},
	EventOwnerResume: {apps.SubscriptionPaused: apps.SubscriptionActive, apps.SubscriptionDisabled: apps.SubscriptionActive},
	// A system disable also applies to a paused subscription: an attempt
	// in flight when the owner paused still reports its outcome, and a gap
	// is found in paused subscriptions too (Design note 3 f).
	EventGone:                   {apps.SubscriptionActive: apps.SubscriptionDisabled, apps.SubscriptionPaused: apps.SubscriptionDisabled},
	EventMaxConsecutiveFailures: {apps.SubscriptionActive: apps.SubscriptionDisabled, apps.SubscriptionPaused: apps.SubscriptionDisabled},
	EventRetryMaxAge:            {apps.SubscriptionActive: apps.SubscriptionDisabled, apps.SubscriptionPaused: apps.SubscriptionDisabled},
	EventGap:                    {apps.SubscriptionActive: apps.SubscriptionDisabled, apps.SubscriptionPaused: apps.SubscriptionDisabled},
	// The quota pauses only an active subscription: it must neither pause
	// twice nor bring a disabled subscription back.
	EventMaxPending: {apps.SubscriptionActive: apps.SubscriptionPaused},
	EventUninstall:  {apps.SubscriptionActive: apps.SubscriptionDisabled, apps.SubscriptionPaused: apps.SubscriptionDisabled},
}

// SubscriptionEvents returns every event NextSubscriptionState knows, in
// declaration order.
func SubscriptionEvents() []SubscriptionEvent {
	return []SubscriptionEvent{
		EventOwnerPause, EventOwnerResume, EventGone, EventMaxConsecutiveFailures,
		EventRetryMaxAge, EventGap, EventMaxPending, EventUninstall,
	}
}

// Cause returns the cause code of a system event, audited with the system
// action webhook_out.transition (R-AZ-27), and true. Owner events and
// uninstall are audited by their own actions and return "" and false.
func (ev SubscriptionEvent) Cause() (string, bool) {
	switch ev {
	case EventGone, EventMaxConsecutiveFailures, EventRetryMaxAge, EventGap, EventMaxPending:
		return string(ev), true
	}
	return "", false
}

// NextSubscriptionState returns the state after ev (Design note 5):
//
//	owner pause        active -> paused, disabled -> paused
//	owner resume       paused -> active, disabled -> active (re-enable)
//	gone, max_consecutive_failures, retry_max_age, gap, uninstall
//	                   active -> disabled, paused -> disabled
//	max_pending        active -> paused
//
// Every other pair, including every event that would leave the state as it
// is (for example max_pending on a paused or disabled subscription), is
// rejected with a *errs.Error of code conflict and reason
// ReasonInvalidStateTransition, and current is returned unchanged. So an
// error always means "nothing to write and nothing to audit"; system callers
// that may race with an owner (the quota of a round, a late 410) treat it as
// such. An unknown state or event is an internal error.
func NextSubscriptionState(current apps.SubscriptionState, ev SubscriptionEvent) (apps.SubscriptionState, error) {
	from, ok := transitions[ev]
	if !ok {
		return current, errs.Internalf("apps: unknown subscription event")
	}
	switch current {
	case apps.SubscriptionActive, apps.SubscriptionPaused, apps.SubscriptionDisabled:
	default:
		return current, errs.Internalf("apps: unknown subscription state")
	}
	next, ok := from[current]
	if !ok {
		return current, errs.Conflict(ReasonInvalidStateTransition)
	}
	return next, nil
}

// Target is a validated subscription address.
type Target struct {
	// URL is the normalised address to store and send to: scheme https,
	// canonical host, the port only when it is not 443, path and query as
	// given.
	URL string
	// Host is the canonical host (lower case, no trailing dot, IP literals
	// without brackets in their shortest form); the only part of the
	// address that audit entries and logs may carry.
	Host string
	// Port is the effective port: the URL's port or 443.
	Port int
}

// Item codes of the field errors of ValidateTarget, pointer /url.
const (
	itemRequired         = "required"
	itemHTTPSRequired    = "https_required"
	itemUserinfo         = "userinfo_not_allowed"
	itemFragment         = "fragment_not_allowed"
	itemInvalidURL       = "invalid_url"
	itemHostNotAllowed   = "webhook_host_not_allowed"
	itemNotSubscribable  = "not_subscribable"
	itemNotGranted       = "not_granted"
	itemDuplicate        = "duplicate"
	pointerURL           = "/url"
	pointerEventTypes    = "/event_types"
	detailHostNotListed  = "host is not in webhook.allowed_hosts"
	detailPortNotAllowed = "port is not allowed for this host in webhook.allowed_hosts"
)

// ValidateTarget checks a subscription address against webhook.allowed_hosts
// (Design note 9, R-DM-17). The address is accepted when it parses as an
// absolute URL with scheme https, a host and no user info or fragment, and
// its canonical host with its effective port (443 when absent) matches an
// entry of allowed. Upper case and a trailing dot in the host are normalised
// away, as is an explicit :443.
//
// Errors, all *errs.Error with one field error at pointer /url:
// validation_failed with item code required (empty), https_required (any
// other scheme, or none), userinfo_not_allowed, fragment_not_allowed or
// invalid_url (unparsable, a character outside RFC 3986 such as a space or
// non-ASCII text that is not percent-encoded, opaque, no host, a malformed or out-of-range
// port, a host that is neither a DNS name nor an IP literal, an IPv6 zone);
// webhook_host_not_allowed with item code webhook_host_not_allowed when the
// host, or the host on that port, is not listed (the detail tells which).
// Defects of form are reported before the host list is consulted, so an
// http address is always https_required. Error texts never contain the
// address.
func ValidateTarget(raw string, allowed hostlist.List) (Target, error) {
	if raw == "" {
		return Target{}, urlDefect(itemRequired)
	}
	u, err := url.Parse(raw)
	if err != nil || !uriChars(raw) {
		return Target{}, urlDefect(itemInvalidURL)
	}
	switch {
	case u.Scheme != "https":
		return Target{}, urlDefect(itemHTTPSRequired)
	case u.Opaque != "" || u.Host == "":
		return Target{}, urlDefect(itemInvalidURL)
	case u.User != nil:
		return Target{}, urlDefect(itemUserinfo)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return Target{}, urlDefect(itemFragment)
	}
	port := hostlist.DefaultPort
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Target{}, urlDefect(itemInvalidURL)
		}
		port = n
	} else if strings.HasSuffix(u.Host, ":") {
		return Target{}, urlDefect(itemInvalidURL)
	}
	host := hostlist.Canonical(u.Hostname())
	if !hostlist.ValidHost(host) {
		return Target{}, urlDefect(itemInvalidURL)
	}
	ip, err := netip.ParseAddr(host)
	isIP := err == nil
	if isIP && ip.Zone() != "" {
		return Target{}, urlDefect(itemInvalidURL)
	}
	if _, ok := allowed.Match(host, port); !ok {
		detail := detailHostNotListed
		if allowed.HostListed(host) {
			detail = detailPortNotAllowed
		}
		e := errs.New(errs.CodeWebhookHostNotAllowed, "webhook host not allowed")
		e.Fields = []errs.FieldError{{Pointer: pointerURL, Code: itemHostNotAllowed, Detail: detail}}
		return Target{}, e
	}
	u.Host = host
	if isIP && ip.Is6() {
		u.Host = "[" + host + "]"
	}
	if port != hostlist.DefaultPort {
		u.Host += ":" + strconv.Itoa(port)
	}
	return Target{URL: u.String(), Host: host, Port: port}, nil
}

// uriChars reports whether s holds only the characters RFC 3986 allows in a
// URI: ASCII letters and digits, "-._~", the reserved characters and "%".
// net/url lets spaces, backslashes and non-ASCII through in paths and
// queries; they would reach the request line unescaped, so an address must
// come percent-encoded.
func uriChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("-._~:/?#[]@!$&'()*+,;=%", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

func urlDefect(item string) *errs.Error {
	return errs.Validation(errs.Field(pointerURL, item))
}

// subscribable is the set of Design note 10 (D-M2-26-9): every durable event
// type an app may receive, that is the webhooks of the HTTP contract minus
// the types whose only receiver is an agent (agent.invocation.requested).
// Sorted; the contract test compares it with api/openapi.yaml and
// docs/spec/actions.yaml.
var subscribable = []string{
	"app.installation.updated",
	"channel.created",
	"channel.updated",
	"instance.updated",
	"message.created",
	"message.deleted",
	"message.updated",
	"thread.created",
}

// SubscribableEventTypes returns the event types an app subscription may
// name, sorted, as a fresh slice. It exists for the contract test against
// the webhooks of api/openapi.yaml and the receivers of actions.yaml.
func SubscribableEventTypes() []string { return slices.Clone(subscribable) }

// AppSubscribable reports whether an app subscription may name eventType
// (Design note 10). The comparison is exact: event types have one spelling.
func AppSubscribable(eventType string) bool {
	_, ok := slices.BinarySearch(subscribable, eventType)
	return ok
}

// ValidateEventTypes checks the event_types of a subscription against the
// installation's event_subscriptions (granted): the list is not empty, has
// no duplicates, and every entry is AppSubscribable and in granted.
//
// The error is a *errs.Error validation_failed listing every defect:
// pointer /event_types with item code required for an empty list, otherwise
// pointer /event_types/<index> with item code duplicate (a repeat of an
// earlier entry), not_subscribable or not_granted, one field per defective
// entry in index order.
func ValidateEventTypes(types, granted []string) error {
	if len(types) == 0 {
		return errs.Validation(errs.Field(pointerEventTypes, itemRequired))
	}
	var fields []errs.FieldError
	seen := make(map[string]bool, len(types))
	for i, typ := range types {
		item := ""
		switch {
		case seen[typ]:
			item = itemDuplicate
		case !AppSubscribable(typ):
			item = itemNotSubscribable
		case !slices.Contains(granted, typ):
			item = itemNotGranted
		}
		seen[typ] = true
		if item != "" {
			fields = append(fields, errs.Field(pointerEventTypes+"/"+strconv.Itoa(i), item))
		}
	}
	if len(fields) > 0 {
		return errs.Validation(fields...)
	}
	return nil
}
