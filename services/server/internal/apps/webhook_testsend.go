package apps

import (
	"context"
	"time"

	"bothy/server/internal/kernel/ids"
)

// This file is the port of the test send of outgoing webhooks
// (sendWebhookTest, ADR 0080, D-M2-26-54 to D-M2-26-57): one signed request
// of type webhook.test to a subscription's address, at once, outside the
// subscription's order and without a delivery row.

// TestEventType is the type of the body of a test send. It is no durable
// event type: nothing in the event log carries it, no subscription lists
// it, and receivers may ignore it (docs/api/webhooks.md 2.3).
const TestEventType = "webhook.test"

// TestSendResult is what a test send found out.
type TestSendResult struct {
	// WebhookID is the webhook-id of the test request, also the body's id:
	// a fresh UUIDv7 per test, so a receiver's deduplication never drops
	// one.
	WebhookID ids.ID
	// StatusCode is the receiver's HTTP status; 0 when no answer arrived.
	StatusCode int
	// Duration is how long the request took, from its start to the answer
	// or the failure.
	Duration time.Duration
	// Error is the last_error code of an outcome other than 2xx
	// (http_status, gone, throttled, timeout, connection_failed,
	// tls_failed, address_blocked, host_not_allowed); "" for a 2xx.
	Error LastError
	// EgressReason is the egress guard's reason when it refused the
	// request before any byte left (address_blocked, host_not_allowed,
	// scheme_not_allowed, url_not_allowed); "" otherwise.
	EgressReason string
}

// WebhookTests is the port of the test send. The principal comes from ctx
// (kernel/actor).
type WebhookTests interface {
	// SendTest sends one signed webhook.test request to the subscription's
	// URL through the webhook egress client and returns the outcome
	// (webhook_out.test, owner, audited before the request leaves). A
	// receiver's answer of any status, and a request that got no answer,
	// are results, not errors.
	//
	// Errors (*errs.Error): not_found for an unknown subscription and for
	// anyone but an owner; validation_failed with reason
	// idempotency_not_supported when ctx carries a unit of work (an
	// Idempotency-Key, whose store runs the request in a transaction);
	// conflict app_not_installed after an uninstall; internal.
	SendTest(ctx context.Context, subscriptionID ids.ID) (TestSendResult, error)
}
