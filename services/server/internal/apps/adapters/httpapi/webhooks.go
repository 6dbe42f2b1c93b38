package httpapi

import (
	"context"
	"errors"
	"time"

	"bothy/server/api"
	"bothy/server/internal/apps"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/httpserver"
)

// opListWebhookDeliveries is the operation the cursors of
// listWebhookDeliveries are bound to.
const opListWebhookDeliveries = "listWebhookDeliveries"

// WebhookHandlers implements the webhook methods of
// api.StrictServerInterface: listWebhookSubscriptions,
// createWebhookSubscription, updateWebhookSubscription,
// deleteWebhookSubscription, listWebhookDeliveries and redeliverWebhook.
type WebhookHandlers struct {
	webhooks apps.Webhooks
	cursors  *httpserver.Cursors
}

// NewWebhookHandlers returns the handlers over the webhook use cases;
// cursors encodes and decodes the page cursors of listWebhookDeliveries.
// It returns an error for a nil dependency.
func NewWebhookHandlers(webhooks apps.Webhooks, cursors *httpserver.Cursors) (*WebhookHandlers, error) {
	if webhooks == nil || cursors == nil {
		return nil, errors.New("apps: httpapi.NewWebhookHandlers needs the webhook use cases and a cursor codec")
	}
	return &WebhookHandlers{webhooks: webhooks, cursors: cursors}, nil
}

// ListWebhookSubscriptions implements api.StrictServerInterface.
func (h *WebhookHandlers) ListWebhookSubscriptions(ctx context.Context, req api.ListWebhookSubscriptionsRequestObject) (api.ListWebhookSubscriptionsResponseObject, error) {
	subs, err := h.webhooks.ListSubscriptions(ctx, req.AppId)
	if err != nil {
		return nil, err
	}
	out := api.ListWebhookSubscriptions200JSONResponse{Items: make([]api.WebhookSubscription, 0, len(subs))}
	for _, s := range subs {
		out.Items = append(out.Items, subscriptionOf(s))
	}
	return out, nil
}

