package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// subscription returns a new active subscription of inst created at at.
func (b *testBundle) subscription(t testing.TB, inst apps.Installation, at time.Time) apps.Subscription {
	t.Helper()
	s := apps.Subscription{
		ID: ids.New(), AppID: inst.AppID, AppInstallationID: inst.ID,
		URL: "https://hooks.example.com/bothy/events", EventTypes: []string{"message.created"},
		State: apps.SubscriptionActive, SignatureSchemes: webhook.SignatureSchemes(false), SigningKeyKID: "kid-1",
		CreatedBy: b.owner, CreatedAt: at, UpdatedAt: at,
	}
	require.NoError(t, b.subs.InsertSubscription(context.Background(), s))
	return s
}

// delivery inserts a delivery row of sub for seq with status: the consumer
// and the delivery job write these in the running server.
func (b *testBundle) delivery(t testing.TB, sub apps.Subscription, seq int64, status apps.DeliveryStatus) apps.Delivery {
	t.Helper()
	d := apps.Delivery{ID: ids.New(), SubscriptionID: sub.ID, EventSeq: seq, EventID: ids.New(),
		EventOccurredAt: start.Add(-time.Minute), Status: status, CreatedAt: start, UpdatedAt: start}
	var next, delivered *time.Time
	switch status {
	case apps.DeliveryPending:
		d.NextAttemptAt = start.Add(time.Hour)
		next = &d.NextAttemptAt
	case apps.DeliverySucceeded:
		d.DeliveredAt, d.Attempt, d.ResponseCode = start, 1, 204
		delivered = &d.DeliveredAt
	case apps.DeliveryDead:
		d.LastError, d.Attempt, d.ResponseCode = apps.LastErrorHTTPStatus, 3, 500
	}
	_, err := b.db.App.Exec(context.Background(), `
		INSERT INTO webhook_deliveries (id, subscription_id, event_seq, event_id, status, attempt, next_attempt_at,
			last_error, response_code, delivered_at, created_at, updated_at, event_occurred_at, finished_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, NULLIF($8, ''), NULLIF($9, 0), $10, $11, $11, $12,
			CASE WHEN $5 = 'pending' THEN NULL ELSE $11::timestamptz END)`,
		d.ID, d.SubscriptionID, d.EventSeq, d.EventID, string(d.Status), d.Attempt, next, string(d.LastError), d.ResponseCode,
		delivered, d.CreatedAt, d.EventOccurredAt)
	require.NoError(t, err)
	return d
}

func TestSubscriptionRoundTrip(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	inst := b.install(t, b.app(t, "Tracker"))
	s := b.subscription(t, inst, start)

	got, ok, err := b.subs.Subscription(ctx, s.ID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, s, got, "app_id comes from the installation, signature_schemes from hmac_enabled")

	_, ok, err = b.subs.Subscription(ctx, ids.New())
	require.NoError(t, err)
	require.False(t, ok, "an unknown subscription is absent, not an error")

	_, _, err = b.subs.LockSubscription(ctx, s.ID)
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err), "a lock outside a unit of work would end with the statement")

	err = b.uow.Do(ctx, func(ctx context.Context) error {
		locked, ok, err := b.subs.LockSubscription(ctx, s.ID)
		require.NoError(t, err)
		require.True(t, ok)
		locked.State, locked.DisabledAt = apps.SubscriptionDisabled, start.Add(time.Minute)
		locked.URL, locked.EventTypes = "https://hooks.example.com/v2", []string{"message.created", "message.updated"}
		locked.HMACGeneration, locked.ConsecutiveFailures, locked.UpdatedAt = 0, 7, start.Add(time.Minute)
		return b.subs.UpdateSubscription(ctx, locked)
	})
	require.NoError(t, err)
	got, _, err = b.subs.Subscription(ctx, s.ID)
	require.NoError(t, err)
	require.Equal(t, apps.SubscriptionDisabled, got.State)
	require.Equal(t, start.Add(time.Minute), got.DisabledAt)
	require.Equal(t, []string{"message.created", "message.updated"}, got.EventTypes)
	require.Equal(t, 7, got.ConsecutiveFailures)
	require.Equal(t, "https://hooks.example.com/v2", got.URL)

	err = b.subs.UpdateSubscription(ctx, apps.Subscription{ID: ids.New(), URL: "https://hooks.example.com/",
		EventTypes: []string{"message.created"}, State: apps.SubscriptionActive, UpdatedAt: start})
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err), "an update of a missing row is a bug")
}

