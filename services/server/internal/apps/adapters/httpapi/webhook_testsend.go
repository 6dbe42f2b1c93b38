package httpapi

import (
	"context"
	"errors"

	"bothy/server/api"
	"bothy/server/internal/apps"
)

// TestSendHandlers implements sendWebhookTest of api.StrictServerInterface
// over apps.WebhookTests (ADR 0080).
type TestSendHandlers struct {
	tests apps.WebhookTests
}

// NewTestSendHandlers returns the handler over the test send use case. It
// returns an error for a nil dependency.
func NewTestSendHandlers(tests apps.WebhookTests) (*TestSendHandlers, error) {
	if tests == nil {
		return nil, errors.New("apps: httpapi.NewTestSendHandlers needs the test send use case")
	}
	return &TestSendHandlers{tests: tests}, nil
}

// SendWebhookTest implements api.StrictServerInterface: 200 with the
// outcome. status_code, error and egress_reason are left out when they
// have no value (ADR 0053).
func (h *TestSendHandlers) SendWebhookTest(ctx context.Context, req api.SendWebhookTestRequestObject) (api.SendWebhookTestResponseObject, error) {
	r, err := h.tests.SendTest(ctx, req.SubscriptionId)
	if err != nil {
		return nil, err
	}
	out := api.SendWebhookTest200JSONResponse{WebhookId: r.WebhookID, DurationMs: r.Duration.Milliseconds()}
	if r.StatusCode != 0 {
		code := int32(r.StatusCode)
		out.StatusCode = &code
	}
	if r.Error != "" {
		e := string(r.Error)
		out.Error = &e
	}
	if r.EgressReason != "" {
		reason := api.WebhookTestResultEgressReason(r.EgressReason)
		out.EgressReason = &reason
	}
	return out, nil
}
