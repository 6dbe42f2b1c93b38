package apps

import (
	"context"
	"time"

	"bothy/server/internal/kernel/ids"
)

// This file is the port of outgoing webhooks (docs/api/webhooks.md): the
// Webhooks use cases the HTTP layer and the app life cycle call, their DTOs,
// and the closed vocabularies of subscription states, delivery statuses and
// last_error codes (docs/spec/03-data-model.md 4.11), which the domain rules
// in internal/apps/domain use as well.

// SubscriptionState is the state column of webhook_subscriptions (03 4.11).
type SubscriptionState string

// The subscription states.
const (
	// SubscriptionActive: deliveries are created and sent.
	SubscriptionActive SubscriptionState = "active"
	// SubscriptionPaused: deliveries are created and wait; nothing is sent.
	SubscriptionPaused SubscriptionState = "paused"
	// SubscriptionDisabled: no deliveries are created or sent until the
	// owner re-enables the subscription.
	SubscriptionDisabled SubscriptionState = "disabled"
)

// DeliveryStatus is the status column of webhook_deliveries (03 4.11).
type DeliveryStatus string

// The delivery statuses (D-M2-26-6).
const (
	// DeliveryPending waits for its first or next attempt, also after a
	// failed attempt; next_attempt_at is set.
	DeliveryPending DeliveryStatus = "pending"
	// DeliverySucceeded was accepted with a 2xx answer.
	DeliverySucceeded DeliveryStatus = "succeeded"
	// DeliveryFailed finished without success because the receiver answered
	// 410. It is terminal; the owner may redeliver it.
	DeliveryFailed DeliveryStatus = "failed"
	// DeliveryDead finished without success: webhook.retry_max_age passed
	// after a failure, or the last error is not_authorized, not_subscribed
	// or event_expired.
	DeliveryDead DeliveryStatus = "dead"
)

// LastError is a code of the closed list stored in
// webhook_deliveries.last_error. It is never a response body or any other
// text from the receiver (03 4.11; webhooks.md 4 point 5).
type LastError string

// The last_error codes (D-M2-26-6).
const (
	// LastErrorTimeout: no answer within webhook.delivery_timeout.
	LastErrorTimeout LastError = "timeout"
	// LastErrorConnectionFailed: any other transport failure (refused,
	// reset, name resolution).
	LastErrorConnectionFailed LastError = "connection_failed"
	// LastErrorTLSFailed: the TLS handshake or the certificate check failed.
	LastErrorTLSFailed LastError = "tls_failed"
	// LastErrorAddressBlocked: the egress client refused the resolved
	// address (loopback, private, link-local without allow_private).
	LastErrorAddressBlocked LastError = "address_blocked"
	// LastErrorHostNotAllowed: the egress host policy refused the address,
	// for example after webhook.allowed_hosts changed.
	LastErrorHostNotAllowed LastError = "host_not_allowed"
	// LastErrorHTTPStatus: the receiver answered with a status that is
	// neither success, gone nor a throttle (3xx included).
	LastErrorHTTPStatus LastError = "http_status"
	// LastErrorThrottled: 429, 502, 503 or 504.
	LastErrorThrottled LastError = "throttled"
	// LastErrorGone: 410; the subscription is disabled.
	LastErrorGone LastError = "gone"
	// LastErrorNotAuthorized: webhook_out.deliver did not allow the delivery;
	// no request was sent.
	LastErrorNotAuthorized LastError = "not_authorized"
	// LastErrorNotSubscribed: the event type left the subscription's
	// event_types or the installation's event_subscriptions.
	LastErrorNotSubscribed LastError = "not_subscribed"
	// LastErrorEventExpired: the event left the event log before it was
	// delivered.
	LastErrorEventExpired LastError = "event_expired"
	// LastErrorInternal: the delivery job spent its runs on an error on
	// the server's side (the rights check, signing, the database); the
	// delivery stays pending and is tried again later (D-M2-26-42).
	LastErrorInternal LastError = "internal_error"
)

