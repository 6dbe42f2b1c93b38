// Package webhookhttp sends signed webhook requests through the egress client
// (ADR 0022): every delivery connects only to an address the egress guard
// checked after name resolution, never follows a redirect and reads at most
// egress.max_response_bytes of an answer, which it then discards.
package webhookhttp

import (
	"bytes"
	"context"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/platform/buildinfo"
	"bothy/server/internal/platform/egress"
	"bothy/server/internal/platform/otel/attr"
)

// UserAgentPrefix starts the User-Agent of every delivery; the server version
// follows (docs/api/webhooks.md 2).
const UserAgentPrefix = "chat-server-webhooks/"

// SpanName is the span around one HTTP exchange (docs/observability/signals.md 5.2).
const SpanName = "webhook.deliver"

// Sender implements app.WebhookSender over one egress client.
type Sender struct {
	client    *egress.Client
	tracer    trace.Tracer
	userAgent string
}

var _ app.WebhookSender = (*Sender)(nil)

// NewSender returns a sender over client, which must be the webhook egress
// client (purpose "webhook", hosts from webhook.allowed_hosts, Timeout
// webhook.delivery_timeout, RedirectNever). It panics on nil arguments, a
// wiring bug.
func NewSender(client *egress.Client, tp trace.TracerProvider) *Sender {
	if client == nil || tp == nil {
		panic("webhookhttp: NewSender needs an egress client and a tracer provider")
	}
	return &Sender{
		client:    client,
		tracer:    tp.Tracer("bothy/apps/webhookhttp"),
		userAgent: UserAgentPrefix + buildinfo.Version(),
	}
}

// Send POSTs req and returns the status and Retry-After of the answer. The
// span webhook.deliver carries the host (never the path or query), the
// status when an answer arrived and bothy.outcome from the closed list of
// webhook.Outcome.SpanOutcome. Errors are the egress client's, unchanged, so
// webhook.Classify sees their types; their messages name the host only.
func (s *Sender) Send(ctx context.Context, req app.SignedRequest) (app.SendResult, error) {
	host := domain.TargetHost(req.URL)
	ctx, span := s.tracer.Start(ctx, SpanName, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attr.ServerAddress.String(host), attr.WebhookSubscriptionID.String(req.SubscriptionID.String())))
	defer span.End()

	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		// Only a URL that no longer parses gets here; the subscription's URL
		// was validated at creation, so treat it like an unlisted target.
		err = &egress.BlockedError{Reason: egress.ReasonURLNotAllowed, Host: host}
		s.finish(span, 0, err)
		return app.SendResult{}, err
	}
	h := httpReq.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", s.userAgent)
	h.Set("webhook-id", req.WebhookID.String())
	h.Set("webhook-timestamp", strconv.FormatInt(req.Timestamp, 10))
	h.Set("webhook-signature", req.Signature)

	resp, err := s.client.Do(httpReq)
	if err != nil {
		s.finish(span, 0, err)
		return app.SendResult{}, err
	}
	// The egress client has read the bounded body into memory; it is
	// discarded unread because receivers' answers are never stored.
	_ = resp.Body.Close()
	span.SetAttributes(attr.HTTPResponseStatusCode.Int(resp.StatusCode))
	s.finish(span, resp.StatusCode, nil)
	return app.SendResult{StatusCode: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}, nil
}

func (s *Sender) finish(span trace.Span, status int, err error) {
	o := webhook.Classify(status, err)
	span.SetAttributes(attr.Outcome.String(o.SpanOutcome()))
	if o.Kind != webhook.OutcomeSuccess {
		span.SetStatus(codes.Error, string(o.LastError))
	}
}
