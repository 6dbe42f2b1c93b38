package app_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/adapters/webhookhttp"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/authz"
	"bothy/server/internal/instance"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/buildinfo"
	eventsync "bothy/server/internal/sync"
	syncpg "bothy/server/internal/sync/adapters/postgres"
)

// verifyV1A checks every v1a entry of header against the webhook_out keys
// published by the instance (next, active, retiring), decoded from their
// whpk_ form as a receiver would, and returns how many verified.
func (b *bundle) verifyV1A(t *testing.T, r received) int {
	t.Helper()
	keys, err := b.w.Services.Keys.PublicKeys(bg, instance.PurposeWebhookOut)
	require.NoError(t, err)
	ts, err := strconv.ParseInt(r.timestamp, 10, 64)
	require.NoError(t, err)
	content := webhook.SignedContent(ids.MustParse(r.id), ts, r.body)
	verified := 0
	for _, entry := range strings.Split(r.sig, " ") {
		scheme, sig, ok := strings.Cut(entry, ",")
		require.True(t, ok)
		if scheme != webhook.SchemeV1A {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(sig)
		require.NoError(t, err)
		for _, k := range keys {
			der, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(instance.FormatWebhookPublicKey(k.Key), instance.WebhookPublicKeyPrefix))
			require.NoError(t, err)
			pub, err := x509.ParsePKIXPublicKey(der)
			require.NoError(t, err)
			if ed25519.Verify(pub.(ed25519.PublicKey), content, raw) {
				verified++
			}
		}
	}
	return verified
}

// TestWebhookDeliveryG10 is G10, part 2: a real delivery through the
// consumer round, the job in role worker and the egress client verifies
// with the Standard Webhooks reference library (v1) and crypto/ed25519 with
// the published key (v1a).
func TestWebhookDeliveryG10(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{worker: true, realClock: true})
	// Tracker's own subscription waits; the one with HMAC receives.
	b.setState(t, b.sub, apps.SubscriptionPaused)
	created := b.create(t, ids.Zero, nil, true)
	sub := created.ID
	require.Equal(t, []string{"v1a", "v1"}, created.SignatureSchemes)
	before := time.Now().Unix()
	seq := b.post(t, b.w.Alex, b.w.Eskalation, "Sam, the printer says \"PC LOAD LETTER\" \u00e4\u00f6\u00fc")
	b.runRound(t)
	got := b.recv.wait(t, 1)
	after := time.Now().Unix()
	var rows []deliveryRow
	eventually(t, "the delivery is recorded", func() bool {
		rows = b.deliveries(t, sub)
		return len(rows) == 1 && rows[0].Status == "succeeded"
	})
	require.Len(t, got, 1)
	r := got[0]

	ev, ok, err := syncpg.NewLog(b.db.App).EventByKey(bg, eventsync.EventKey{Seq: seq, OccurredAt: rows[0].EventAt})
	require.NoError(t, err)
	require.True(t, ok, "the row holds the event's whole key")
	rec, err := b.w.Services.Instance.Load(bg)
	require.NoError(t, err)
	want, err := json.Marshal(ev.Envelope(eventsync.DeliveryFields{SyncEpoch: rec.SyncEpoch}))
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(r.body), "the body is the envelope of the stored event with sync_epoch")
	require.NotContains(t, string(r.body), "null")
	var body map[string]any
	require.NoError(t, json.Unmarshal(r.body, &body))
	require.Equal(t, rec.SyncEpoch.String(), body["sync_epoch"])

	require.Equal(t, "application/json", r.contentType)
	require.Equal(t, webhookhttp.UserAgentPrefix+buildinfo.Version(), r.ua)
	require.Equal(t, ev.ID.String(), r.id, "webhook-id is the event ID")
	ts, err := strconv.ParseInt(r.timestamp, 10, 64)
	require.NoError(t, err)
	require.True(t, ts >= before && ts <= after, "webhook-timestamp is the time of the attempt")

	require.Equal(t, webhook.FormatSecret(webhook.DeriveHMACKey(b.master, sub, 0)), created.HMACSecret)
	wh, err := standardwebhooks.NewWebhook(created.HMACSecret)
	require.NoError(t, err)
	h := http.Header{}
	h.Set("webhook-id", r.id)
	h.Set("webhook-timestamp", r.timestamp)
	h.Set("webhook-signature", r.sig)
	require.NoError(t, wh.Verify(r.body, h), "v1 verifies with the reference library")
	require.Equal(t, 1, b.verifyV1A(t, r), "v1a verifies with crypto/ed25519 and the published key")
	changed := bytes.Replace(r.body, []byte("printer"), []byte("Printer"), 1)
	require.Error(t, wh.Verify(changed, h), "a changed body fails v1")
	require.Zero(t, b.verifyV1A(t, received{id: r.id, timestamp: r.timestamp, sig: r.sig, body: changed}), "and v1a")
	schemes := []string{}
	for _, entry := range strings.Split(r.sig, " ") {
		scheme, _, _ := strings.Cut(entry, ",")
		schemes = append(schemes, scheme)
	}
	require.Equal(t, []string{"v1a", "v1"}, schemes, "v1a first, then v1")

	row := b.deliveries(t, sub)[0]
	require.Equal(t, "succeeded", row.Status)
	require.NotNil(t, row.ResponseCode)
	require.Equal(t, http.StatusOK, *row.ResponseCode)
	require.NotNil(t, row.DeliveredAt)
	require.Nil(t, row.NextAttemptAt)
	require.Nil(t, row.LastError)
	require.Equal(t, 1, row.Attempt)
	s := b.subscription(t, sub)
	require.Equal(t, seq, s.LastDeliveredSeq)
	signer, err := b.w.Services.Keys.Signer(bg, instance.PurposeWebhookOut)
	require.NoError(t, err)
	require.Equal(t, signer.KeyID(), s.SigningKeyKID)
}

