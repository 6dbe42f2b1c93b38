package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/adapters/httpapi"
	"bothy/server/internal/apps/webhookstest"
	idapp "bothy/server/internal/identity/app"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/wire"
	"bothy/server/test/harness"
)

// recoveryServer is the strict server of the recovery tests.
type recoveryServer struct {
	*httpapi.RecoveryHandlers
	harness.OtherModules
}

// setupRecovery is the webhook world with recoverWebhookDeliveries served
// through the real chain, webhook.recover_max_deliveries = 2.
func setupRecovery(t *testing.T) *whBundle {
	t.Helper()
	db := pgtest.New(t)
	w := webhookstest.Build(t, db, func(cfg *wire.Config) { cfg.Webhook.RecoverMaxDeliveries = 2 })
	env := httpservertest.New(t, db, httpservertest.Options())
	h, err := httpapi.NewRecoveryHandlers(w.Services.Recovery)
	require.NoError(t, err)
	harness.MountAPI(t, env, recoveryServer{RecoveryHandlers: h}, h, []string{"recoverWebhookDeliveries"})
	return &whBundle{env: env, w: w}
}

// rfc3339 formats t as the contract's timestamps.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// TestRecoverWebhookDeliveries is the operation recoverWebhookDeliveries
// (ADR 0079, D-M2-26-50 to D-M2-26-53) over the real chain: the window's
// problems with reason and pointers, 404 for anyone but an owner, 409
// event_expired for a window before the log's retention, the bound with
// has_more, the rows as a redelivery leaves them (a delivery whose event
// left the log is skipped, pending and succeeded ones are not touched),
// the job, the idempotent replay, the audit entries and 409
// app_not_installed. Its send side (the order through the head rule) is
// TestRecoveredDeliveriesGoBeforeANewerPendingOne in internal/apps/app.
func TestRecoverWebhookDeliveries(t *testing.T) {
	t.Parallel()
	b := setupRecovery(t)
	w := b.w
	sub := w.TrackerSubscription(t)
	expiredOld := w.Post(t, w.Alex.Token, w.Eskalation, "Gone soon")
	expiredRecent := w.Post(t, w.Alex.Token, w.Eskalation, "Gone soon too")
	oldRow := w.InsertDelivery(t, sub.ID, expiredOld, apps.DeliveryDead, time.Time{})
	beforeRetention := w.Clock.Now()
	w.ExpireLog(t)
	// A row created after its event left the log (as a redelivery long ago
	// leaves one): inside a valid window, but not recoverable.
	gone := w.InsertDelivery(t, sub.ID, expiredRecent, apps.DeliveryDead, time.Time{})
	created := w.Clock.Now()
	var events []webhookstest.Event
	for _, text := range []string{"One", "Two", "Three", "Four", "Five"} {
		events = append(events, w.Post(t, w.Alex.Token, w.Eskalation, text))
	}
	dead1 := w.InsertDelivery(t, sub.ID, events[0], apps.DeliveryDead, time.Time{})
	failed := w.InsertDelivery(t, sub.ID, events[1], apps.DeliveryFailed, time.Time{})
	dead2 := w.InsertDelivery(t, sub.ID, events[2], apps.DeliveryDead, time.Time{})
	succeeded := w.InsertDelivery(t, sub.ID, events[3], apps.DeliverySucceeded, time.Time{})
	pending := w.InsertDelivery(t, sub.ID, events[4], apps.DeliveryPending, created.Add(time.Hour))
	w.Clock.Advance(time.Minute)
	target := "/webhook-subscriptions/" + sub.ID.String() + "/recover"
	recover := func(token string, body map[string]any, header ...string) *http.Response {
		return b.do(t, token, "POST", target, body, header...)
	}
	unchanged := func(t *testing.T, ds ...apps.Delivery) {
		t.Helper()
		for _, d := range ds {
			require.Equal(t, d, w.Delivery(t, d.ID), "delivery %d unchanged", d.EventSeq)
		}
	}
	since := rfc3339(created)

	t.Run("a defective window is 400 with reason and pointers and changes nothing", func(t *testing.T) {
		now := w.Clock.Now()
		p := httpservertest.RequireProblem(t, recover(w.Robin.Token, map[string]any{"since": rfc3339(now.Add(time.Hour))}),
			errs.CodeValidationFailed, "invalid_window", "/since")
		require.Equal(t, []string{"in_future"}, itemCodes(p))
		p = httpservertest.RequireProblem(t, recover(w.Robin.Token, map[string]any{"since": since, "until": since}),
			errs.CodeValidationFailed, "invalid_window", "/until")
		require.Equal(t, []string{"not_after_since"}, itemCodes(p))
		p = httpservertest.RequireProblem(t, recover(w.Robin.Token, map[string]any{"since": rfc3339(now.Add(time.Hour)), "until": since}),
			errs.CodeValidationFailed, "invalid_window", "/since", "/until")
		require.Equal(t, []string{"in_future", "not_after_since"}, itemCodes(p))
		p = httpservertest.RequireProblem(t, recover(w.Robin.Token, map[string]any{"until": since}), errs.CodeValidationFailed, "", "/since")
		require.Equal(t, []string{"required"}, itemCodes(p))
		p = httpservertest.RequireProblem(t, recover(w.Robin.Token, map[string]any{"since": "yesterday"}), errs.CodeValidationFailed, "", "/since")
		require.Equal(t, []string{"format"}, itemCodes(p))
		unchanged(t, dead1, failed, dead2)
	})

	t.Run("anyone but an owner gets exactly the answer of an unknown subscription", func(t *testing.T) {
		body := map[string]any{"since": since}
		sameProblem(t, recover(w.Alex.Token, body), b.do(t, w.Alex.Token, "POST", "/webhook-subscriptions/"+unknownID+"/recover", body))
		httpservertest.RequireProblem(t, recover(w.RobinPersonalToken, body), errs.CodeNotFound, "")
		httpservertest.RequireProblem(t, b.do(t, w.Robin.Token, "POST", "/webhook-subscriptions/"+unknownID+"/recover", body), errs.CodeNotFound, "")
		unchanged(t, dead1, failed, dead2)
	})

	t.Run("a window before the log's retention is a conflict", func(t *testing.T) {
		httpservertest.RequireProblem(t, recover(w.Robin.Token, map[string]any{"since": rfc3339(beforeRetention)}), errs.CodeConflict, "event_expired")
		unchanged(t, oldRow, gone, dead1, failed, dead2)
		require.Empty(t, audittest.List(t, w.Services.DB.App, audittest.Filter{Action: "webhook_out.redeliver", Outcome: "allow"}))
	})

	var first map[string]any
	t.Run("the lowest seqs up to the bound become pending as a redelivery leaves them", func(t *testing.T) {
		now := w.Clock.Now()
		key := []string{"Idempotency-Key", "recover-1"}
		first = body(t, recover(w.Robin.Token, map[string]any{"since": since}, key...), http.StatusAccepted, "WebhookRecovery")
		require.Equal(t, map[string]any{"recovered": float64(2), "has_more": true, "since": since, "until": rfc3339(now)}, first)
		for _, d := range []apps.Delivery{dead1, failed} {
			got := w.Delivery(t, d.ID)
			require.Equal(t, apps.DeliveryPending, got.Status)
			require.Equal(t, now, got.NextAttemptAt, "due at once")
			require.Equal(t, now, got.CreatedAt, "a new retry window")
			require.Equal(t, d.Attempt, got.Attempt, "the attempt count is kept")
			require.Empty(t, got.LastError)
			require.Zero(t, got.ResponseCode)
			require.True(t, got.DeliveredAt.IsZero())
			require.Equal(t, d.EventID, got.EventID, "the same webhook-id")
		}
		unchanged(t, gone, dead2, succeeded, pending)
		require.Contains(t, w.Scheduled(t, sub.ID), now, "a job at once")

		replay := recover(w.Robin.Token, map[string]any{"since": since}, key...)
		require.Equal(t, "true", replay.Header.Get(httpserver.ReplayHeader))
		require.Equal(t, first, body(t, replay, http.StatusAccepted, "WebhookRecovery"), "the stored 202")
		unchanged(t, dead2)
	})

	t.Run("the same window goes on with the next ones, then finds none", func(t *testing.T) {
		w.Clock.Advance(time.Second)
		window := map[string]any{"since": since, "until": first["until"]}
		next := body(t, recover(w.Robin.Token, window), http.StatusAccepted, "WebhookRecovery")
		require.Equal(t, float64(1), next["recovered"])
		require.Equal(t, false, next["has_more"])
		require.Equal(t, first["until"], next["until"])
		require.Equal(t, apps.DeliveryPending, w.Delivery(t, dead2.ID).Status)
		w.Clock.Advance(time.Second)
		none := body(t, recover(w.Robin.Token, window), http.StatusAccepted, "WebhookRecovery")
		require.Equal(t, float64(0), none["recovered"])
		unchanged(t, gone, succeeded, pending)

		entries := audittest.List(t, w.Services.DB.App, audittest.Filter{Action: "webhook_out.redeliver", Outcome: "allow"})
		require.Len(t, entries, 3, "one entry per request that ran; the replay wrote none")
		require.Equal(t, "webhook_delivery", entries[0].ResourceKind)
		require.Equal(t, dead1.EventSeq, entries[0].Details["first_seq"])
		require.Equal(t, failed.EventSeq, entries[0].Details["last_seq"])
		require.Equal(t, int64(2), entries[0].Details["recovered"])
		require.Equal(t, true, entries[0].Details["has_more"])
		require.Equal(t, sub.ID.String(), entries[1].Details["subscription_id"])
		require.Equal(t, dead2.EventSeq, entries[1].Details["first_seq"])
		for _, e := range entries {
			for k := range e.Details {
				require.False(t, strings.Contains(k, "url"), "no address in the audit entry")
			}
		}
	})

	t.Run("a subscription of an uninstalled app is a conflict", func(t *testing.T) {
		// ExpireLog outlived Robin's step-up; uninstallApp needs a fresh one.
		_, err := w.Services.Identity.StepUp(w.As(t, w.Robin.Token), idapp.StepUp{Password: harness.Password})
		require.NoError(t, err)
		require.NoError(t, w.Services.Apps.UninstallApp(w.As(t, w.Robin.Token), w.Tracker.ID))
		httpservertest.RequireProblem(t, recover(w.Robin.Token, map[string]any{"since": since}), errs.CodeConflict, "app_not_installed")
	})
}
