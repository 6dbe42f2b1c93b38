package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/apps/webhookstest"
	"bothy/server/internal/instance"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/correlation"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/test/harness"
)

// manageEntries returns the allow entries of webhook_out.manage on the app.
func manageEntries(t *testing.T, w *webhookstest.World, appID any) []audittest.Row {
	t.Helper()
	rows := audittest.List(t, w.Services.DB.App, audittest.Filter{Action: "webhook_out.manage", ResourceKind: "app", Outcome: "allow"})
	out := []audittest.Row{}
	for _, r := range rows {
		if r.ResourceID == appID {
			out = append(out, r)
		}
	}
	return out
}

// registerApp registers an app with the given delivery as Robin.
func registerApp(t *testing.T, w *webhookstest.World, name string, d domain.Delivery) domain.App {
	t.Helper()
	a, err := w.Services.Apps.RegisterApp(w.As(t, w.Robin.Token), app.RegisterApp{Manifest: domain.Manifest{
		Name: name, Scopes: []string{"events:subscribe", "messages:read", "channels:read"},
		Events: []string{"message.created", "channel.created"}, Delivery: d,
	}})
	require.NoError(t, err)
	return a
}

// TestInstallCreatesManifestSubscription (11 4.1, D-M2-26-15): installing an
// app whose manifest delivers by webhook creates one subscription to
// delivery.events_url for the installation's event subscriptions, without
// HMAC, created by the installing owner, audited as webhook_out.manage
// with the correlation of the install; other installs create none.
func TestInstallCreatesManifestSubscription(t *testing.T) {
	t.Parallel()
	w := webhookstest.Build(t, pgtest.New(t), nil)
	ctx := context.Background()
	active, err := w.Services.Keys.Signer(ctx, instance.PurposeWebhookOut)
	require.NoError(t, err)

	t.Run("Tracker's install in the world", func(t *testing.T) {
		sub := w.TrackerSubscription(t)
		require.Equal(t, w.Tracker.ID, sub.AppID)
		require.Equal(t, w.Tracker.InstallationID, sub.AppInstallationID)
		require.Equal(t, webhookstest.TrackerEventsURL, sub.URL)
		require.Equal(t, harness.TrackerEvents, sub.EventTypes)
		require.Equal(t, apps.SubscriptionActive, sub.State)
		require.False(t, sub.HMACEnabled)
		require.Equal(t, []string{"v1a"}, sub.SignatureSchemes)
		require.Equal(t, active.KeyID(), sub.SigningKeyKID)
		require.Equal(t, w.Robin.ID, sub.CreatedBy)
		entries := manageEntries(t, w, w.Tracker.ID)
		require.Len(t, entries, 1)
		require.Equal(t, map[string]any{
			"subscription_id": sub.ID.String(), "app_id": w.Tracker.ID.String(), "change": "created",
			"host": "hooks.example.com", "event_types": []any{"message.created"},
			"hmac_enabled": false, "hmac_generation": int64(0), "max_per_second": int64(0),
		}, entries[0].Details)
	})

	t.Run("same correlation as app.install", func(t *testing.T) {
		a := registerApp(t, w, "Helper", domain.Delivery{Mode: domain.DeliveryWebhook, EventsURL: "https://hooks.example.com:8443/helper?x=1"})
		robin := correlation.With(w.As(t, w.Robin.Token), "req-install-helper")
		inst, err := w.Services.Apps.InstallApp(robin, app.InstallApp{AppID: a.ID})
		require.NoError(t, err)
		subs, err := w.Services.Webhooks.ListSubscriptions(w.As(t, w.Robin.Token), a.ID)
		require.NoError(t, err)
		require.Len(t, subs, 1)
		require.Equal(t, inst.Installation.ID, subs[0].AppInstallationID)
		require.Equal(t, "https://hooks.example.com:8443/helper?x=1", subs[0].URL)
		require.Equal(t, inst.Installation.EventSubscriptions, subs[0].EventTypes)
		rows := audittest.List(t, w.Services.DB.App, audittest.Filter{CorrelationID: "req-install-helper"})
		var actions []string
		for _, r := range rows {
			actions = append(actions, r.Action)
		}
		require.ElementsMatch(t, []string{"app.install", "webhook_out.manage"}, actions)
		for _, r := range rows {
			if r.Action == "webhook_out.manage" {
				require.Equal(t, "hooks.example.com", r.Details["host"], "the host without port, path or query")
			}
		}
	})

	t.Run("no subscription without webhook delivery or without event subscriptions", func(t *testing.T) {
		none := registerApp(t, w, "Quiet", domain.Delivery{Mode: domain.DeliveryNone})
		_, err := w.Services.Apps.InstallApp(w.As(t, w.Robin.Token), app.InstallApp{AppID: none.ID})
		require.NoError(t, err)
		noEvents := registerApp(t, w, "Deaf", domain.Delivery{Mode: domain.DeliveryWebhook, EventsURL: "https://hooks.example.com/deaf"})
		_, err = w.Services.Apps.InstallApp(w.As(t, w.Robin.Token), app.InstallApp{AppID: noEvents.ID, EventSubscriptions: []string{}})
		require.NoError(t, err)
		for _, id := range []any{none.ID, noEvents.ID} {
			require.Empty(t, manageEntries(t, w, id))
		}
		subs, err := w.Services.Webhooks.ListSubscriptions(w.As(t, w.Robin.Token), noEvents.ID)
		require.NoError(t, err)
		require.Empty(t, subs)
	})
}

