package httpapi

import (
	"context"
	"errors"

	"bothy/server/api"
	"bothy/server/internal/apps"
)

// RecoveryHandlers implements recoverWebhookDeliveries of
// api.StrictServerInterface over apps.DeliveryRecovery (ADR 0079).
type RecoveryHandlers struct {
	recovery apps.DeliveryRecovery
}

// NewRecoveryHandlers returns the handler over the recovery use case. It
// returns an error for a nil dependency.
func NewRecoveryHandlers(recovery apps.DeliveryRecovery) (*RecoveryHandlers, error) {
	if recovery == nil {
		return nil, errors.New("apps: httpapi.NewRecoveryHandlers needs the recovery use case")
	}
	return &RecoveryHandlers{recovery: recovery}, nil
}

// RecoverWebhookDeliveries implements api.StrictServerInterface: 202 with
// the count, has_more and the window as applied. The validator has checked
// the body (since required, both RFC 3339); the use case checks the window.
func (h *RecoveryHandlers) RecoverWebhookDeliveries(ctx context.Context, req api.RecoverWebhookDeliveriesRequestObject) (api.RecoverWebhookDeliveriesResponseObject, error) {
	cmd := apps.RecoverDeliveries{SubscriptionID: req.SubscriptionId, Since: req.Body.Since}
	if req.Body.Until != nil {
		cmd.Until = *req.Body.Until
	}
	r, err := h.recovery.RecoverDeliveries(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return api.RecoverWebhookDeliveries202JSONResponse{Body: api.WebhookRecovery{
		Recovered: int32(r.Recovered), HasMore: r.HasMore, Since: r.Since, Until: r.Until,
	}}, nil
}