// lastErrorCodes is the closed list of last_error codes, in the order of
// the table of docs/api/webhooks.md section 4.
var lastErrorCodes = []LastError{
	LastErrorTimeout, LastErrorConnectionFailed, LastErrorTLSFailed, LastErrorAddressBlocked,
	LastErrorHostNotAllowed, LastErrorHTTPStatus, LastErrorThrottled, LastErrorGone,
	LastErrorNotAuthorized, LastErrorNotSubscribed, LastErrorEventExpired, LastErrorInternal,
}

// Valid reports whether c is one of the closed list of last_error codes.
func (c LastError) Valid() bool {
	for _, v := range lastErrorCodes {
		if c == v {
			return true
		}
	}
	return false
}

// Subscription is one webhook subscription as owners see it.
type Subscription struct {
	// ID identifies the subscription.
	ID ids.ID
	// AppID and AppInstallationID name the app and the installation the
	// subscription delivers to.
	AppID, AppInstallationID ids.ID
	// URL is the https address deliveries go to.
	URL string
	// EventTypes are the subscribed event types, a subset of the
	// installation's event subscriptions; never nil.
	EventTypes []string
	// State is active, paused or disabled.
	State SubscriptionState
	// SignatureSchemes is [v1a] or [v1a, v1] (derived from HMACEnabled).
	SignatureSchemes []string
	// SigningKeyKID is the kid of the key that signed the last accepted
	// delivery, at creation the active webhook_out key (D-M2-26-4).
	SigningKeyKID string
	// HMACEnabled says whether deliveries carry v1 signatures.
	HMACEnabled bool
	// HMACGeneration is the generation of the current v1 secret.
	HMACGeneration int
	// HMACRotatedAt is the last rotation; zero when never rotated.
	HMACRotatedAt time.Time
	// ConsecutiveFailures counts counted failures in a row.
	ConsecutiveFailures int
	// LastDeliveredSeq is the highest event seq accepted with a 2xx.
	LastDeliveredSeq int64
	// DisabledAt is set while the state is disabled.
	DisabledAt time.Time
	// MaxPerSecond is the owner's rate limit: at most this many requests
	// reach the receiver within any second (ADR 0081); 0 for none.
	MaxPerSecond int
	// CreatedBy is the owner who created the subscription.
	CreatedBy ids.ID
	// CreatedAt and UpdatedAt are the creation and last change times.
	CreatedAt, UpdatedAt time.Time
}

// SubscriptionWithSecret is what CreateSubscription and UpdateSubscription
// answer: the subscription with the one-time HMAC secret of a create or a
// rotation. HMACSecret is "" in every other answer; it is never stored
// (docs/spec/06-api.md 7, R-API-26).
type SubscriptionWithSecret struct {
	Subscription
	// HMACSecret is whsec_ followed by the standard base64 of the derived
	// key, or "".
	HMACSecret string
}

// CreateSubscription is the input of createWebhookSubscription.
type CreateSubscription struct {
	// AppID names the app whose current installation receives deliveries.
	AppID ids.ID
	// URL is the https address; its host[:port] must be in
	// webhook.allowed_hosts.
	URL string
	// EventTypes to subscribe to; non-empty, without duplicates.
	EventTypes []string
	// EnableHMAC adds v1 signatures with a derived secret shown once.
	EnableHMAC bool
	// MaxPerSecond limits the requests a second (ADR 0081); 0 for no
	// limit, at most webhook.rate_limit_max.
	MaxPerSecond int
}

// UpdateSubscription is the input of updateWebhookSubscription. Nil fields
// stay unchanged; an update with nothing set changes nothing.
type UpdateSubscription struct {
	// ID names the subscription.
	ID ids.ID
	// URL replaces the address (validated like at creation).
	URL *string
	// EventTypes replaces the event types (validated like at creation).
	EventTypes *[]string
	// State is SubscriptionPaused or SubscriptionActive (resume, re-enable).
	State *SubscriptionState
	// RotateHMACSecret raises the HMAC generation and shows the new secret
	// once.
	RotateHMACSecret bool
	// MaxPerSecond replaces the rate limit (ADR 0081); 0 removes it.
	MaxPerSecond *int
}