// TestAZM49 (07 11.1): Tracker is subscribed to message.created and holds
// G-6 on Eskalation only. The round routes by rights (D-M2-26-35): the
// Allgemein event, which Tracker cannot see, leaves no row at all; exactly
// the Eskalation event goes out; nothing is counted and no denial is
// audited.
func TestAZM49(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{})
	sub := b.sub
	allgemein := b.post(t, b.w.Alex, b.w.Allgemein, "Alex in Allgemein")
	eskalation := b.post(t, b.w.Alex, b.w.Eskalation, "Alex in Eskalation")
	require.Less(t, allgemein, eskalation)
	b.runRound(t)
	b.deliver(t, sub)

	got := b.recv.requests()
	require.Len(t, got, 1, "exactly the Eskalation event goes out")
	rows := b.deliveries(t, sub)
	require.Len(t, rows, 1, "the Allgemein event leaves no row")
	require.Equal(t, rows[0].EventID.String(), got[0].id)
	require.Equal(t, eskalation, rows[0].EventSeq)
	require.Equal(t, "succeeded", rows[0].Status)
	require.Zero(t, b.subscription(t, sub).ConsecutiveFailures, "not counted as a failure")
	require.Empty(t, audittest.List(t, b.db.App, audittest.Filter{Outcome: "deny"}), "the filter mode writes no denial")
	require.Empty(t, b.transitions(t))
}

// TestDeliveryRevokedRightIsDeadWithoutRequest (ADR 0051 "Confirmation"):
// the round creates the row, the owner revokes G-6 before the job runs, and
// the job ends the delivery as dead without a request; after a new grant
// the next event goes out.
func TestDeliveryRevokedRightIsDeadWithoutRequest(t *testing.T) {
	t.Parallel()
	b, sub := withPending(t, options{}, "before the revocation")
	require.NoError(t, b.w.Services.Apps.DeleteAppGrant(b.robin(t), b.appID, b.w.G6.ID))
	b.deliver(t, sub)

	require.Empty(t, b.recv.requests(), "a revoked right sends nothing")
	rows := b.deliveries(t, sub)
	require.Len(t, rows, 1)
	require.Equal(t, "dead", rows[0].Status)
	require.Equal(t, "not_authorized", *rows[0].LastError)
	require.Zero(t, rows[0].Attempt)

	_, err := b.w.Services.Apps.CreateAppGrant(b.robin(t), app.CreateAppGrant{AppID: b.appID, Level: authz.LevelRead,
		SpaceID: b.w.Support, ChannelID: b.w.Eskalation})
	require.NoError(t, err)
	b.postAndRound(t, "after the new grant")
	b.deliver(t, sub)
	got := b.recv.requests()
	require.Len(t, got, 1)
	rows = b.deliveries(t, sub)
	require.Equal(t, rows[1].EventID.String(), got[0].id)
	require.Equal(t, "succeeded", rows[1].Status)
}

