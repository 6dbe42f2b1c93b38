package app_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/api"
	"bothy/server/internal/apps/adapters/httpapi"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/internal/platform/otel/oteltest"
	"bothy/server/test/harness"
)

// webhookServer serves the webhook operations of WebhookHandlers, composed
// the way the role assembly embeds the handler sets.
type webhookServer struct {
	*httpapi.WebhookHandlers
	harness.OtherModules
}

// ownerAPI is the webhook operations of the world's owner side served
// through the real HTTP chain (idempotency, problems, the generated router
// and validator).
type ownerAPI struct {
	env *httpservertest.Env
	b   *bundle
}

func (b *bundle) serveOwnerAPI(t *testing.T) *ownerAPI {
	t.Helper()
	env := httpservertest.New(t, b.db, httpservertest.Options())
	cursors, err := httpserver.NewCursors([]byte(strings.Repeat("k", httpserver.MinCursorKeyLen)))
	require.NoError(t, err)
	h, err := httpapi.NewWebhookHandlers(b.w.Services.Webhooks, cursors)
	require.NoError(t, err)
	harness.MountAPI(t, env, webhookServer{WebhookHandlers: h}, h, []string{"createWebhookSubscription", "deleteWebhookSubscription",
		"listWebhookDeliveries", "listWebhookSubscriptions", "redeliverWebhook", "updateWebhookSubscription"})
	return &ownerAPI{env: env, b: b}
}

// do sends method target with body as Robin and returns the status and
// the raw answer; header holds name, value pairs.
func (a *ownerAPI) do(t *testing.T, method, target string, body any, header ...string) (int, []byte) {
	t.Helper()
	r := httpservertest.NewRequest(t, method, api.BasePath+target, body)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	a.env.Auth.As(r, a.b.w.Authenticate(t, a.b.w.Robin.Token))
	resp := a.env.Do(r)
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, raw
}

// decoded is a JSON answer with status want, decoded.
func decoded(t *testing.T, status int, raw []byte, want int) map[string]any {
	t.Helper()
	require.Equal(t, want, status, "%s", raw)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}

// errorRecorder keeps the text of every error the webhook sender returned.
type errorRecorder struct {
	app.WebhookSender
	mu   sync.Mutex
	errs []string
}

func (s *errorRecorder) Send(ctx context.Context, req app.SignedRequest) (app.SendResult, error) {
	res, err := s.WebhookSender.Send(ctx, req)
	if err != nil {
		s.mu.Lock()
		s.errs = append(s.errs, err.Error())
		s.mu.Unlock()
	}
	return res, err
}

func (s *errorRecorder) texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errs...)
}

// spanTexts returns every name, attribute, status description and event
// of the ended spans, one string each.
func spanTexts(spans *oteltest.Spans) []string {
	var out []string
	for _, s := range spans.Ended() {
		out = append(out, s.Name(), s.Status().Description)
		for _, kv := range s.Attributes() {
			out = append(out, string(kv.Key)+"="+kv.Value.String())
		}
		for _, ev := range s.Events() {
			out = append(out, ev.Name)
			for _, kv := range ev.Attributes {
				out = append(out, string(kv.Key)+"="+kv.Value.String())
			}
		}
	}
	return out
}

