package httpapi_test

import (
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/httpserver/httpservertest"
)

// TestWebhookSecretsNeverLeak (SEC-SEC-3, SEC-T10, R-API-26) for the rows
// the owner side writes: the whsec_ values of a create and a rotation, the
// master key, the address's path and query and a message text are in no
// row of webhook_subscriptions, webhook_deliveries, idempotency_keys and
// audit_events (row_to_json), in no log record and in no problem body. The
// path and query are the address itself: they stay in
// webhook_subscriptions.url, and only there.
func TestWebhookSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	b := setupWebhooks(t)
	w := b.w
	const (
		path  = "/bothy/leakcheck-path"
		query = "leakcheck-query-value"
		text  = "Printer on fire next to Sam, third floor"
	)
	created := body(t, b.do(t, w.Robin.Token, "POST", "/apps/"+w.Tracker.ID.String()+"/webhook-subscriptions",
		map[string]any{"url": "https://hooks.example.com" + path + "?q=" + query, "event_types": []string{"message.created"}, "enable_hmac": true},
		"Idempotency-Key", "leak-create"), http.StatusCreated, "WebhookSubscriptionCreated")
	target := "/webhook-subscriptions/" + str(created, "id")
	rotated := body(t, b.do(t, w.Robin.Token, "PATCH", target, map[string]any{"rotate_hmac_secret": true}, "Idempotency-Key", "leak-rotate"),
		http.StatusOK, "WebhookSubscriptionCreated")
	for _, replay := range []struct{ method, key string }{{"POST", "leak-create"}, {"PATCH", "leak-rotate"}} {
		route := "/apps/" + w.Tracker.ID.String() + "/webhook-subscriptions"
		req := map[string]any{"url": "https://hooks.example.com" + path + "?q=" + query, "event_types": []string{"message.created"}, "enable_hmac": true}
		if replay.method == "PATCH" {
			route, req = target, map[string]any{"rotate_hmac_secret": true}
		}
		httpservertest.RequireProblem(t, b.do(t, w.Robin.Token, replay.method, route, req, "Idempotency-Key", replay.key), errs.CodeConflict, "one_time_secret")
	}
	refused := b.do(t, w.Robin.Token, "POST", "/apps/"+w.Tracker.ID.String()+"/webhook-subscriptions",
		map[string]any{"url": "https://other.example.com" + path + "?q=" + query, "event_types": []string{"message.created"}})
	raw, err := io.ReadAll(refused.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, refused.StatusCode)

	ev := w.Post(t, w.Sam.Token, w.Eskalation, text)
	d := w.InsertDelivery(t, ids.MustParse(str(created, "id")), ev, apps.DeliveryDead, w.Clock.Now())
	body(t, b.do(t, w.Robin.Token, "GET", target+"/deliveries", nil), http.StatusOK, "WebhookDeliveryPage")
	body(t, b.do(t, w.Robin.Token, "POST", "/webhook-deliveries/"+d.ID.String()+"/redeliver", nil, "Idempotency-Key", "leak-redeliver"),
		http.StatusAccepted, "WebhookDelivery")

	master := w.MasterKey(t)
	secrets := map[string]string{
		"the first secret":        str(created, "hmac_secret"),
		"the rotated secret":      str(rotated, "hmac_secret"),
		"the first secret's key":  strings.TrimPrefix(str(created, "hmac_secret"), "whsec_"),
		"the master key (hex)":    hex.EncodeToString(master),
		"the master key (base64)": base64.StdEncoding.EncodeToString(master),
		"a message text":          text,
	}
	tables := []string{"webhook_subscriptions", "webhook_deliveries", "idempotency_keys", "audit_events"}
	logs := b.env.Logs.String()
	for what, s := range secrets {
		require.NotEmpty(t, s, what)
		httpservertest.RequireSecretAbsent(t, w.Services.DB.App, s, tables...)
		require.NotContains(t, logs, s, what)
		require.NotContains(t, string(raw), s, what)
	}
	for what, s := range map[string]string{"the path": path, "the query": query} {
		httpservertest.RequireSecretAbsent(t, w.Services.DB.App, s, "webhook_deliveries", "idempotency_keys", "audit_events")
		require.NotContains(t, logs, s, what)
		require.NotContains(t, string(raw), s, what, "a problem never echoes the address")
	}
	require.NotEmpty(t, logs, "the chain logged the requests")
}