// TestDeliveryScopeRemovedIsDead (red team "exceeding the scopes of an
// app"): setAppScopes removes messages:read between round and job.
func TestDeliveryScopeRemovedIsDead(t *testing.T) {
	t.Parallel()
	b, sub := withPending(t, options{}, "Tracker may no longer read this")
	_, err := b.w.Services.Apps.SetAppScopes(b.robin(t), app.SetAppScopes{AppID: b.appID, Scopes: []string{"events:subscribe", "messages:write"}})
	require.NoError(t, err)
	b.deliver(t, sub)

	require.Empty(t, b.recv.requests())
	rows := b.deliveries(t, sub)
	require.Equal(t, "dead", rows[0].Status)
	require.Equal(t, "not_authorized", *rows[0].LastError)
	require.Zero(t, rows[0].Attempt)
	require.Zero(t, b.subscription(t, sub).ConsecutiveFailures)
}

// TestDeliveryStrictOrder: the second and third event go out only after
// the first was accepted, in seq order.
func TestDeliveryStrictOrder(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{})
	sub := b.sub
	for _, text := range []string{"first", "second", "third"} {
		b.post(t, b.w.Alex, b.w.Eskalation, text)
	}
	b.runRound(t)
	b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
		if n < 2 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	rows := b.deliveries(t, sub)
	for range 2 {
		b.deliver(t, sub)
		head := b.deliveries(t, sub)[0]
		require.Equal(t, "pending", head.Status)
		b.deliver(t, sub) // not due yet: nothing is sent
		b.advance(t, head.NextAttemptAt.Sub(b.now()))
	}
	b.deliver(t, sub)

	var order []string
	for _, r := range b.recv.requests() {
		order = append(order, r.id)
	}
	first, second, third := rows[0].EventID.String(), rows[1].EventID.String(), rows[2].EventID.String()
	require.Equal(t, []string{first, first, first, second, third}, order)
	for _, r := range b.deliveries(t, sub) {
		require.Equal(t, "succeeded", r.Status)
	}
	require.Equal(t, rows[2].EventSeq, b.subscription(t, sub).LastDeliveredSeq)
}

// TestDelivery410Disables: 410 fails the delivery and disables the
// subscription (cause gone); nothing goes out until a re-enable.
func TestDelivery410Disables(t *testing.T) {
	t.Parallel()
	b, sub := withPending(t, options{}, "to a receiver that is gone")
	b.recv.status(http.StatusGone)
	b.deliver(t, sub)

	row := b.deliveries(t, sub)[0]
	require.Equal(t, "failed", row.Status)
	require.Equal(t, http.StatusGone, *row.ResponseCode)
	require.Equal(t, "gone", *row.LastError)
	require.Nil(t, row.NextAttemptAt)
	s := b.subscription(t, sub)
	require.Equal(t, "disabled", s.State)
	require.NotNil(t, s.DisabledAt)
	require.Zero(t, s.ConsecutiveFailures, "410 is not a counted failure")
	audits := b.transitions(t)
	require.Len(t, audits, 1)
	require.Equal(t, "system", audits[0].ActorKind)
	require.Equal(t, "app", audits[0].ResourceKind)
	require.Equal(t, b.appID, audits[0].ResourceID)
	require.Equal(t, map[string]any{"subscription_id": sub.String(), "from_state": "active", "to_state": "disabled", "cause": "gone"},
		audits[0].Details)
	warned := false
	for _, r := range b.log.Records() {
		if r.Message == "webhook subscription state changed" {
			warned = true
			require.Equal(t, map[string]string{"bothy.webhook_subscription.id": sub.String(), "bothy.reason": "gone"}, r.Attrs)
		}
	}
	require.True(t, warned)

	b.recv.status(http.StatusOK)
	b.postAndRound(t, "while disabled")
	b.deliver(t, sub)
	require.Len(t, b.recv.requests(), 1, "no further request while disabled")

	b.setState(t, sub, apps.SubscriptionActive)
	b.postAndRound(t, "after the re-enable")
	b.deliver(t, sub)
	got := b.recv.requests()
	require.Len(t, got, 2)
	rows := b.deliveries(t, sub)
	require.Len(t, rows, 2, "the event that arrived while disabled got no row")
	require.Equal(t, rows[1].EventID.String(), got[1].id)
	require.Equal(t, "succeeded", rows[1].Status)
}