// Delivery is one delivery of one event to one subscription.
type Delivery struct {
	// ID identifies the delivery.
	ID ids.ID
	// SubscriptionID names its subscription.
	SubscriptionID ids.ID
	// EventSeq and EventID name the event; EventID is the webhook-id.
	// EventOccurredAt completes the event's key in the log (ADR 0068).
	EventSeq        int64
	EventID         ids.ID
	EventOccurredAt time.Time
	// EventType is read from the event log; "" once the event left it
	// (sync.event_retention, D-M2-26-13).
	EventType string
	// Status is pending, succeeded, failed or dead.
	Status DeliveryStatus
	// Attempt counts the attempts made.
	Attempt int
	// NextAttemptAt is set while pending.
	NextAttemptAt time.Time
	// LastError is a code of the closed list, or "".
	LastError LastError
	// ResponseCode is the status of the last answer, or 0.
	ResponseCode int
	// DeliveredAt is set once succeeded.
	DeliveredAt time.Time
	// CreatedAt and UpdatedAt are the creation (or redelivery) and last
	// change times.
	CreatedAt, UpdatedAt time.Time
}

// DeliveryPosition is a position in the delivery history of a subscription,
// which is ordered newest first by (EventSeq, ID) descending (D-M2-26-20).
type DeliveryPosition struct {
	EventSeq int64
	ID       ids.ID
}

// DeliveryQuery asks for one page of a subscription's deliveries.
type DeliveryQuery struct {
	// SubscriptionID names the subscription.
	SubscriptionID ids.ID
	// Status filters by status; "" means every status.
	Status DeliveryStatus
	// After is the position of the last item of the previous page; nil for
	// the first page.
	After *DeliveryPosition
	// Limit is the page size (bounded by the HTTP layer's configured
	// maximum).
	Limit int
}

// DeliveryPage is one page of deliveries.
type DeliveryPage struct {
	// Items are the deliveries, newest first; never nil.
	Items []Delivery
	// Next is the position to continue after, nil on the last page.
	Next *DeliveryPosition
}

// Webhooks is the port of the outgoing webhook use cases. Every method takes
// the principal from ctx (kernel/actor), authorizes it and returns
// *errs.Error values: not_found for unknown and invisible IDs alike,
// step_up_required, forbidden, conflict with a reason, validation_failed or
// webhook_host_not_allowed with field pointers.
type Webhooks interface {
	// CreateSubscription subscribes the app's current installation
	// (webhook_out.manage, owner, step-up). With EnableHMAC the result
	// carries the secret once.
	CreateSubscription(ctx context.Context, cmd CreateSubscription) (SubscriptionWithSecret, error)
	// UpdateSubscription changes, pauses, resumes, re-enables or rotates a
	// subscription (webhook_out.manage, owner, step-up).
	UpdateSubscription(ctx context.Context, cmd UpdateSubscription) (SubscriptionWithSecret, error)
	// DeleteSubscription deletes a subscription with its deliveries
	// (webhook_out.manage, owner, step-up).
	DeleteSubscription(ctx context.Context, id ids.ID) error
	// ListSubscriptions lists every subscription of every installation of
	// the app, ordered by created_at, then id (webhook_out.read, owner).
	ListSubscriptions(ctx context.Context, appID ids.ID) ([]Subscription, error)
	// ListDeliveries pages a subscription's deliveries newest first
	// (webhook_out.read, owner).
	ListDeliveries(ctx context.Context, q DeliveryQuery) (DeliveryPage, error)
	// Redeliver sends a delivery again with the same webhook-id
	// (webhook_out.redeliver, owner, audited); conflict event_expired when
	// its event left the log.
	Redeliver(ctx context.Context, deliveryID ids.ID) (Delivery, error)
	// ResumeInstallation makes the head delivery of each active
	// subscription of the installation due now and schedules its job, in
	// the caller's unit of work (app.resume).
	ResumeInstallation(ctx context.Context, installationID ids.ID) error
}
