package app

import (
	"context"
	"time"

	"bothy/server/internal/kernel/ids"
)

// SignedRequest is one webhook POST, signed and ready to send. It lives in
// memory only: the body and the signature are never stored or logged.
type SignedRequest struct {
	// SubscriptionID names the subscription, for telemetry.
	SubscriptionID ids.ID
	// URL is the subscription's https address.
	URL string
	// WebhookID is the event ID, the same on every retry and redelivery.
	WebhookID ids.ID
	// Timestamp is the Unix time in seconds of this attempt.
	Timestamp int64
	// Signature is the value of the webhook-signature header.
	Signature string
	// Body is the JSON envelope exactly as signed.
	Body []byte
}

// SendResult is what came back from a receiver. Only the status and the
// Retry-After header are kept: a response body is never stored
// (docs/api/webhooks.md 4).
type SendResult struct {
	// StatusCode is the HTTP status of the response.
	StatusCode int
	// RetryAfter is the raw Retry-After header, or "".
	RetryAfter string
}

// WebhookSender sends signed requests to receivers.
type WebhookSender interface {
	// Send POSTs req. A response of any status is a SendResult with a nil
	// error; an error means no response arrived (blocked address, timeout,
	// TLS or connection failure) and is classified by domain.Classify.
	Send(ctx context.Context, req SignedRequest) (SendResult, error)
}

// HMACMasterKey gives the master key from which the v1 secrets of the
// subscriptions are derived (webhook.hmac_master_key_ref).
type HMACMasterKey interface {
	// Key returns the key bytes; callers must not keep or log them.
	Key(ctx context.Context) ([]byte, error)
}

// DeliveryScheduler wakes the delivery job of a subscription.
type DeliveryScheduler interface {
	// Schedule inserts a job apps.webhook_deliver for subscriptionID, due at
	// at, in the unit of work of ctx, so the job exists exactly when the rows
	// it serves were committed.
	Schedule(ctx context.Context, subscriptionID ids.ID, at time.Time) error
}
