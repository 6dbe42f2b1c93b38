package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/webhookstest"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
)

// itemIDs returns the ids of a page's items, in order.
func itemIDs(page map[string]any) []string {
	out := []string{}
	for _, it := range page["items"].([]any) {
		out = append(out, it.(map[string]any)["id"].(string))
	}
	return out
}

func TestListWebhookSubscriptionsAndDeliveries(t *testing.T) {
	t.Parallel()
	b := setupWebhooks(t)
	w := b.w
	first := w.TrackerSubscription(t)
	w.Clock.Advance(time.Second)
	second := body(t, b.do(t, w.Robin.Token, "POST", "/apps/"+w.Tracker.ID.String()+"/webhook-subscriptions",
		map[string]any{"url": "https://hooks.example.com/bothy/second", "event_types": []string{"message.created"}, "enable_hmac": true}),
		http.StatusCreated, "WebhookSubscriptionCreated")

	t.Run("subscriptions by created_at with app_id and no secret", func(t *testing.T) {
		list := body(t, b.do(t, w.Robin.Token, "GET", "/apps/"+w.Tracker.ID.String()+"/webhook-subscriptions", nil),
			http.StatusOK, "WebhookSubscriptionList")
		require.Equal(t, []string{first.ID.String(), str(second, "id")}, itemIDs(list))
		for _, it := range list["items"].([]any) {
			require.Equal(t, w.Tracker.ID.String(), it.(map[string]any)["app_id"])
			require.NotContains(t, it, "hmac_secret")
		}
		require.Equal(t, []any{"v1a", "v1"}, list["items"].([]any)[1].(map[string]any)["signature_schemes"])

		other, err := w.Services.Apps.RegisterApp(w.As(t, w.Robin.Token), appRegister("Helper"))
		require.NoError(t, err)
		empty := body(t, b.do(t, w.Robin.Token, "GET", "/apps/"+other.ID.String()+"/webhook-subscriptions", nil),
			http.StatusOK, "WebhookSubscriptionList")
		require.Equal(t, []any{}, empty["items"], "an empty list, never null")

		sameProblem(t, b.do(t, w.Alex.Token, "GET", "/apps/"+w.Tracker.ID.String()+"/webhook-subscriptions", nil),
			b.do(t, w.Alex.Token, "GET", "/apps/"+unknownID+"/webhook-subscriptions", nil))
		httpservertest.RequireProblem(t, b.do(t, w.Robin.Token, "GET", "/apps/"+unknownID+"/webhook-subscriptions", nil), errs.CodeNotFound, "")
	})

	// Five deliveries of the first subscription, seq ascending; the oldest
	// event leaves the log.
	expired := w.Post(t, w.Alex.Token, w.Eskalation, "Oldest")
	w.ExpireLog(t)
	events := []webhookstest.Event{expired}
	for _, text := range []string{"Two", "Three", "Four", "Five"} {
		events = append(events, w.Post(t, w.Alex.Token, w.Eskalation, text))
	}
	statuses := []apps.DeliveryStatus{apps.DeliverySucceeded, apps.DeliveryDead, apps.DeliverySucceeded, apps.DeliveryFailed, apps.DeliveryPending}
	var deliveries []apps.Delivery
	for i, ev := range events {
		deliveries = append(deliveries, w.InsertDelivery(t, first.ID, ev, statuses[i], w.Clock.Now()))
	}
	target := "/webhook-subscriptions/" + first.ID.String() + "/deliveries"

	t.Run("newest first with next_cursor", func(t *testing.T) {
		page := body(t, b.do(t, w.Robin.Token, "GET", target+"?limit=2", nil), http.StatusOK, "WebhookDeliveryPage")
		require.Equal(t, []string{deliveries[4].ID.String(), deliveries[3].ID.String()}, itemIDs(page))
		cursor := str(page, "next_cursor")
		require.NotEmpty(t, cursor)
		page = body(t, b.do(t, w.Robin.Token, "GET", target+"?limit=2&cursor="+cursor, nil), http.StatusOK, "WebhookDeliveryPage")
		require.Equal(t, []string{deliveries[2].ID.String(), deliveries[1].ID.String()}, itemIDs(page))
		page = body(t, b.do(t, w.Robin.Token, "GET", target+"?limit=2&cursor="+str(page, "next_cursor"), nil), http.StatusOK, "WebhookDeliveryPage")
		require.Equal(t, []string{deliveries[0].ID.String()}, itemIDs(page))
		require.NotContains(t, page, "next_cursor", "the last page has no cursor")

		all := body(t, b.do(t, w.Robin.Token, "GET", target, nil), http.StatusOK, "WebhookDeliveryPage")
		require.Len(t, itemIDs(all), 5, "without a limit the default page size")
		newest := all["items"].([]any)[0].(map[string]any)
		require.Equal(t, "message.created", newest["event_type"])
		require.Equal(t, "pending", newest["status"])
		require.Equal(t, float64(events[4].Seq), newest["event_seq"])
		require.Equal(t, events[4].ID.String(), newest["event_id"])
		failed := all["items"].([]any)[1].(map[string]any)
		require.Equal(t, "gone", failed["last_error"])
		require.Equal(t, float64(410), failed["response_code"])
		require.NotContains(t, failed, "next_attempt_at")
	})

	t.Run("a delivery whose event left the log has no event_type", func(t *testing.T) {
		page := body(t, b.do(t, w.Robin.Token, "GET", target+"?status=succeeded", nil), http.StatusOK, "WebhookDeliveryPage")
		require.Equal(t, []string{deliveries[2].ID.String(), deliveries[0].ID.String()}, itemIDs(page), "the status filter")
		oldest := page["items"].([]any)[1].(map[string]any)
		require.NotContains(t, oldest, "event_type", "absent once the event left the event log")
		require.Equal(t, expired.ID.String(), oldest["event_id"])
		require.Equal(t, "message.created", page["items"].([]any)[0].(map[string]any)["event_type"])

		page = body(t, b.do(t, w.Robin.Token, "GET", target+"?status=succeeded&limit=1", nil), http.StatusOK, "WebhookDeliveryPage")
		page = body(t, b.do(t, w.Robin.Token, "GET", target+"?status=succeeded&limit=1&cursor="+str(page, "next_cursor"), nil),
			http.StatusOK, "WebhookDeliveryPage")
		require.Equal(t, []string{deliveries[0].ID.String()}, itemIDs(page), "the filter holds across pages")
	})

	t.Run("foreign and tampered cursors", func(t *testing.T) {
		page := body(t, b.do(t, w.Robin.Token, "GET", target+"?limit=1", nil), http.StatusOK, "WebhookDeliveryPage")
		cursor := str(page, "next_cursor")
		foreign, err := b.cursors.Encode("listMessages", w.Robin.ID, map[string]any{"s": 1})
		require.NoError(t, err)
		otherPrincipal, err := b.cursors.Encode("listWebhookDeliveries", w.Alex.ID, map[string]any{"s": 1})
		require.NoError(t, err)
		for _, c := range []string{foreign, otherPrincipal, cursor[:len(cursor)-2] + "AA", "garbage"} {
			resp := b.do(t, w.Robin.Token, "GET", target+"?cursor="+c, nil)
			httpservertest.RequireProblem(t, resp, errs.CodeCursorInvalid, "")
		}
		resp := b.do(t, w.Robin.Token, "GET", target+"?status=sent", nil)
		httpservertest.RequireProblem(t, resp, errs.CodeValidationFailed, "", "query/status")
	})

	t.Run("Alex gets exactly the answer of an unknown subscription", func(t *testing.T) {
		sameProblem(t, b.do(t, w.Alex.Token, "GET", target, nil), b.do(t, w.Alex.Token, "GET", "/webhook-subscriptions/"+unknownID+"/deliveries", nil))
	})
}

