package httpapi_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/adapters/hmackey"
	"bothy/server/internal/apps/adapters/httpapi"
	"bothy/server/internal/apps/adapters/webhookhttp"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/webhookstest"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/egress"
	"bothy/server/internal/platform/egress/egresstest"
	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/wire"
	"bothy/server/test/harness"
)

// otherTestHost is an allowed host without an allow_private entry.
const otherTestHost = "other.example.com"

// testSendServer is the strict server of the test send tests.
type testSendServer struct {
	*httpapi.TestSendHandlers
	harness.OtherModules
}

// testSendBundle is the webhook world with sendWebhookTest served through
// the real chain, sending through an egress client whose fake resolver
// answers hooks.example.com with resolve, to a TLS receiver on 127.0.0.1.
type testSendBundle struct {
	*whBundle
	resolver *egresstest.Resolver
	sub      ids.ID // a subscription to the receiver
	// otherURL is an allowed address on otherTestHost, which resolves to
	// an RFC 1918 address without an allow_private entry.
	otherURL string
	mu       sync.Mutex
	got      []http.Header
}

func setupTestSend(t *testing.T) *testSendBundle {
	t.Helper()
	tb := &testSendBundle{}
	srv := egresstest.NewTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tb.mu.Lock()
		tb.got = append(tb.got, r.Header.Clone())
		tb.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}), egresstest.DefaultHost)
	hostPort := fmt.Sprintf("%s:%d", egresstest.DefaultHost, srv.Port)
	tb.otherURL = fmt.Sprintf("https://%s:%d/bothy/test", otherTestHost, srv.Port)
	hosts, err := hostlist.Parse([]string{"hooks.example.com", hostPort, fmt.Sprintf("%s:%d", otherTestHost, srv.Port)})
	require.NoError(t, err)
	private, err := hostlist.Parse([]string{hostPort + ";allow_private"})
	require.NoError(t, err)
	db := pgtest.New(t)
	w := webhookstest.Build(t, db, func(cfg *wire.Config) { cfg.Webhook.AllowedHosts = hosts })
	tb.resolver = egresstest.NewResolver(map[string][]netip.Addr{
		egresstest.DefaultHost: {netip.MustParseAddr("127.0.0.1")}, otherTestHost: {netip.MustParseAddr("10.1.2.3")},
	})
	client, err := egress.New(egress.Options{
		Purpose: "webhook", Hosts: egress.NewHostPolicy(hosts), Private: private, Schemes: []string{"https"},
		Redirects: egress.RedirectNever, Timeout: w.Services.Config.Webhook.DeliveryTimeout, MaxResponseBytes: 4096, RootCAs: srv.RootCAs,
		MaxIdleConnsPerHost: w.Services.Config.Egress.MaxIdleConnsPerHost, IdleConnTimeout: w.Services.Config.Egress.IdleConnTimeout,
	}, egress.Deps{Resolver: tb.resolver, Meter: metricnoop.NewMeterProvider(), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	s := w.Services
	provider, err := wire.NewSecretsProvider(s.Config)
	require.NoError(t, err)
	tests, err := app.NewTestSends(app.TestSendDeps{
		UnitOfWork: s.UnitOfWork, Authorizer: s.Authorizer, Audit: s.Audit, Installations: s.AppsStore, Store: s.SubscriptionStore,
		Keys: s.Keys, State: s.Instance, Master: hmackey.New(provider, s.Config.Webhook.HMACMasterKeyRef),
		Sender: webhookhttp.NewSender(client, tracenoop.NewTracerProvider()), Clock: w.Clock,
	}, app.TestSendOptions{DeliveryTimeout: s.Config.Webhook.DeliveryTimeout, SecretRotationOverlap: s.Config.Webhook.SecretRotationOverlap})
	require.NoError(t, err)

	env := httpservertest.New(t, db, httpservertest.Options())
	h, err := httpapi.NewTestSendHandlers(tests)
	require.NoError(t, err)
	harness.MountAPI(t, env, testSendServer{TestSendHandlers: h}, h, []string{"sendWebhookTest"})
	tb.whBundle = &whBundle{env: env, w: w}
	created, err := s.Webhooks.CreateSubscription(w.As(t, w.Robin.Token), apps.CreateSubscription{AppID: w.Tracker.ID,
		URL: "https://" + hostPort + "/bothy/test?token=secret-path", EventTypes: []string{"message.created"}})
	require.NoError(t, err)
	tb.sub = created.ID
	return tb
}

func (tb *testSendBundle) received() []http.Header {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]http.Header(nil), tb.got...)
}

