// Package attr lists every attribute key that bothy puts on spans, logs and
// metrics (docs/observability/signals.md section 5.3). Telemetry uses only
// these keys: the log handler drops any other, and the collector's allow list
// (infra/otel/collector.yaml) must list exactly the same set.
//
// No key may carry a URL path or query, a request or response body, message
// text or a secret (SEC-LOG-1 to SEC-LOG-4).
package attr

import (
	"slices"

	"go.opentelemetry.io/otel/attribute"
)

// Semantic-convention keys.
const (
	// ServerAddress is the host name of an outgoing connection, never a URL.
	ServerAddress = attribute.Key("server.address")
	// HTTPResponseStatusCode is the status of an HTTP response.
	HTTPResponseStatusCode = attribute.Key("http.response.status_code")
	// HTTPRequestMethod is the method of an HTTP request.
	HTTPRequestMethod = attribute.Key("http.request.method")
	// HTTPRoute is the route template (never the path with values).
	HTTPRoute = attribute.Key("http.route")
	// ErrorType is a stable error class, never an error message.
	ErrorType = attribute.Key("error.type")
)

// bothy keys.
const (
	// Outcome is the closed result of an operation, such as succeeded,
	// throttled, gone, failed or blocked for webhook.deliver.
	Outcome = attribute.Key("bothy.outcome")
	// Reason is a stable code explaining an outcome (a last_error code, a
	// denial reason, an egress block reason).
	Reason = attribute.Key("bothy.reason")
	// EventSeq is the seq of an event in the event log.
	EventSeq = attribute.Key("bothy.event.seq")
	// EventType is a durable event type such as message.created.
	EventType = attribute.Key("bothy.event.type")
	// WebhookSubscriptionID is the UUID of a webhook subscription. It is
	// allowed on spans and logs, never on metrics (unbounded cardinality).
	WebhookSubscriptionID = attribute.Key("bothy.webhook_subscription.id")
	// WebhookSubscriptionState is the state of a webhook subscription:
	// active, paused or disabled (a closed list, so it may label a metric).
	WebhookSubscriptionState = attribute.Key("bothy.webhook_subscription.state")
	// EgressPurpose names the egress client, for example "webhook".
	EgressPurpose = attribute.Key("bothy.egress.purpose")
	// RequestID is the ID the HTTP chain gives each request.
	RequestID = attribute.Key("bothy.request_id")
	// Role is the process role: api, worker or all.
	Role = attribute.Key("bothy.role")
	// JobKind is the River job kind, for example apps.webhook_deliver.
	JobKind = attribute.Key("bothy.job.kind")
	// Queue is a River queue name.
	Queue = attribute.Key("bothy.queue")
	// Consumer is the name of an event-log consumer, for example webhooks.
	Consumer = attribute.Key("bothy.consumer")
	// Duration is an elapsed time in milliseconds.
	Duration = attribute.Key("bothy.duration_ms")
	// Count is a number of items handled, such as events in a round.
	Count = attribute.Key("bothy.count")
	// MigrationVersion is the version of a schema migration that `bothy
	// migrate` applied: River's schema version or the number of a goose
	// file (the message says which).
	MigrationVersion = attribute.Key("bothy.migration.version")
)

// All returns every key of this package, in declaration order. The log
// handler's allow list and the collector's allow list are built from it;
// TestAllListsEveryKey proves it complete by reading this file with go/ast.
func All() []attribute.Key {
	return []attribute.Key{
		ServerAddress,
		HTTPResponseStatusCode,
		HTTPRequestMethod,
		HTTPRoute,
		ErrorType,
		Outcome,
		Reason,
		EventSeq,
		EventType,
		WebhookSubscriptionID,
		WebhookSubscriptionState,
		EgressPurpose,
		RequestID,
		Role,
		JobKind,
		Queue,
		Consumer,
		Duration,
		Count,
		MigrationVersion,
	}
}

// Unbounded returns the keys whose values grow without bound (identifiers,
// sequence numbers, measured values). They are allowed on spans and logs but
// never on metrics, where every distinct value is a new time series; the
// meter provider of package otel drops them from every metric.
func Unbounded() []attribute.Key {
	return []attribute.Key{WebhookSubscriptionID, RequestID, EventSeq, Duration, Count, MigrationVersion}
}

// ForMetrics reports whether k may label a metric: it is a key of this
// package and not Unbounded.
func ForMetrics(k attribute.Key) bool {
	if slices.Contains(Unbounded(), k) {
		return false
	}
	return slices.Contains(All(), k)
}