func TestSubscriptionsOfAppAndInstallation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.app(t, "Tracker")
	first := b.install(t, a)
	s2 := b.subscription(t, first, start.Add(2*time.Second))
	s1 := b.subscription(t, first, start.Add(time.Second))
	first.State, first.UninstalledAt = apps.InstallationUninstalled, start.Add(time.Minute)
	require.NoError(t, b.store.UpdateInstallation(ctx, first))
	second := first
	second.ID, second.State, second.UninstalledAt = ids.New(), apps.InstallationActive, time.Time{}
	require.NoError(t, b.store.InsertInstallation(ctx, second))
	s3 := b.subscription(t, second, start.Add(3*time.Second))
	other := b.subscription(t, b.install(t, b.app(t, "Other")), start)

	list, err := b.subs.AppSubscriptions(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, []apps.Subscription{s1, s2, s3}, list, "every installation of the app, by created_at")
	require.NotContains(t, list, other)

	list, err = b.subs.AppSubscriptions(ctx, ids.New())
	require.NoError(t, err)
	require.NotNil(t, list)
	require.Empty(t, list)

	err = b.uow.Do(ctx, func(ctx context.Context) error {
		locked, err := b.subs.LockInstallationSubscriptions(ctx, first.ID)
		require.NoError(t, err)
		require.ElementsMatch(t, []apps.Subscription{s1, s2}, locked)
		require.Less(t, locked[0].ID.String(), locked[1].ID.String(), "ordered by id")
		none, err := b.subs.LockInstallationSubscriptions(ctx, ids.New())
		require.NoError(t, err)
		require.NotNil(t, none)
		return nil
	})
	require.NoError(t, err)
}

func TestDeleteSubscriptionCascades(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	s := b.subscription(t, b.install(t, b.app(t, "Tracker")), start)
	d := b.delivery(t, s, 1, apps.DeliveryPending)

	ok, err := b.subs.DeleteSubscription(ctx, s.ID)
	require.NoError(t, err)
	require.True(t, ok)
	_, ok, err = b.subs.Delivery(ctx, d.ID)
	require.NoError(t, err)
	require.False(t, ok, "deliveries go with their subscription")
	ok, err = b.subs.DeleteSubscription(ctx, s.ID)
	require.NoError(t, err)
	require.False(t, ok, "a second delete finds nothing")
}

func TestMakeHeadDue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	s := b.subscription(t, b.install(t, b.app(t, "Tracker")), start)
	b.delivery(t, s, 1, apps.DeliverySucceeded)
	head := b.delivery(t, s, 3, apps.DeliveryPending)
	later := b.delivery(t, s, 5, apps.DeliveryPending)
	now := start.Add(time.Minute)

	ok, err := b.subs.MakeHeadDue(ctx, s.ID, now)
	require.NoError(t, err)
	require.True(t, ok)
	got, _, err := b.subs.Delivery(ctx, head.ID)
	require.NoError(t, err)
	require.Equal(t, now, got.NextAttemptAt)
	require.Equal(t, now, got.UpdatedAt)
	got, _, err = b.subs.Delivery(ctx, later.ID)
	require.NoError(t, err)
	require.Equal(t, later.NextAttemptAt, got.NextAttemptAt, "only the head moves")

	empty := b.subscription(t, b.install(t, b.app(t, "Other")), start)
	ok, err = b.subs.MakeHeadDue(ctx, empty.ID, now)
	require.NoError(t, err)
	require.False(t, ok)
}