// TestDeliveryRetryAfter: throttles (429, 502, 503, 504) wait for the
// larger of backoff and Retry-After, are not counted, schedule their job at
// next_attempt_at, and are cut to the retry deadline.
func TestDeliveryRetryAfter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		header func(now time.Time) string
		wait   time.Duration
	}{
		{"429 with delta-seconds", http.StatusTooManyRequests, func(time.Time) string { return "120" }, 120 * time.Second},
		{"503 with an HTTP-date", http.StatusServiceUnavailable,
			func(now time.Time) string { return now.Add(5 * time.Minute).UTC().Format(http.TimeFormat) }, 5 * time.Minute},
		{"502 with delta-seconds", http.StatusBadGateway, func(time.Time) string { return "60" }, time.Minute},
		{"504 with delta-seconds", http.StatusGatewayTimeout, func(time.Time) string { return "90" }, 90 * time.Second},
		{"a Retry-After beyond the deadline is cut to it", http.StatusTooManyRequests, func(time.Time) string { return "7200" }, time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := deliveryWorld(t, options{})
			sub := b.sub
			b.postAndRound(t, "please slow down")
			created := b.deliveries(t, sub)[0].CreatedAt
			// The HTTP-date has whole seconds; attempt at a whole second so
			// the header means exactly tc.wait.
			b.advance(t, b.now().Truncate(time.Second).Add(time.Second).Sub(b.now()))
			now := b.now()
			b.recv.answer(func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Retry-After", tc.header(now))
				w.WriteHeader(tc.status)
			})
			b.deliver(t, sub)

			row := b.deliveries(t, sub)[0]
			require.Equal(t, "pending", row.Status)
			require.Equal(t, "throttled", *row.LastError)
			require.Equal(t, tc.status, *row.ResponseCode)
			want := now.Add(tc.wait)
			if deadline := created.Add(b.opts.Retry.MaxAge); want.After(deadline) {
				want = deadline
			}
			require.True(t, row.NextAttemptAt.Equal(want), "next_attempt_at %s, want %s", row.NextAttemptAt, want)
			require.Zero(t, b.subscription(t, sub).ConsecutiveFailures, "a throttle is not counted")
			jobs := b.w.Scheduled(t, sub)
			require.True(t, jobs[len(jobs)-1].Equal(want), "the retry job is scheduled at next_attempt_at")
		})
	}
}

