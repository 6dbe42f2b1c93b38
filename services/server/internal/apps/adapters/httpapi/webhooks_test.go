package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/apps/webhookstest"
	"bothy/server/internal/instance"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
)

// unknownID is an ID no row has.
const unknownID = "019ad3a0-7c00-7000-8000-000000000404"

func TestCreateWebhookSubscription(t *testing.T) {
	t.Parallel()
	b := setupWebhooks(t)
	w := b.w
	target := "/apps/" + w.Tracker.ID.String() + "/webhook-subscriptions"
	active, err := w.Services.Keys.Signer(context.Background(), instance.PurposeWebhookOut)
	require.NoError(t, err)
	before := len(b.manageEntries(t))

	t.Run("owner with fresh step-up gets 201 without HMAC", func(t *testing.T) {
		entries := b.manageEntries(t)
		sub := body(t, b.do(t, w.Robin.Token, "POST", target, map[string]any{
			"url": "https://HOOKS.example.com./bothy/plain?source=bothy", "event_types": []string{"message.created"}}),
			http.StatusCreated, "WebhookSubscriptionCreated")
		require.Equal(t, []any{"v1a"}, sub["signature_schemes"])
		require.Equal(t, active.KeyID(), sub["signing_key_kid"])
		require.NotContains(t, sub, "hmac_secret")
		require.Equal(t, w.Tracker.ID.String(), sub["app_id"])
		require.Equal(t, "https://hooks.example.com/bothy/plain?source=bothy", sub["url"], "the host is canonical")
		require.Equal(t, "active", sub["state"])
		require.Equal(t, false, sub["hmac_enabled"])
		require.NotContains(t, sub, "disabled_at")
		require.NotContains(t, sub, "hmac_rotated_at")

		e := b.newEntry(t, entries, "created")
		require.Equal(t, "hooks.example.com", e.Details["host"])
		require.Equal(t, sub["id"], e.Details["subscription_id"])
		require.Equal(t, w.Robin.ID, e.ActorID)
		for k, v := range e.Details {
			if s, ok := v.(string); ok {
				require.NotContains(t, s, "/bothy", k)
				require.NotContains(t, s, "source", k)
			}
		}
	})

	t.Run("with enable_hmac the secret appears once", func(t *testing.T) {
		key := []string{"Idempotency-Key", "create-hmac-1"}
		req := map[string]any{"url": "https://hooks.example.com/bothy/signed", "event_types": []string{"message.created"}, "enable_hmac": true}
		sub := body(t, b.do(t, w.Robin.Token, "POST", target, req, key...), http.StatusCreated, "WebhookSubscriptionCreated")
		require.Equal(t, []any{"v1a", "v1"}, sub["signature_schemes"])
		secret := str(sub, "hmac_secret")
		require.True(t, strings.HasPrefix(secret, "whsec_"), "whsec_ form")
		raw, err := webhook.ParseSecret(secret)
		require.NoError(t, err)
		id := ids.MustParse(str(sub, "id"))
		require.Equal(t, webhook.DeriveHMACKey(w.MasterKey(t), id, 0), raw, "derived, generation 0")

		replay := b.do(t, w.Robin.Token, "POST", target, req, key...)
		httpservertest.RequireProblem(t, replay, errs.CodeConflict, "one_time_secret")
		require.Equal(t, "true", replay.Header.Get(httpserver.ReplayHeader))
		httpservertest.RequireSecretAbsent(t, w.Services.DB.App, secret, "idempotency_keys", "webhook_subscriptions", "audit_events")
		httpservertest.RequireSecretAbsent(t, w.Services.DB.App, strings.TrimPrefix(secret, "whsec_"), "idempotency_keys")
	})

	t.Run("without HMAC the replay returns the stored 201", func(t *testing.T) {
		key := []string{"Idempotency-Key", "create-plain-1"}
		req := map[string]any{"url": "https://hooks.example.com/bothy/replayed", "event_types": []string{"message.created"}}
		first := body(t, b.do(t, w.Robin.Token, "POST", target, req, key...), http.StatusCreated, "WebhookSubscriptionCreated")
		resp := b.do(t, w.Robin.Token, "POST", target, req, key...)
		require.Equal(t, "true", resp.Header.Get(httpserver.ReplayHeader))
		require.Equal(t, first, body(t, resp, http.StatusCreated, "WebhookSubscriptionCreated"))
		subs, err := w.Services.Webhooks.ListSubscriptions(w.As(t, w.Robin.Token), w.Tracker.ID)
		require.NoError(t, err)
		n := 0
		for _, s := range subs {
			if strings.HasSuffix(s.URL, "/bothy/replayed") {
				n++
			}
		}
		require.Equal(t, 1, n, "the replay created nothing")
	})

	t.Run("address and event type defects", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			url     string
			types   []string
			code    errs.Code
			pointer string
			item    string
		}{
			{"a host not listed", "https://other.example.com/bothy", []string{"message.created"}, errs.CodeWebhookHostNotAllowed, "/url", "webhook_host_not_allowed"},
			{"a port not listed", "https://hooks.example.com:9443/bothy", []string{"message.created"}, errs.CodeWebhookHostNotAllowed, "/url", "webhook_host_not_allowed"},
			{"an http address", "http://hooks.example.com/bothy", []string{"message.created"}, errs.CodeValidationFailed, "/url", "https_required"},
			{"user info", "https://robin@hooks.example.com/bothy", []string{"message.created"}, errs.CodeValidationFailed, "/url", "userinfo_not_allowed"},
			{"a type not granted", "https://hooks.example.com/bothy", []string{"channel.created"}, errs.CodeValidationFailed, "/event_types/0", "not_granted"},
			{"a type apps cannot subscribe", "https://hooks.example.com/bothy", []string{"message.created", "agent.invocation.requested"}, errs.CodeValidationFailed, "/event_types/1", "not_subscribable"},
		} {
			resp := b.do(t, w.Robin.Token, "POST", target, map[string]any{"url": tc.url, "event_types": tc.types})
			p := httpservertest.RequireProblem(t, resp, tc.code, "", tc.pointer)
			require.Equal(t, []string{tc.item}, itemCodes(p), tc.name)
		}
	})

	t.Run("an app without installation is a conflict", func(t *testing.T) {
		helper, err := w.Services.Apps.RegisterApp(w.As(t, w.Robin.Token), appRegister("Helper"))
		require.NoError(t, err)
		resp := b.do(t, w.Robin.Token, "POST", "/apps/"+helper.ID.String()+"/webhook-subscriptions",
			map[string]any{"url": "https://hooks.example.com/bothy", "event_types": []string{"message.created"}})
		httpservertest.RequireProblem(t, resp, errs.CodeConflict, "app_not_installed")
	})

	t.Run("Alex gets exactly the answer of an unknown app", func(t *testing.T) {
		req := map[string]any{"url": "https://hooks.example.com/bothy", "event_types": []string{"message.created"}}
		invisible := b.do(t, w.Alex.Token, "POST", target, req)
		unknown := b.do(t, w.Alex.Token, "POST", "/apps/"+unknownID+"/webhook-subscriptions", req)
		sameProblem(t, invisible, unknown)
		httpservertest.RequireProblem(t, b.do(t, w.Alex.Token, "POST", target, req), errs.CodeNotFound, "")
		httpservertest.RequireProblem(t, b.do(t, w.Robin.Token, "POST", "/apps/"+unknownID+"/webhook-subscriptions", req),
			errs.CodeNotFound, "")
	})

	t.Run("a personal token of the owner is not found", func(t *testing.T) {
		resp := b.do(t, w.RobinPersonalToken, "POST", target,
			map[string]any{"url": "https://hooks.example.com/bothy", "event_types": []string{"message.created"}})
		httpservertest.RequireProblem(t, resp, errs.CodeNotFound, "")
	})

	t.Run("an owner with a stale step-up must step up", func(t *testing.T) {
		w.Clock.Advance(w.Services.Config.Identity.StepUpMaxAge + time.Second)
		resp := b.do(t, w.Robin.Token, "POST", target,
			map[string]any{"url": "https://hooks.example.com/bothy", "event_types": []string{"message.created"}})
		httpservertest.RequireProblem(t, resp, errs.CodeStepUpRequired, "")
	})

	require.Len(t, b.manageEntries(t), before+3, "one entry per created subscription, none for refusals")
	for _, e := range audittest.List(t, w.Services.DB.App, audittest.Filter{Action: "webhook_out.manage", Outcome: "deny"}) {
		require.NotContains(t, e.Details, "host", "denials carry no address")
	}
}