// CreateWebhookSubscription implements api.StrictServerInterface. The
// use case marks a response with an HMAC secret as a one-time secret for
// the idempotency stage of the chain.
func (h *WebhookHandlers) CreateWebhookSubscription(ctx context.Context, req api.CreateWebhookSubscriptionRequestObject) (api.CreateWebhookSubscriptionResponseObject, error) {
	cmd := apps.CreateSubscription{AppID: req.AppId, URL: req.Body.Url, EventTypes: fromEventTypes(req.Body.EventTypes)}
	if req.Body.EnableHmac != nil {
		cmd.EnableHMAC = *req.Body.EnableHmac
	}
	if req.Body.MaxPerSecond != nil {
		cmd.MaxPerSecond = int(*req.Body.MaxPerSecond)
	}
	created, err := h.webhooks.CreateSubscription(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return api.CreateWebhookSubscription201JSONResponse{Body: createdOf(created)}, nil
}

// UpdateWebhookSubscription implements api.StrictServerInterface.
func (h *WebhookHandlers) UpdateWebhookSubscription(ctx context.Context, req api.UpdateWebhookSubscriptionRequestObject) (api.UpdateWebhookSubscriptionResponseObject, error) {
	cmd := apps.UpdateSubscription{ID: req.SubscriptionId, URL: req.Body.Url}
	if req.Body.EventTypes != nil {
		types := fromEventTypes(*req.Body.EventTypes)
		cmd.EventTypes = &types
	}
	if req.Body.State != nil {
		state := apps.SubscriptionState(*req.Body.State)
		cmd.State = &state
	}
	if req.Body.RotateHmacSecret != nil {
		cmd.RotateHMACSecret = *req.Body.RotateHmacSecret
	}
	if req.Body.MaxPerSecond != nil {
		limit := int(*req.Body.MaxPerSecond)
		cmd.MaxPerSecond = &limit
	}
	updated, err := h.webhooks.UpdateSubscription(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return api.UpdateWebhookSubscription200JSONResponse{Body: createdOf(updated)}, nil
}

// DeleteWebhookSubscription implements api.StrictServerInterface.
func (h *WebhookHandlers) DeleteWebhookSubscription(ctx context.Context, req api.DeleteWebhookSubscriptionRequestObject) (api.DeleteWebhookSubscriptionResponseObject, error) {
	if err := h.webhooks.DeleteSubscription(ctx, req.SubscriptionId); err != nil {
		return nil, err
	}
	return api.DeleteWebhookSubscription204Response{}, nil
}

// deliveryCursor is the position a cursor of listWebhookDeliveries holds.
type deliveryCursor struct {
	EventSeq int64  `json:"s"`
	ID       ids.ID `json:"i"`
}

// ListWebhookDeliveries implements api.StrictServerInterface. The cursor
// is the codec's encoding of the last position of the previous page, bound
// to the operation and the principal, so a cursor of another principal or
// operation, or a tampered one, answers 400 cursor_invalid.
func (h *WebhookHandlers) ListWebhookDeliveries(ctx context.Context, req api.ListWebhookDeliveriesRequestObject) (api.ListWebhookDeliveriesResponseObject, error) {
	principal := actor.From(ctx).ID
	q := apps.DeliveryQuery{SubscriptionID: req.SubscriptionId}
	if req.Params.Status != nil {
		q.Status = apps.DeliveryStatus(*req.Params.Status)
	}
	if req.Params.Cursor != nil {
		var c deliveryCursor
		if err := h.cursors.Decode(opListWebhookDeliveries, principal, *req.Params.Cursor, &c); err != nil {
			return nil, err
		}
		q.After = &apps.DeliveryPosition{EventSeq: c.EventSeq, ID: c.ID}
	}
	if req.Params.Limit != nil {
		q.Limit = int(*req.Params.Limit)
	}
	page, err := h.webhooks.ListDeliveries(ctx, q)
	if err != nil {
		return nil, err
	}
	out := api.ListWebhookDeliveries200JSONResponse{Items: make([]api.WebhookDelivery, 0, len(page.Items))}
	for _, d := range page.Items {
		out.Items = append(out.Items, deliveryOf(d))
	}
	if page.Next != nil {
		cursor, err := h.cursors.Encode(opListWebhookDeliveries, principal, deliveryCursor{EventSeq: page.Next.EventSeq, ID: page.Next.ID})
		if err != nil {
			return nil, err
		}
		out.NextCursor = &cursor
	}
	return out, nil
}

// RedeliverWebhook implements api.StrictServerInterface: 202 with the
// delivery, pending again.
func (h *WebhookHandlers) RedeliverWebhook(ctx context.Context, req api.RedeliverWebhookRequestObject) (api.RedeliverWebhookResponseObject, error) {
	d, err := h.webhooks.Redeliver(ctx, req.DeliveryId)
	if err != nil {
		return nil, err
	}
	return api.RedeliverWebhook202JSONResponse{Body: deliveryOf(d)}, nil
}

// subscriptionOf maps a subscription to the response model. Members
// without a value (hmac_rotated_at, disabled_at) are left out, never null
// (ADR 0053); the lists are never nil.
func subscriptionOf(s apps.Subscription) api.WebhookSubscription {
	out := api.WebhookSubscription{
		Id: s.ID, Url: s.URL, State: api.WebhookSubscriptionState(s.State), SigningKeyKid: s.SigningKeyKID,
		EventTypes: toEventTypes(s.EventTypes), SignatureSchemes: make([]api.SignatureScheme, 0, len(s.SignatureSchemes)),
		HmacEnabled: s.HMACEnabled, HmacGeneration: int32(s.HMACGeneration), ConsecutiveFailures: int32(s.ConsecutiveFailures),
		LastDeliveredSeq: s.LastDeliveredSeq, MaxPerSecond: int32(s.MaxPerSecond), CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
	}
	if !s.AppID.IsZero() {
		appID := s.AppID
		out.AppId = &appID
	}
	for _, scheme := range s.SignatureSchemes {
		out.SignatureSchemes = append(out.SignatureSchemes, api.SignatureScheme(scheme))
	}
	out.HmacRotatedAt = optionalTime(s.HMACRotatedAt)
	out.DisabledAt = optionalTime(s.DisabledAt)
	return out
}

// createdOf maps a subscription with its optional one-time secret to the
// response model of create and update; hmac_secret is present only when
// the use case derived a secret in this request.
func createdOf(c apps.SubscriptionWithSecret) api.WebhookSubscriptionCreated {
	s := subscriptionOf(c.Subscription)
	out := api.WebhookSubscriptionCreated{
		AgentId: s.AgentId, AppId: s.AppId, ConsecutiveFailures: s.ConsecutiveFailures, CreatedAt: s.CreatedAt,
		DisabledAt: s.DisabledAt, EventTypes: s.EventTypes, HmacEnabled: s.HmacEnabled, HmacGeneration: s.HmacGeneration,
		HmacRotatedAt: s.HmacRotatedAt, Id: s.Id, LastDeliveredSeq: s.LastDeliveredSeq, MaxPerSecond: s.MaxPerSecond,
		SignatureSchemes: s.SignatureSchemes,
		SigningKeyKid:    s.SigningKeyKid, State: s.State, UpdatedAt: s.UpdatedAt, Url: s.Url,
	}
	if c.HMACSecret != "" {
		secret := c.HMACSecret
		out.HmacSecret = &secret
	}
	return out
}

// deliveryOf maps a delivery to the response model; event_type,
// next_attempt_at, last_error, response_code and delivered_at are left out
// when they have no value.
func deliveryOf(d apps.Delivery) api.WebhookDelivery {
	out := api.WebhookDelivery{
		Id: d.ID, SubscriptionId: d.SubscriptionID, EventSeq: d.EventSeq, EventId: d.EventID,
		Status: api.WebhookDeliveryStatus(d.Status), Attempt: int32(d.Attempt), CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
		NextAttemptAt: optionalTime(d.NextAttemptAt), DeliveredAt: optionalTime(d.DeliveredAt),
	}
	if d.EventType != "" {
		t := api.EventType(d.EventType)
		out.EventType = &t
	}
	if d.LastError != "" {
		e := string(d.LastError)
		out.LastError = &e
	}
	if d.ResponseCode != 0 {
		c := int32(d.ResponseCode)
		out.ResponseCode = &c
	}
	return out
}

// optionalTime returns nil for the zero time, so the member is left out.
func optionalTime(t time.Time) *api.Timestamp {
	if t.IsZero() {
		return nil
	}
	return &t
}
