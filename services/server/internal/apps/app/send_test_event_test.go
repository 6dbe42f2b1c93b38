package app_test

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/adapters/hmackey"
	"bothy/server/internal/apps/adapters/webhookhttp"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/buildinfo"
	"bothy/server/internal/platform/egress/egresstest"
	"bothy/server/internal/wire"
)

// testSends returns the test send use case over the world's modules and
// the delivery path's sender (the egress client with the fake resolver and
// the receiver's CA), with timeout as webhook.delivery_timeout.
func (b *bundle) testSends(t testing.TB, timeout time.Duration) *app.TestSends {
	t.Helper()
	s := b.w.Services
	provider, err := wire.NewSecretsProvider(s.Config)
	require.NoError(t, err)
	ts, err := app.NewTestSends(app.TestSendDeps{
		UnitOfWork: s.UnitOfWork, Authorizer: s.Authorizer, Audit: s.Audit, Installations: s.AppsStore, Store: s.SubscriptionStore,
		Keys: s.Keys, State: s.Instance, Master: hmackey.New(provider, s.Config.Webhook.HMACMasterKeyRef), Sender: b.sender, Clock: b.clock,
	}, app.TestSendOptions{DeliveryTimeout: timeout, SecretRotationOverlap: b.opts.SecretRotationOverlap})
	require.NoError(t, err)
	return ts
}

// deliveryCount counts the webhook_deliveries rows of sub.
func (b *bundle) deliveryCount(t testing.TB, sub ids.ID) int {
	t.Helper()
	var n int
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT count(*) FROM webhook_deliveries WHERE subscription_id = $1`, sub).Scan(&n))
	return n
}

// TestSendWebhookTest (ADR 0080): Robin's test of a subscription with HMAC
// reaches the TLS receiver at once as one POST signed exactly as a
// delivery (v1 verifies with the reference library and the whsec_ secret,
// v1a with crypto/ed25519 and the published key), with a fresh webhook-id
// and the body of D-M2-26-55. It leaves no delivery row, changes nothing of
// the subscription, works while paused, and is audited with the host and
// never the path. A receiver's 503 is a result, not a counted failure.
func TestSendWebhookTest(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{})
	created := b.create(t, ids.Zero, nil, true)
	sub := created.ID
	before := b.subscription(t, sub)
	tests := b.testSends(t, b.opts.DeliveryTimeout)

	got, err := tests.SendTest(b.robin(t), sub)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, got.StatusCode)
	require.Empty(t, got.Error)
	require.Empty(t, got.EgressReason)
	require.GreaterOrEqual(t, got.Duration, time.Duration(0))
	reqs := b.recv.requests()
	require.Len(t, reqs, 1, "one request, at once")
	r := reqs[0]
	require.Equal(t, got.WebhookID.String(), r.id)
	require.Equal(t, "application/json", r.contentType)
	require.Equal(t, webhookhttp.UserAgentPrefix+buildinfo.Version(), r.ua)
	require.Equal(t, strconv.FormatInt(b.now().Unix(), 10), r.timestamp)

	rec, err := b.w.Services.Instance.Load(bg)
	require.NoError(t, err)
	require.NotContains(t, string(r.body), "null")
	var body map[string]any
	require.NoError(t, json.Unmarshal(r.body, &body))
	require.Equal(t, map[string]any{
		"id": got.WebhookID.String(), "type": "webhook.test", "occurred_at": b.now().Format("2006-01-02T15:04:05.000000Z07:00"),
		"payload":    map[string]any{"subscription_id": sub.String(), "app_id": b.appID.String()},
		"sync_epoch": rec.SyncEpoch.String(),
	}, body, "an envelope without seq and resource")

	wh, err := standardwebhooks.NewWebhook(created.HMACSecret)
	require.NoError(t, err)
	h := http.Header{}
	h.Set("webhook-id", r.id)
	h.Set("webhook-timestamp", r.timestamp)
	h.Set("webhook-signature", r.sig)
	require.NoError(t, wh.Verify(r.body, h), "v1 verifies with the reference library")
	require.Equal(t, 1, b.verifyV1A(t, r), "v1a verifies with crypto/ed25519 and the published key")

	require.Zero(t, b.deliveryCount(t, sub), "no delivery row")
	require.Equal(t, before, b.subscription(t, sub), "the subscription is as it was")

	entries := audittest.List(t, b.db.App, audittest.Filter{Action: "webhook_out.test", Outcome: "allow"})
	require.Len(t, entries, 1)
	require.Equal(t, "app", entries[0].ResourceKind)
	require.Equal(t, b.appID, entries[0].ResourceID)
	require.Equal(t, map[string]any{"subscription_id": sub.String(), "app_id": b.appID.String(),
		"webhook_id": got.WebhookID.String(), "host": egresstest.DefaultHost}, entries[0].Details)
	var rows string
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT coalesce(string_agg(row_to_json(a)::text, ''), '') FROM audit_events a`).Scan(&rows))
	require.NotContains(t, rows, "secret-path", "no path or query in the audit trail")
	require.NotContains(t, rows, r.sig, "no signature in the audit trail")

	t.Run("a second test has a webhook-id of its own, also while paused, and a 503 is only a result", func(t *testing.T) {
		b.setState(t, sub, apps.SubscriptionPaused)
		paused := b.subscription(t, sub)
		b.recv.status(http.StatusServiceUnavailable)
		again, err := tests.SendTest(b.robin(t), sub)
		require.NoError(t, err)
		require.NotEqual(t, got.WebhookID, again.WebhookID)
		require.Equal(t, http.StatusServiceUnavailable, again.StatusCode)
		require.Equal(t, apps.LastErrorThrottled, again.Error)
		require.Len(t, b.recv.requests(), 2)
		require.Zero(t, b.deliveryCount(t, sub))
		require.Equal(t, paused, b.subscription(t, sub), "no failure counted, the state kept")
	})

	t.Run("a receiver that does not answer in time is a timeout", func(t *testing.T) {
		b.recv.answer(func(_ int, _ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		late, err := b.testSends(t, 200*time.Millisecond).SendTest(b.robin(t), sub)
		require.NoError(t, err)
		require.Zero(t, late.StatusCode)
		require.Equal(t, apps.LastErrorTimeout, late.Error)
		require.Empty(t, late.EgressReason)
	})
}

// TestSendWebhookTestRefusedPrivateAddress (red team "webhooks to private
// targets"): the receiver's host resolves to loopback or RFC 1918 without
// an allow_private entry. The egress guard refuses before any byte leaves:
// the answer names address_blocked as error and egress reason, nothing
// reaches the receiver, bothy.egress.blocked counts it, and the test is
// audited all the same (the entry is written before the request).
func TestSendWebhookTestRefusedPrivateAddress(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{blockPrivate: true})
	tests := b.testSends(t, b.opts.DeliveryTimeout)
	for i, addr := range []string{"127.0.0.1", "10.1.2.3"} {
		b.resolver.Set(egresstest.DefaultHost, netip.MustParseAddr(addr))
		got, err := tests.SendTest(b.robin(t), b.sub)
		require.NoError(t, err)
		require.Zero(t, got.StatusCode, addr)
		require.Equal(t, apps.LastErrorAddressBlocked, got.Error, addr)
		require.Equal(t, "address_blocked", got.EgressReason, addr)
		require.Equal(t, int64(i+1), b.metrics.Blocked(t, "webhook", "address_blocked"))
	}
	require.Empty(t, b.recv.requests(), "no connection reaches the receiver")
	require.Zero(t, b.deliveryCount(t, b.sub))
	require.Len(t, audittest.List(t, b.db.App, audittest.Filter{Action: "webhook_out.test", Outcome: "allow"}), 2)
}