// newEntry asserts that exactly one webhook_out.manage allow was written
// since before (entries of one clock instant have no order among
// themselves), with change, and returns it.
func (b *whBundle) newEntry(t *testing.T, before []audittest.Row, change string) audittest.Row {
	t.Helper()
	seen := map[ids.ID]bool{}
	for _, r := range before {
		seen[r.ID] = true
	}
	var fresh []audittest.Row
	for _, r := range b.manageEntries(t) {
		if !seen[r.ID] {
			fresh = append(fresh, r)
		}
	}
	require.Len(t, fresh, 1)
	require.Equal(t, change, fresh[0].Details["change"])
	return fresh[0]
}

// disable disables the subscription the way the delivery job's system
// transitions do: disabled_at set and failures counted.
func (b *whBundle) disable(t *testing.T, id ids.ID, failures int) {
	t.Helper()
	_, err := b.w.Services.DB.App.Exec(context.Background(),
		`UPDATE webhook_subscriptions SET state = 'disabled', disabled_at = $2, consecutive_failures = $3 WHERE id = $1`,
		id, b.w.Clock.Now(), failures)
	require.NoError(t, err)
}

func TestUpdateWebhookSubscription(t *testing.T) {
	t.Parallel()
	b := setupWebhooks(t)
	w := b.w
	sub := w.TrackerSubscription(t)
	target := "/webhook-subscriptions/" + sub.ID.String()
	later := w.Clock.Now().Add(time.Hour)
	head := w.InsertDelivery(t, sub.ID, w.Post(t, w.Alex.Token, w.Eskalation, "Printer on fire"), apps.DeliveryPending, later)
	next := w.InsertDelivery(t, sub.ID, w.Post(t, w.Alex.Token, w.Eskalation, "Still on fire"), apps.DeliveryPending, later)

	t.Run("pause and resume", func(t *testing.T) {
		before := b.manageEntries(t)
		paused := body(t, b.do(t, w.Robin.Token, "PATCH", target, map[string]any{"state": "paused"}), http.StatusOK, "WebhookSubscriptionCreated")
		require.Equal(t, "paused", paused["state"])
		require.NotContains(t, paused, "hmac_secret")
		b.newEntry(t, before, "paused")
		require.Empty(t, w.Scheduled(t, sub.ID), "a pause wakes nothing")

		w.Clock.Advance(time.Second)
		before = b.manageEntries(t)
		resumed := body(t, b.do(t, w.Robin.Token, "PATCH", target, map[string]any{"state": "active"}), http.StatusOK, "WebhookSubscriptionCreated")
		require.Equal(t, "active", resumed["state"])
		b.newEntry(t, before, "resumed")
		require.Equal(t, w.Clock.Now(), w.Delivery(t, head.ID).NextAttemptAt, "the head is due now")
		require.Equal(t, later, w.Delivery(t, next.ID).NextAttemptAt)
		require.Equal(t, []time.Time{webhookstest.AtOnce}, w.Scheduled(t, sub.ID), "a job is inserted")
	})

	t.Run("re-enable from disabled", func(t *testing.T) {
		b.disable(t, sub.ID, 5)
		w.Clock.Advance(time.Second)
		enabled := body(t, b.do(t, w.Robin.Token, "PATCH", target, map[string]any{"state": "active"}), http.StatusOK, "WebhookSubscriptionCreated")
		require.Equal(t, "active", enabled["state"])
		require.Equal(t, float64(0), enabled["consecutive_failures"], "failures are reset")
		require.NotContains(t, enabled, "disabled_at")
		require.Equal(t, w.Clock.Now(), w.Delivery(t, head.ID).NextAttemptAt, "the head is due now")
		require.Contains(t, w.Scheduled(t, sub.ID), webhookstest.AtOnce, "a job is inserted")
	})

	t.Run("pause from disabled", func(t *testing.T) {
		b.disable(t, sub.ID, 3)
		paused := body(t, b.do(t, w.Robin.Token, "PATCH", target, map[string]any{"state": "paused"}), http.StatusOK, "WebhookSubscriptionCreated")
		require.Equal(t, "paused", paused["state"])
		require.NotContains(t, paused, "disabled_at")
		body(t, b.do(t, w.Robin.Token, "PATCH", target, map[string]any{"state": "active"}), http.StatusOK, "WebhookSubscriptionCreated")
	})

	t.Run("a rate limit is set, bounded and removed", func(t *testing.T) {
		before := b.manageEntries(t)
		limited := body(t, b.do(t, w.Robin.Token, "PATCH", target, map[string]any{"max_per_second": 20}), http.StatusOK, "WebhookSubscriptionCreated")
		require.Equal(t, float64(20), limited["max_per_second"])
		e := b.newEntry(t, before, "updated")
		require.Equal(t, int64(20), e.Details["max_per_second"])

		// Above webhook.rate_limit_max (100), and above the contract's
		// bound: both validation_failed at the member, nothing changed.
		for _, n := range []int{101, 5000, -1} {
			resp := b.do(t, w.Robin.Token, "PATCH", target, map[string]any{"max_per_second": n})
			httpservertest.RequireProblem(t, resp, errs.CodeValidationFailed, "", "/max_per_second")
		}
		require.Equal(t, 20, w.TrackerSubscription(t).MaxPerSecond)

		removed := body(t, b.do(t, w.Robin.Token, "PATCH", target, map[string]any{"max_per_second": 0}), http.StatusOK, "WebhookSubscriptionCreated")
		require.Equal(t, float64(0), removed["max_per_second"])
	})

	t.Run("rotation shows the new secret once and overlaps the old one", func(t *testing.T) {
		created := body(t, b.do(t, w.Robin.Token, "POST", "/apps/"+w.Tracker.ID.String()+"/webhook-subscriptions",
			map[string]any{"url": "https://hooks.example.com/bothy/signed", "event_types": []string{"message.created"}, "enable_hmac": true}),
			http.StatusCreated, "WebhookSubscriptionCreated")
		id := ids.MustParse(str(created, "id"))
		old := str(created, "hmac_secret")
		w.Clock.Advance(time.Minute)
		rotatedAt := w.Clock.Now()
		key := []string{"Idempotency-Key", "rotate-1"}
		before := b.manageEntries(t)
		rotated := body(t, b.do(t, w.Robin.Token, "PATCH", "/webhook-subscriptions/"+id.String(), map[string]any{"rotate_hmac_secret": true}, key...),
			http.StatusOK, "WebhookSubscriptionCreated")
		require.Equal(t, float64(1), rotated["hmac_generation"])
		require.Equal(t, rotatedAt.Format(time.RFC3339), rotated["hmac_rotated_at"])
		secret := str(rotated, "hmac_secret")
		require.True(t, strings.HasPrefix(secret, "whsec_"))
		require.NotEqual(t, old, secret)
		e := b.newEntry(t, before, "rotated")
		require.Equal(t, int64(1), e.Details["hmac_generation"])
		require.Equal(t, true, e.Details["hmac_enabled"])

		replay := b.do(t, w.Robin.Token, "PATCH", "/webhook-subscriptions/"+id.String(), map[string]any{"rotate_hmac_secret": true}, key...)
		httpservertest.RequireProblem(t, replay, errs.CodeConflict, "one_time_secret")
		require.Equal(t, "true", replay.Header.Get(httpserver.ReplayHeader))
		httpservertest.RequireSecretAbsent(t, w.Services.DB.App, secret, "idempotency_keys", "webhook_subscriptions", "audit_events")

		// The signing set of a delivery follows from the stored row
		// (D-M2-26-10): inside webhook.secret_rotation_overlap the
		// new and the old generation, after it the new one only.
		stored, err := w.Services.Webhooks.ListSubscriptions(w.As(t, w.Robin.Token), w.Tracker.ID)
		require.NoError(t, err)
		var row apps.Subscription
		for _, s := range stored {
			if s.ID == id {
				row = s
			}
		}
		require.Equal(t, 1, row.HMACGeneration)
		require.Equal(t, rotatedAt, row.HMACRotatedAt)
		overlap := w.Services.Config.Webhook.SecretRotationOverlap
		master := w.MasterKey(t)
		secrets := func(at time.Time) []string {
			var out []string
			for _, g := range webhook.HMACGenerations(row.HMACGeneration, row.HMACRotatedAt, overlap, at) {
				out = append(out, webhook.FormatSecret(webhook.DeriveHMACKey(master, id, g)))
			}
			return out
		}
		require.Equal(t, []string{secret, old}, secrets(rotatedAt), "both generations right after the rotation")
		require.Equal(t, []string{secret, old}, secrets(rotatedAt.Add(overlap-time.Second)), "both inside the overlap")
		require.Equal(t, []string{secret}, secrets(rotatedAt.Add(overlap)), "only the new one after it")
	})

	t.Run("rotation without HMAC", func(t *testing.T) {
		resp := b.do(t, w.Robin.Token, "PATCH", target, map[string]any{"rotate_hmac_secret": true})
		p := httpservertest.RequireProblem(t, resp, errs.CodeValidationFailed, "", "/rotate_hmac_secret")
		require.Equal(t, []string{"hmac_not_enabled"}, itemCodes(p))
	})

	t.Run("a new address and new event types are checked", func(t *testing.T) {
		resp := b.do(t, w.Robin.Token, "PATCH", target, map[string]any{"url": "https://other.example.com/bothy"})
		httpservertest.RequireProblem(t, resp, errs.CodeWebhookHostNotAllowed, "", "/url")
		resp = b.do(t, w.Robin.Token, "PATCH", target, map[string]any{"event_types": []string{"channel.created"}})
		p := httpservertest.RequireProblem(t, resp, errs.CodeValidationFailed, "", "/event_types/0")
		require.Equal(t, []string{"not_granted"}, itemCodes(p))
		resp = b.do(t, w.Robin.Token, "PATCH", target, map[string]any{"url": "http://hooks.example.com/bothy", "rotate_hmac_secret": true})
		httpservertest.RequireProblem(t, resp, errs.CodeValidationFailed, "", "/url", "/rotate_hmac_secret")

		before := b.manageEntries(t)
		moved := body(t, b.do(t, w.Robin.Token, "PATCH", target, map[string]any{"url": "https://hooks.example.com:8443/bothy/v2"}),
			http.StatusOK, "WebhookSubscriptionCreated")
		require.Equal(t, "https://hooks.example.com:8443/bothy/v2", moved["url"])
		require.Equal(t, "hooks.example.com", b.newEntry(t, before, "updated").Details["host"])
	})

	t.Run("an empty body changes nothing", func(t *testing.T) {
		before := body(t, b.do(t, w.Robin.Token, "GET", "/apps/"+w.Tracker.ID.String()+"/webhook-subscriptions", nil), http.StatusOK, "WebhookSubscriptionList")
		n := len(b.manageEntries(t))
		w.Clock.Advance(time.Second)
		same := body(t, b.do(t, w.Robin.Token, "PATCH", target, map[string]any{}), http.StatusOK, "WebhookSubscriptionCreated")
		require.Equal(t, before["items"].([]any)[0], same)
		same = body(t, b.do(t, w.Robin.Token, "PATCH", target, map[string]any{"state": "active"}), http.StatusOK, "WebhookSubscriptionCreated")
		require.Equal(t, before["items"].([]any)[0], same, "the state it has already")
		require.Len(t, b.manageEntries(t), n)
	})

	t.Run("Alex gets exactly the answer of an unknown subscription", func(t *testing.T) {
		invisible := b.do(t, w.Alex.Token, "PATCH", target, map[string]any{"state": "paused"})
		unknown := b.do(t, w.Alex.Token, "PATCH", "/webhook-subscriptions/"+unknownID, map[string]any{"state": "paused"})
		sameProblem(t, invisible, unknown)
		httpservertest.RequireProblem(t, b.do(t, w.Alex.Token, "PATCH", target, map[string]any{}), errs.CodeNotFound, "")
		httpservertest.RequireProblem(t, b.do(t, w.RobinPersonalToken, "PATCH", target, map[string]any{"state": "paused"}), errs.CodeNotFound, "")
	})

	t.Run("an owner with a stale step-up must step up", func(t *testing.T) {
		w.Clock.Advance(w.Services.Config.Identity.StepUpMaxAge + time.Second)
		resp := b.do(t, w.Robin.Token, "PATCH", target, map[string]any{"state": "paused"})
		httpservertest.RequireProblem(t, resp, errs.CodeStepUpRequired, "")
	})
}