func TestDeliveryReadLockAndRedelivery(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	s := b.subscription(t, b.install(t, b.app(t, "Tracker")), start)
	dead := b.delivery(t, s, 2, apps.DeliveryDead)

	got, ok, err := b.subs.Delivery(ctx, dead.ID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, dead, got)
	_, ok, err = b.subs.Delivery(ctx, ids.New())
	require.NoError(t, err)
	require.False(t, ok)
	_, _, err = b.subs.LockDelivery(ctx, dead.ID)
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err))

	now := start.Add(time.Hour)
	err = b.uow.Do(ctx, func(ctx context.Context) error {
		d, ok, err := b.subs.LockDelivery(ctx, dead.ID)
		require.NoError(t, err)
		require.True(t, ok)
		d.Status, d.NextAttemptAt, d.LastError, d.ResponseCode = apps.DeliveryPending, now, "", 0
		d.CreatedAt, d.UpdatedAt = now, now
		return b.subs.UpdateRedelivered(ctx, d)
	})
	require.NoError(t, err)
	got, _, err = b.subs.Delivery(ctx, dead.ID)
	require.NoError(t, err)
	want := dead
	want.Status, want.NextAttemptAt, want.LastError, want.ResponseCode = apps.DeliveryPending, now, "", 0
	want.CreatedAt, want.UpdatedAt = now, now
	require.Equal(t, want, got, "attempt is kept")

	err = b.subs.UpdateRedelivered(ctx, apps.Delivery{ID: ids.New(), Status: apps.DeliveryPending, NextAttemptAt: now,
		CreatedAt: now, UpdatedAt: now})
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
}

func TestDeliveriesPageNewestFirst(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	s := b.subscription(t, b.install(t, b.app(t, "Tracker")), start)
	d1 := b.delivery(t, s, 1, apps.DeliverySucceeded)
	d2 := b.delivery(t, s, 2, apps.DeliveryDead)
	d3 := b.delivery(t, s, 3, apps.DeliverySucceeded)
	d4 := b.delivery(t, s, 4, apps.DeliveryPending)
	other := b.subscription(t, b.install(t, b.app(t, "Other")), start)
	b.delivery(t, other, 5, apps.DeliveryPending)

	page, err := b.subs.Deliveries(ctx, apps.DeliveryQuery{SubscriptionID: s.ID, Limit: 3})
	require.NoError(t, err)
	require.Equal(t, []apps.Delivery{d4, d3, d2}, page.Items)
	require.Equal(t, &apps.DeliveryPosition{EventSeq: 2, ID: d2.ID}, page.Next)

	page, err = b.subs.Deliveries(ctx, apps.DeliveryQuery{SubscriptionID: s.ID, Limit: 3, After: page.Next})
	require.NoError(t, err)
	require.Equal(t, []apps.Delivery{d1}, page.Items)
	require.Nil(t, page.Next, "the last page has no position")

	page, err = b.subs.Deliveries(ctx, apps.DeliveryQuery{SubscriptionID: s.ID, Limit: 1, Status: apps.DeliverySucceeded})
	require.NoError(t, err)
	require.Equal(t, []apps.Delivery{d3}, page.Items)
	page, err = b.subs.Deliveries(ctx, apps.DeliveryQuery{SubscriptionID: s.ID, Limit: 1, Status: apps.DeliverySucceeded, After: page.Next})
	require.NoError(t, err)
	require.Equal(t, []apps.Delivery{d1}, page.Items)
	require.Nil(t, page.Next)

	page, err = b.subs.Deliveries(ctx, apps.DeliveryQuery{SubscriptionID: ids.New(), Limit: 3})
	require.NoError(t, err)
	require.NotNil(t, page.Items)
	require.Empty(t, page.Items)

	_, err = b.subs.Deliveries(ctx, apps.DeliveryQuery{SubscriptionID: s.ID})
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err), "the use case bounds the page size")
}