// TestSendWebhookTestRefusals: anyone but an owner gets exactly the
// not_found of an unknown subscription; after an uninstall it is conflict app_not_installed. None of them sends
// or audits an allow.
func TestSendWebhookTestRefusals(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{})
	tests := b.testSends(t, b.opts.DeliveryTimeout)

	_, err := tests.SendTest(b.w.As(t, b.w.Alex.Token), b.sub)
	require.Equal(t, errs.CodeNotFound, errs.CodeOf(err))
	_, err = tests.SendTest(b.robin(t), ids.New())
	require.Equal(t, errs.CodeNotFound, errs.CodeOf(err))
	_, err = tests.SendTest(b.w.As(t, b.w.RobinPersonalToken), b.sub)
	require.Equal(t, errs.CodeNotFound, errs.CodeOf(err), "a personal token never reaches an owner-only action")

	require.NoError(t, b.w.Services.Apps.UninstallApp(b.robin(t), b.appID))
	_, err = tests.SendTest(b.robin(t), b.sub)
	require.Equal(t, errs.CodeConflict, errs.CodeOf(err))
	require.Equal(t, "app_not_installed", errs.ReasonOf(err))

	require.Empty(t, b.recv.requests())
	require.Empty(t, audittest.List(t, b.db.App, audittest.Filter{Action: "webhook_out.test", Outcome: "allow"}))
	require.Len(t, audittest.List(t, b.db.App, audittest.Filter{Action: "webhook_out.test", Outcome: "deny"}), 2,
		"the denials of Alex and of the personal token (R-AZ-04)")
}