func TestDeleteWebhookSubscription(t *testing.T) {
	t.Parallel()
	b := setupWebhooks(t)
	w := b.w
	sub := w.TrackerSubscription(t)
	target := "/webhook-subscriptions/" + sub.ID.String()
	for _, s := range []apps.DeliveryStatus{apps.DeliverySucceeded, apps.DeliveryPending} {
		w.InsertDelivery(t, sub.ID, w.Post(t, w.Alex.Token, w.Eskalation, "Printer on fire"), s, w.Clock.Now())
	}

	sameProblem(t, b.do(t, w.Alex.Token, "DELETE", target, nil), b.do(t, w.Alex.Token, "DELETE", "/webhook-subscriptions/"+unknownID, nil))
	httpservertest.RequireProblem(t, b.do(t, w.RobinPersonalToken, "DELETE", target, nil), errs.CodeNotFound, "")

	before := b.manageEntries(t)
	resp := b.do(t, w.Robin.Token, "DELETE", target, nil)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	var left int
	require.NoError(t, w.Services.DB.App.QueryRow(context.Background(),
		`SELECT count(*) FROM webhook_deliveries WHERE subscription_id = $1`, sub.ID).Scan(&left))
	require.Zero(t, left, "the deliveries are gone")
	require.Equal(t, map[string]any{
		"subscription_id": sub.ID.String(), "app_id": w.Tracker.ID.String(), "change": "deleted",
		"host": "hooks.example.com", "event_types": []any{"message.created"}, "hmac_enabled": false, "hmac_generation": int64(0),
		"max_per_second": int64(0),
	}, b.newEntry(t, before, "deleted").Details)

	httpservertest.RequireProblem(t, b.do(t, w.Robin.Token, "DELETE", target, nil), errs.CodeNotFound, "")
	require.Len(t, b.manageEntries(t), len(before)+1, "the second delete writes nothing")
}