// TestUninstallDisablesSubscriptions (11 4.3, D-M2-26-15): uninstall
// disables every active and paused subscription of the installation with
// disabled_at in the uninstall's unit of work, covered by the app.uninstall
// entry; the subscriptions stay listed, and the installation that is gone
// takes no new or re-enabled subscription.
func TestUninstallDisablesSubscriptions(t *testing.T) {
	t.Parallel()
	w := webhookstest.Build(t, pgtest.New(t), nil)
	robin := w.As(t, w.Robin.Token)
	manifest := w.TrackerSubscription(t)
	second, err := w.Services.Webhooks.CreateSubscription(robin, apps.CreateSubscription{AppID: w.Tracker.ID,
		URL: "https://hooks.example.com/second", EventTypes: []string{"message.created"}})
	require.NoError(t, err)
	paused := apps.SubscriptionPaused
	_, err = w.Services.Webhooks.UpdateSubscription(robin, apps.UpdateSubscription{ID: second.ID, State: &paused})
	require.NoError(t, err)
	before := len(manageEntries(t, w, w.Tracker.ID))

	w.Clock.Advance(time.Minute)
	require.NoError(t, w.Services.Apps.UninstallApp(w.As(t, w.Robin.Token), w.Tracker.ID))
	subs, err := w.Services.Webhooks.ListSubscriptions(w.As(t, w.Robin.Token), w.Tracker.ID)
	require.NoError(t, err)
	require.Len(t, subs, 2)
	for _, s := range subs {
		require.Equal(t, apps.SubscriptionDisabled, s.State, s.ID)
		require.Equal(t, w.Clock.Now(), s.DisabledAt)
		require.Equal(t, w.Clock.Now(), s.UpdatedAt)
	}
	require.ElementsMatch(t, []any{manifest.ID, second.ID}, []any{subs[0].ID, subs[1].ID})
	require.Len(t, manageEntries(t, w, w.Tracker.ID), before, "app.uninstall covers the disabling")
	require.Len(t, audittest.List(t, w.Services.DB.App, audittest.Filter{Action: "app.uninstall", Outcome: "allow"}), 1)

	active := apps.SubscriptionActive
	_, err = w.Services.Webhooks.UpdateSubscription(w.As(t, w.Robin.Token), apps.UpdateSubscription{ID: manifest.ID, State: &active})
	require.Equal(t, errs.CodeConflict, errs.CodeOf(err))
	require.Equal(t, domain.ReasonAppNotInstalled, errs.ReasonOf(err), "a subscription of an uninstalled app is not re-enabled")
	_, err = w.Services.Webhooks.CreateSubscription(w.As(t, w.Robin.Token), apps.CreateSubscription{AppID: w.Tracker.ID,
		URL: "https://hooks.example.com/third", EventTypes: []string{"message.created"}})
	require.Equal(t, domain.ReasonAppNotInstalled, errs.ReasonOf(err))
	require.NoError(t, w.Services.Webhooks.DeleteSubscription(w.As(t, w.Robin.Token), manifest.ID), "deleting stays possible")
}

// TestResumeInstallationMakesHeadsDue (D-M2-26-15): resuming a
// suspended app makes the head of each active subscription due now and
// schedules its job in the resume's unit of work; paused subscriptions
// and later deliveries wait.
func TestResumeInstallationMakesHeadsDue(t *testing.T) {
	t.Parallel()
	w := webhookstest.Build(t, pgtest.New(t), nil)
	robin := w.As(t, w.Robin.Token)
	sub := w.TrackerSubscription(t)
	pausedSub, err := w.Services.Webhooks.CreateSubscription(robin, apps.CreateSubscription{AppID: w.Tracker.ID,
		URL: "https://hooks.example.com/paused", EventTypes: []string{"message.created"}})
	require.NoError(t, err)
	paused := apps.SubscriptionPaused
	_, err = w.Services.Webhooks.UpdateSubscription(robin, apps.UpdateSubscription{ID: pausedSub.ID, State: &paused})
	require.NoError(t, err)
	_, err = w.Services.Apps.SuspendApp(robin, w.Tracker.ID)
	require.NoError(t, err)

	later := w.Clock.Now().Add(time.Hour)
	e1 := w.Post(t, w.Alex.Token, w.Eskalation, "Printer on fire")
	e2 := w.Post(t, w.Alex.Token, w.Eskalation, "Still on fire")
	head := w.InsertDelivery(t, sub.ID, e1, apps.DeliveryPending, later)
	next := w.InsertDelivery(t, sub.ID, e2, apps.DeliveryPending, later)
	waiting := w.InsertDelivery(t, pausedSub.ID, e1, apps.DeliveryPending, later)

	w.Clock.Advance(time.Minute)
	_, err = w.Services.Apps.ResumeApp(w.As(t, w.Robin.Token), w.Tracker.ID)
	require.NoError(t, err)
	now := w.Clock.Now()
	require.Equal(t, now, w.Delivery(t, head.ID).NextAttemptAt, "the head is due now")
	require.Equal(t, later, w.Delivery(t, next.ID).NextAttemptAt, "only the head")
	require.Equal(t, later, w.Delivery(t, waiting.ID).NextAttemptAt, "a paused subscription keeps waiting")
	require.Equal(t, []time.Time{webhookstest.AtOnce}, w.Scheduled(t, sub.ID))
	require.Empty(t, w.Scheduled(t, pausedSub.ID))
}