// TestRedeliverWebhook is the operation redeliverWebhook: the rows, the
// job, the audit entry, the replay, event_expired and the 404 for Alex.
// Its send side (the same webhook-id, a dead row ends succeeded, a pending
// row in backoff goes out at once) is TestRedeliverWebhookSendSide in
// internal/apps/app, where the delivery engine runs.
func TestRedeliverWebhook(t *testing.T) {
	t.Parallel()
	b := setupWebhooks(t)
	w := b.w
	sub := w.TrackerSubscription(t)
	old := w.Post(t, w.Alex.Token, w.Eskalation, "Gone soon")
	oldRow := w.InsertDelivery(t, sub.ID, old, apps.DeliveryDead, w.Clock.Now())
	w.ExpireLog(t)
	events := []webhookstest.Event{}
	for _, text := range []string{"One", "Two", "Three", "Four"} {
		events = append(events, w.Post(t, w.Alex.Token, w.Eskalation, text))
	}
	created := w.Clock.Now()
	backoff := created.Add(time.Hour)
	dead := w.InsertDelivery(t, sub.ID, events[0], apps.DeliveryDead, time.Time{})
	failed := w.InsertDelivery(t, sub.ID, events[1], apps.DeliveryFailed, time.Time{})
	succeeded := w.InsertDelivery(t, sub.ID, events[2], apps.DeliverySucceeded, time.Time{})
	pending := w.InsertDelivery(t, sub.ID, events[3], apps.DeliveryPending, backoff)
	redeliver := func(token string, d apps.Delivery, header ...string) *http.Response {
		return b.do(t, token, "POST", "/webhook-deliveries/"+d.ID.String()+"/redeliver", nil, header...)
	}

	t.Run("Alex gets exactly the answer of an unknown delivery", func(t *testing.T) {
		sameProblem(t, redeliver(w.Alex.Token, dead), b.do(t, w.Alex.Token, "POST", "/webhook-deliveries/"+unknownID+"/redeliver", nil))
		httpservertest.RequireProblem(t, redeliver(w.RobinPersonalToken, dead), errs.CodeNotFound, "")
		require.Equal(t, dead, w.Delivery(t, dead.ID), "nothing changed")
	})

	t.Run("a finished delivery becomes pending again with a new window", func(t *testing.T) {
		w.Clock.Advance(time.Minute)
		now := w.Clock.Now()
		key := []string{"Idempotency-Key", "redeliver-dead-1"}
		got := body(t, redeliver(w.Robin.Token, dead, key...), http.StatusAccepted, "WebhookDelivery")
		require.Equal(t, "pending", got["status"])
		require.Equal(t, now.Format(time.RFC3339), got["next_attempt_at"])
		require.Equal(t, now.Format(time.RFC3339), got["created_at"], "the retry window starts again")
		require.Equal(t, float64(3), got["attempt"], "the attempt count is kept")
		require.Equal(t, "message.created", got["event_type"])
		require.Equal(t, events[0].ID.String(), got["event_id"], "the same webhook-id")
		require.NotContains(t, got, "last_error")
		require.NotContains(t, got, "response_code")
		stored := w.Delivery(t, dead.ID)
		require.Equal(t, apps.DeliveryPending, stored.Status)
		require.Equal(t, now, stored.NextAttemptAt)
		require.Equal(t, now, stored.CreatedAt)
		require.Equal(t, 3, stored.Attempt)
		require.Empty(t, stored.LastError)
		require.Zero(t, stored.ResponseCode)
		require.Equal(t, []time.Time{now}, w.Scheduled(t, sub.ID), "a job at once (the world's clock is ahead of real time, so the job waits for it)")

		entries := audittest.List(t, w.Services.DB.App, audittest.Filter{Action: "webhook_out.redeliver", Outcome: "allow"})
		require.Len(t, entries, 1)
		require.Equal(t, "webhook_delivery", entries[0].ResourceKind)
		require.Equal(t, dead.ID, entries[0].ResourceID)
		require.Equal(t, map[string]any{"delivery_id": dead.ID.String(), "subscription_id": sub.ID.String(),
			"event_seq": events[0].Seq, "previous_status": "dead"}, entries[0].Details)

		replay := redeliver(w.Robin.Token, dead, key...)
		require.Equal(t, "true", replay.Header.Get(httpserver.ReplayHeader))
		require.Equal(t, got, body(t, replay, http.StatusAccepted, "WebhookDelivery"), "the stored 202")
		require.Len(t, audittest.List(t, w.Services.DB.App, audittest.Filter{Action: "webhook_out.redeliver", Outcome: "allow"}), 1)

		for _, d := range []apps.Delivery{failed, succeeded} {
			got := body(t, redeliver(w.Robin.Token, d), http.StatusAccepted, "WebhookDelivery")
			require.Equal(t, "pending", got["status"])
			require.NotContains(t, got, "delivered_at")
			require.NotContains(t, got, "last_error")
			stored := w.Delivery(t, d.ID)
			require.Equal(t, now, stored.CreatedAt)
			require.True(t, stored.DeliveredAt.IsZero())
		}
	})

	t.Run("a pending delivery in backoff is due at once", func(t *testing.T) {
		w.Clock.Advance(time.Minute)
		got := body(t, redeliver(w.Robin.Token, pending), http.StatusAccepted, "WebhookDelivery")
		require.Equal(t, w.Clock.Now().Format(time.RFC3339), got["next_attempt_at"])
		stored := w.Delivery(t, pending.ID)
		require.Equal(t, w.Clock.Now(), stored.NextAttemptAt)
		require.Equal(t, created, stored.CreatedAt, "its retry window stays")
		require.Contains(t, w.Scheduled(t, sub.ID), w.Clock.Now())
	})

	t.Run("an event no longer in the log is a conflict", func(t *testing.T) {
		resp := redeliver(w.Robin.Token, oldRow)
		httpservertest.RequireProblem(t, resp, errs.CodeConflict, "event_expired")
		require.Equal(t, apps.DeliveryDead, w.Delivery(t, oldRow.ID).Status, "nothing changed")
	})

	t.Run("a paused subscription keeps the delivery waiting", func(t *testing.T) {
		_, err := w.Services.DB.App.Exec(context.Background(), `UPDATE webhook_subscriptions SET state = 'paused' WHERE id = $1`, sub.ID)
		require.NoError(t, err)
		jobs := len(w.Scheduled(t, sub.ID))
		w.Clock.Advance(time.Minute)
		body(t, redeliver(w.Robin.Token, dead), http.StatusAccepted, "WebhookDelivery")
		require.Equal(t, w.Clock.Now(), w.Delivery(t, dead.ID).NextAttemptAt)
		require.Len(t, w.Scheduled(t, sub.ID), jobs, "no job while paused")
	})
}