// requireOnlyInURL asserts that no column of webhook_subscriptions but url
// holds any piece of s (pieces as httpservertest.RequireSecretAbsent cuts
// them), and that the url of the subscription id is exactly want.
func requireOnlyInURL(t *testing.T, b *bundle, id ids.ID, want, s string) {
	t.Helper()
	var pieces []string
	for i := 0; i+httpservertest.SecretPiece <= len(s); i++ {
		p := s[i : i+httpservertest.SecretPiece]
		pieces = append(pieces, p, hex.EncodeToString([]byte(p)))
	}
	var hits int
	require.NoError(t, b.db.App.QueryRow(bg, `
		SELECT count(*) FROM webhook_subscriptions AS k, unnest($1::text[]) AS piece
		WHERE strpos((to_jsonb(k) - 'url')::text, piece) > 0`, pieces).Scan(&hits))
	require.Zero(t, hits, "only the url column of webhook_subscriptions holds the address")
	var url string
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT url FROM webhook_subscriptions WHERE id = $1`, id).Scan(&url))
	require.Equal(t, want, url, "the url column stores the address as given, by design")
}

// TestWebhookSecretsNeverLeak (SEC-SEC-3, SEC-T10, R-API-26, SEC-LOG-1 to
// SEC-LOG-4, SEC-AUD-5): Robin creates a subscription with HMAC and
// rotates its secret over HTTP (with replays answered 409 one_time_secret
// and a refused create), Alex posts a message, and the job
// apps.webhook_deliver delivers it for real (River in role worker, the
// egress client, a TLS receiver): first the receiver aborts the request (a
// transport error), then it accepts; Robin lists the deliveries and
// redelivers the event, which goes out again. Afterwards the whsec_ values
// (and their key bytes), the master key (hex, base64 and raw), the
// address's path and query and the message text are in no row of
// webhook_subscriptions, webhook_deliveries, idempotency_keys, audit_events
// and river_job (row_to_json), in no log line of the delivery path and the
// egress client (the production handler of platform/otel) or of the HTTP
// chain, in no span name, attribute, status or event (oteltest), and in no
// error string (the sender's errors, the problem bodies, River's errors in
// river_job). The one exception is by design: webhook_subscriptions.url
// stores the address with its path and query, and only that column does.
func TestWebhookSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	const (
		path  = "/bothy/leakcheck-path"
		query = "leakcheck-query-value"
		text  = "Printer on fire next to Sam, third floor"
	)
	logs := oteltest.NewLogs(t, slog.LevelDebug)
	sender := &errorRecorder{}
	b := deliveryWorld(t, options{worker: true, realClock: true, logs: logs, sender: func(s app.WebhookSender) app.WebhookSender {
		sender.WebhookSender = s
		return sender
	}})
	owner := b.serveOwnerAPI(t)
	b.setState(t, b.sub, "paused") // Tracker's manifest subscription waits
	address := b.recv.url(path + "?q=" + query)
	create := map[string]any{"url": address, "event_types": []string{"message.created"}, "enable_hmac": true}
	var answers [][]byte

	status, raw := owner.do(t, "POST", "/apps/"+b.appID.String()+"/webhook-subscriptions", create, "Idempotency-Key", "leak-create")
	created := decoded(t, status, raw, http.StatusCreated)
	sub := ids.MustParse(created["id"].(string))
	target := "/webhook-subscriptions/" + sub.String()
	status, raw = owner.do(t, "PATCH", target, map[string]any{"rotate_hmac_secret": true}, "Idempotency-Key", "leak-rotate")
	rotated := decoded(t, status, raw, http.StatusOK)
	for _, replay := range []struct {
		method, target, key string
		body                any
	}{
		{"POST", "/apps/" + b.appID.String() + "/webhook-subscriptions", "leak-create", create},
		{"PATCH", target, "leak-rotate", map[string]any{"rotate_hmac_secret": true}},
	} {
		status, raw := owner.do(t, replay.method, replay.target, replay.body, "Idempotency-Key", replay.key)
		p := decoded(t, status, raw, http.StatusConflict)
		require.Equal(t, string(errs.CodeConflict), p["code"])
		require.Equal(t, "one_time_secret", p["reason"])
		answers = append(answers, raw)
	}
	status, raw = owner.do(t, "POST", "/apps/"+b.appID.String()+"/webhook-subscriptions",
		map[string]any{"url": "https://unlisted.example.com" + path + "?q=" + query, "event_types": []string{"message.created"}})
	require.Equal(t, http.StatusBadRequest, status)
	answers = append(answers, raw)

	// The first request is aborted by the receiver (a transport error for
	// the sender), the retry is accepted.
	b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			panic(http.ErrAbortHandler)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	b.postAndRound(t, text)
	got := b.recv.wait(t, 2)
	eventually(t, "the delivery is recorded", func() bool { return b.deliveries(t, sub)[0].Status == "succeeded" })
	require.Contains(t, string(got[1].body), text, "the message went through the delivery")
	require.Contains(t, got[1].sig, "v1,", "signed with HMAC")
	require.NotEmpty(t, sender.texts(), "the aborted request was a transport error")

	status, raw = owner.do(t, "GET", target+"/deliveries", nil)
	page := decoded(t, status, raw, http.StatusOK)
	require.Len(t, page["items"], 1)
	answers = append(answers, raw)
	delivery := b.deliveries(t, sub)[0]
	status, raw = owner.do(t, "POST", "/webhook-deliveries/"+delivery.ID.String()+"/redeliver", nil, "Idempotency-Key", "leak-redeliver")
	require.Equal(t, http.StatusAccepted, status, "%s", raw)
	answers = append(answers, raw)
	b.recv.wait(t, 3)
	eventually(t, "the redelivery is recorded", func() bool {
		return b.deliveries(t, sub)[0].Attempt == 3 && b.deliveries(t, sub)[0].Status == "succeeded"
	})

	master := b.master
	firstKey := webhook.DeriveHMACKey(master, sub, 0)
	rotatedKey := webhook.DeriveHMACKey(master, sub, 1)
	require.Equal(t, webhook.FormatSecret(firstKey), created["hmac_secret"])
	require.Equal(t, webhook.FormatSecret(rotatedKey), rotated["hmac_secret"])
	// The master key's raw bytes would show as hex in row_to_json of a
	// bytea column (and cannot be valid text): the hex value covers the rows,
	// the raw bytes are checked in logs, spans and error strings below.
	secrets := map[string]string{
		"the first secret":         created["hmac_secret"].(string),
		"the rotated secret":       rotated["hmac_secret"].(string),
		"the first key (base64)":   base64.StdEncoding.EncodeToString(firstKey),
		"the rotated key (base64)": base64.StdEncoding.EncodeToString(rotatedKey),
		"the first key (hex)":      hex.EncodeToString(firstKey),
		"the rotated key (hex)":    hex.EncodeToString(rotatedKey),
		"the master key (hex)":     hex.EncodeToString(master),
		"the master key (base64)":  base64.StdEncoding.EncodeToString(master),
		"a message text":           text,
	}
	parts := map[string]string{"the path": path, "the query": query}
	tables := []string{"webhook_subscriptions", "webhook_deliveries", "idempotency_keys", "audit_events", "river_job"}

	var texts []string
	for _, line := range logs.Lines(t) {
		raw, err := json.Marshal(line)
		require.NoError(t, err)
		texts = append(texts, string(raw))
	}
	require.NotEmpty(t, logs.WithMessage(t, "webhook delivery failed"), "the aborted attempt was logged")
	texts = append(texts, owner.env.Logs.String())
	texts = append(texts, spanTexts(b.spans)...)
	require.NotEmpty(t, b.spans.Named("webhook.deliver"))
	texts = append(texts, sender.texts()...)
	for _, a := range answers {
		texts = append(texts, string(a))
	}
	var riverErrors []string
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT coalesce(array_agg(e::text), '{}') FROM river_job, unnest(errors) AS e
		WHERE kind = 'apps.webhook_deliver'`).Scan(&riverErrors))
	texts = append(texts, riverErrors...)
	all := strings.Join(texts, "\n")

	for what, s := range secrets {
		httpservertest.RequireSecretAbsent(t, b.db.App, s, tables...)
		require.NotContains(t, all, s, what)
	}
	require.False(t, bytes.Contains([]byte(all), master), "the master key's raw bytes")
	for what, s := range parts {
		httpservertest.RequireSecretAbsent(t, b.db.App, s, "webhook_deliveries", "idempotency_keys", "audit_events", "river_job")
		requireOnlyInURL(t, b, sub, address, s)
		require.NotContains(t, all, s, what)
	}
}
