package webhookhttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/adapters/webhookhttp"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/egress"
	"bothy/server/internal/platform/egress/egresstest"
	"bothy/server/internal/platform/otel/attr"
	"bothy/server/internal/platform/otel/oteltest"
)

type bundle struct {
	sender *webhookhttp.Sender
	spans  *oteltest.Spans
	url    string
	mu     sync.Mutex
	got    []*http.Request
	bodies []string
}

// setup starts a TLS receiver for hooks.example.com answering with respond,
// and a sender whose egress client reaches it through the fake resolver;
// allowPrivate decides whether egress.allowed_hosts lets the name resolve to
// 127.0.0.1.
func setup(t *testing.T, allowPrivate bool, respond func(w http.ResponseWriter)) *bundle {
	t.Helper()
	b := &bundle{spans: oteltest.NewSpans(t)}
	srv := egresstest.NewTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.got = append(b.got, r)
		b.bodies = append(b.bodies, string(body))
		b.mu.Unlock()
		respond(w)
	}))
	entry := fmt.Sprintf("hooks.example.com:%d", srv.Port)
	hosts, err := hostlist.Parse([]string{entry})
	require.NoError(t, err)
	var private hostlist.List
	if allowPrivate {
		private, err = hostlist.Parse([]string{entry + ";allow_private"})
		require.NoError(t, err)
	}
	logs, _ := egresstest.NewLogs()
	client, err := egress.New(egress.Options{
		Purpose:             "webhook",
		Hosts:               egress.NewHostPolicy(hosts),
		Private:             private,
		Schemes:             []string{"https"},
		Redirects:           egress.RedirectNever,
		Timeout:             10 * time.Second,
		MaxResponseBytes:    4096,
		MaxIdleConnsPerHost: 2, IdleConnTimeout: time.Minute,
		RootCAs: srv.RootCAs,
	}, egress.Deps{
		Resolver: egresstest.NewResolver(map[string][]netip.Addr{"hooks.example.com": {netip.MustParseAddr("127.0.0.1")}}),
		Meter:    egresstest.NewMetrics(t).Provider(),
		Logger:   logs,
	})
	require.NoError(t, err)
	b.sender = webhookhttp.NewSender(client, b.spans.Provider)
	b.url = fmt.Sprintf("https://hooks.example.com:%d/hooks/bothy?token=secret-path", srv.Port)
	return b
}

func TestSendSetsHeadersAndKeepsOnlyStatusAndRetryAfter(t *testing.T) {
	t.Parallel()
	b := setup(t, true, func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, "slow down, Alex")
	})
	req := app.SignedRequest{
		SubscriptionID: ids.New(),
		URL:            b.url,
		WebhookID:      ids.New(),
		Timestamp:      1_764_480_000,
		Signature:      "v1a,c2lnbmF0dXJl",
		Body:           []byte(`{"type":"message.created"}`),
	}
	res, err := b.sender.Send(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, app.SendResult{StatusCode: http.StatusTooManyRequests, RetryAfter: "120"}, res)

	require.Len(t, b.got, 1)
	h := b.got[0].Header
	require.Equal(t, http.MethodPost, b.got[0].Method)
	require.Equal(t, "application/json", h.Get("Content-Type"))
	require.True(t, strings.HasPrefix(h.Get("User-Agent"), webhookhttp.UserAgentPrefix))
	require.Equal(t, req.WebhookID.String(), h.Get("webhook-id"))
	require.Equal(t, "1764480000", h.Get("webhook-timestamp"))
	require.Equal(t, "v1a,c2lnbmF0dXJl", h.Get("webhook-signature"))
	require.Equal(t, string(req.Body), b.bodies[0])

	spans := b.spans.Named(webhookhttp.SpanName)
	require.Len(t, spans, 1)
	a := oteltest.Attrs(spans[0])
	require.Equal(t, "hooks.example.com", a[attr.ServerAddress].AsString())
	require.Equal(t, int64(429), a[attr.HTTPResponseStatusCode].AsInt64())
	require.Equal(t, "throttled", a[attr.Outcome].AsString())
	require.Equal(t, req.SubscriptionID.String(), a[attr.WebhookSubscriptionID].AsString())
	for _, kv := range spans[0].Attributes() {
		require.NotContains(t, kv.Value.String(), "/hooks/bothy", "no path in span attribute %s", kv.Key)
		require.NotContains(t, kv.Value.String(), "secret-path", "no query in span attribute %s", kv.Key)
	}
}

func TestSendToPrivateAddressIsBlockedWithoutRequest(t *testing.T) {
	t.Parallel()
	b := setup(t, false, func(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
	_, err := b.sender.Send(context.Background(), app.SignedRequest{SubscriptionID: ids.New(), URL: b.url, WebhookID: ids.New(), Body: []byte(`{}`)})
	var blocked *egress.BlockedError
	require.ErrorAs(t, err, &blocked)
	require.Equal(t, egress.ReasonAddressBlocked, blocked.Reason)
	require.Empty(t, b.got, "no request reached the receiver")
	spans := b.spans.Named(webhookhttp.SpanName)
	require.Len(t, spans, 1)
	a := oteltest.Attrs(spans[0])
	require.Equal(t, "blocked", a[attr.Outcome].AsString())
	_, hasStatus := a[attr.HTTPResponseStatusCode]
	require.False(t, hasStatus, "no status without a response")
	require.NotContains(t, err.Error(), "/hooks/bothy")
}

func TestSendSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t, true, func(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
	res, err := b.sender.Send(context.Background(), app.SignedRequest{SubscriptionID: ids.New(), URL: b.url, WebhookID: ids.New(), Body: []byte(`{}`)})
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, res.StatusCode)
	a := oteltest.Attrs(b.spans.Named(webhookhttp.SpanName)[0])
	require.Equal(t, "succeeded", a[attr.Outcome].AsString())
}
