package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"bothy/server/api"
	"bothy/server/internal/apps/adapters/httpapi"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/apps/webhookstest"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/test/harness"
)

// webhookOperations are the operations WebhookHandlers serves.
var webhookOperations = []string{"createWebhookSubscription", "deleteWebhookSubscription", "listWebhookDeliveries",
	"listWebhookSubscriptions", "redeliverWebhook", "updateWebhookSubscription"}

// webhookServer is the strict server of these tests, composed the way the
// role assembly embeds the handler sets.
type webhookServer struct {
	*httpapi.WebhookHandlers
	harness.OtherModules
}

// whBundle is the world with the webhook operations served through the real
// chain (idempotency, problems), the generated router and the validator.
type whBundle struct {
	env     *httpservertest.Env
	w       *webhookstest.World
	cursors *httpserver.Cursors
}

func setupWebhooks(t *testing.T) *whBundle {
	t.Helper()
	db := pgtest.New(t)
	w := webhookstest.Build(t, db, nil)
	env := httpservertest.New(t, db, httpservertest.Options())
	cursors, err := httpserver.NewCursors([]byte(strings.Repeat("k", httpserver.MinCursorKeyLen)))
	require.NoError(t, err)
	h, err := httpapi.NewWebhookHandlers(w.Services.Webhooks, cursors)
	require.NoError(t, err)
	harness.MountAPI(t, env, webhookServer{WebhookHandlers: h}, h, webhookOperations)
	return &whBundle{env: env, w: w, cursors: cursors}
}

// do sends method target with body, authenticated as the principal token
// authenticates as now (the world's real authenticator); header holds
// name, value pairs.
func (b *whBundle) do(t *testing.T, token, method, target string, body any, header ...string) *http.Response {
	t.Helper()
	r := httpservertest.NewRequest(t, method, api.BasePath+target, body)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	b.env.Auth.As(r, b.w.Authenticate(t, token))
	return b.env.Do(r)
}

// body reads a JSON answer with status want, checks it against the schema
// of the contract and that it holds no null (ADR 0053), and returns it
// decoded.
func body(t *testing.T, resp *http.Response, want int, schema string) map[string]any {
	t.Helper()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, want, resp.StatusCode, "%s", raw)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	require.NotContains(t, string(raw), "null", "no JSON null (ADR 0053)")
	var generic any
	require.NoError(t, json.Unmarshal(raw, &generic))
	doc, err := openapi3.NewLoader().LoadFromData(api.Spec())
	require.NoError(t, err)
	ref, ok := doc.Components.Schemas[schema]
	require.True(t, ok, schema)
	require.NoError(t, ref.Value.VisitJSON(generic), "the body validates against %s", schema)
	return generic.(map[string]any)
}

// sameProblem asserts that two problem answers are identical apart from
// the request ID: status, headers and body (an invisible resource answers
// exactly like an unknown one, AZ-P2).
func sameProblem(t *testing.T, invisible, unknown *http.Response) {
	t.Helper()
	require.Equal(t, unknown.StatusCode, invisible.StatusCode)
	h1, h2 := invisible.Header.Clone(), unknown.Header.Clone()
	h1.Del("X-Request-Id")
	h2.Del("X-Request-Id")
	require.Equal(t, h2, h1)
	p1, p2 := httpservertest.DecodeProblem(t, invisible), httpservertest.DecodeProblem(t, unknown)
	p1.RequestID, p2.RequestID = "", ""
	require.Equal(t, p2, p1)
}

// itemCodes returns the item codes of a problem's errors in order.
func itemCodes(p httpserver.Problem) []string {
	out := []string{}
	for _, e := range p.Errors {
		out = append(out, e.Code)
	}
	return out
}

// manageEntries returns the webhook_out.manage allows, oldest first.
func (b *whBundle) manageEntries(t *testing.T) []audittest.Row {
	t.Helper()
	return audittest.List(t, b.w.Services.DB.App, audittest.Filter{Action: "webhook_out.manage", Outcome: "allow"})
}

// str reads a string member of a decoded body ("" when absent).
func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

// appRegister is the registration of an app without webhook delivery.
func appRegister(name string) app.RegisterApp {
	return app.RegisterApp{Manifest: domain.Manifest{Name: name, Scopes: []string{"events:subscribe", "messages:read"},
		Events: []string{"message.created"}, Delivery: domain.Delivery{Mode: domain.DeliveryNone}}}
}