// TestDeliveryBackoffAndConsecutiveFailures: every retry waits within the
// backoff interval of D-M2-26-7; at webhook.max_consecutive_failures
// the subscription is disabled with the head left pending, and a re-enable
// sends the head first.
func TestDeliveryBackoffAndConsecutiveFailures(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{change: func(o *app.DeliveryOptions) { o.MaxConsecutiveFailures = 4 }})
	sub := b.sub
	b.post(t, b.w.Alex, b.w.Eskalation, "first")
	b.postAndRound(t, "second")
	b.recv.status(http.StatusInternalServerError)
	for n := 1; n <= 4; n++ {
		now := b.now()
		b.deliver(t, sub)
		head := b.deliveries(t, sub)[0]
		require.Equal(t, "pending", head.Status)
		require.Equal(t, n, head.Attempt)
		require.Equal(t, "http_status", *head.LastError)
		require.Equal(t, http.StatusInternalServerError, *head.ResponseCode)
		upper := min(b.opts.Retry.Cap, b.opts.Retry.Base<<(n-1))
		wait := head.NextAttemptAt.Sub(now)
		require.True(t, wait >= b.opts.Retry.Base && wait <= upper, "attempt %d waits %s, want [%s, %s]", n, wait, b.opts.Retry.Base, upper)
		require.Equal(t, n, b.subscription(t, sub).ConsecutiveFailures)
		b.advance(t, wait)
	}
	s := b.subscription(t, sub)
	require.Equal(t, "disabled", s.State)
	require.NotNil(t, s.DisabledAt)
	audits := b.transitions(t)
	require.Len(t, audits, 1)
	require.Equal(t, "max_consecutive_failures", audits[0].Details["cause"])
	require.Equal(t, "pending", b.deliveries(t, sub)[0].Status, "the head stays pending")
	b.deliver(t, sub)
	require.Len(t, b.recv.requests(), 4, "nothing goes out while disabled")

	b.recv.status(http.StatusOK)
	b.setState(t, sub, apps.SubscriptionActive)
	b.deliver(t, sub)
	rows := b.deliveries(t, sub)
	got := b.recv.requests()
	require.Len(t, got, 6)
	require.Equal(t, rows[0].EventID.String(), got[4].id, "the head goes first after the re-enable")
	require.Equal(t, rows[1].EventID.String(), got[5].id)
	require.Zero(t, b.subscription(t, sub).ConsecutiveFailures)
}

// TestDeliveryDeadAfterRetryMaxAge: a failure after created_at +
// webhook.retry_max_age makes the delivery dead and disables the
// subscription; after a re-enable the following event goes out.
func TestDeliveryDeadAfterRetryMaxAge(t *testing.T) {
	t.Parallel()
	b, sub := withPending(t, options{}, "too late")
	b.recv.status(http.StatusInternalServerError)
	b.deliver(t, sub)
	b.advance(t, b.opts.Retry.MaxAge)
	b.deliver(t, sub)

	row := b.deliveries(t, sub)[0]
	require.Equal(t, "dead", row.Status)
	require.Equal(t, "http_status", *row.LastError)
	require.Equal(t, 2, row.Attempt)
	require.Nil(t, row.NextAttemptAt)
	s := b.subscription(t, sub)
	require.Equal(t, "disabled", s.State)
	audits := b.transitions(t)
	require.Len(t, audits, 1)
	require.Equal(t, "retry_max_age", audits[0].Details["cause"])

	b.recv.status(http.StatusOK)
	b.setState(t, sub, apps.SubscriptionActive)
	b.postAndRound(t, "the following event")
	b.deliver(t, sub)
	got := b.recv.requests()
	require.Len(t, got, 3)
	require.Equal(t, b.deliveries(t, sub)[1].EventID.String(), got[2].id)
	require.Equal(t, "succeeded", b.deliveries(t, sub)[1].Status)
}

// TestDeliveryUnsubscribedTypeIsDead (11 4.2 "removed events take effect
// immediately"): a type the subscription no longer names ends its queued
// head as dead with not_subscribed, without a request, and the next head
// goes out.
func TestDeliveryUnsubscribedTypeIsDead(t *testing.T) {
	t.Parallel()
	b, sub := withPending(t, options{}, "queued before the change")
	_, err := b.db.App.Exec(bg, `UPDATE webhook_subscriptions SET event_types = '{message.updated}' WHERE id = $1`, sub)
	require.NoError(t, err)
	b.deliver(t, sub)
	require.Empty(t, b.recv.requests())
	row := b.deliveries(t, sub)[0]
	require.Equal(t, "dead", row.Status)
	require.Equal(t, "not_subscribed", *row.LastError)
	require.Zero(t, row.Attempt)
	require.Zero(t, b.subscription(t, sub).ConsecutiveFailures)
}