// TestSendWebhookTestOperation is the operation sendWebhookTest (ADR 0080)
// over the real chain and a real TLS receiver behind the fake resolver:
// 200 with the receiver's status and a webhook-id that arrived as the
// request's; the refusal of a private address as a result naming the
// egress reason; an Idempotency-Key answered 400 with reason and pointer
// before anything is sent; 404 for anyone but an owner exactly as for an
// unknown subscription; no delivery row in any case.
func TestSendWebhookTestOperation(t *testing.T) {
	t.Parallel()
	b := setupTestSend(t)
	w := b.w
	target := "/webhook-subscriptions/" + b.sub.String() + "/test"

	got := body(t, b.do(t, w.Robin.Token, "POST", target, nil), http.StatusOK, "WebhookTestResult")
	require.Equal(t, float64(http.StatusNoContent), got["status_code"])
	require.NotContains(t, got, "error")
	require.NotContains(t, got, "egress_reason")
	require.Contains(t, got, "duration_ms")
	recv := b.received()
	require.Len(t, recv, 1)
	require.Equal(t, got["webhook_id"], recv[0].Get("webhook-id"))
	require.NotEmpty(t, recv[0].Get("webhook-signature"))

	t.Run("a private address is refused before any byte leaves", func(t *testing.T) {
		other, err := w.Services.Webhooks.CreateSubscription(w.As(t, w.Robin.Token), apps.CreateSubscription{AppID: w.Tracker.ID,
			URL: b.otherURL, EventTypes: []string{"message.created"}})
		require.NoError(t, err)
		refused := body(t, b.do(t, w.Robin.Token, "POST", "/webhook-subscriptions/"+other.ID.String()+"/test", nil),
			http.StatusOK, "WebhookTestResult")
		require.Equal(t, "address_blocked", refused["error"])
		require.Equal(t, "address_blocked", refused["egress_reason"])
		require.NotContains(t, refused, "status_code")
		require.Len(t, b.received(), 1, "nothing reached the receiver")
	})

	t.Run("an Idempotency-Key is refused before anything is sent", func(t *testing.T) {
		p := httpservertest.RequireProblem(t, b.do(t, w.Robin.Token, "POST", target, nil, "Idempotency-Key", "test-1"),
			errs.CodeValidationFailed, "idempotency_not_supported", "header/Idempotency-Key")
		require.Equal(t, []string{"not_supported"}, itemCodes(p))
		require.Len(t, b.received(), 1)
	})

	t.Run("anyone but an owner gets exactly the answer of an unknown subscription", func(t *testing.T) {
		sameProblem(t, b.do(t, w.Alex.Token, "POST", target, nil),
			b.do(t, w.Alex.Token, "POST", "/webhook-subscriptions/"+unknownID+"/test", nil))
		httpservertest.RequireProblem(t, b.do(t, w.RobinPersonalToken, "POST", target, nil), errs.CodeNotFound, "")
		httpservertest.RequireProblem(t, b.do(t, w.Robin.Token, "POST", "/webhook-subscriptions/"+unknownID+"/test", nil), errs.CodeNotFound, "")
		require.Len(t, b.received(), 1)
	})

	var rows int
	require.NoError(t, w.Services.DB.App.QueryRow(t.Context(), `SELECT count(*) FROM webhook_deliveries`).Scan(&rows))
	require.Zero(t, rows, "a test send leaves no delivery row")
	require.Len(t, audittest.List(t, w.Services.DB.App, audittest.Filter{Action: "webhook_out.test", Outcome: "allow"}), 2,
		"the test and the refused one; the refusals of the chain and the authorizer wrote no allow")
}
