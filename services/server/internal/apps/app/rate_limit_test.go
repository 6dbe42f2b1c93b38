package app_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/webhookstest"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// limit sets sub's max_per_second as Robin does (updateWebhookSubscription).
func (b *bundle) limit(t testing.TB, sub ids.ID, perSecond int) apps.Subscription {
	t.Helper()
	got, err := b.w.Services.Webhooks.UpdateSubscription(b.robin(t), apps.UpdateSubscription{ID: sub, MaxPerSecond: &perSecond})
	require.NoError(t, err)
	return got.Subscription
}

// TestDeliveryRateLimitWaitsForTheWindow: with max_per_second 2, one run
// sends two deliveries, waits for the window (on the fake clock), sends
// two more and so on, in seq order; waiting counts no attempt and no
// failure.
func TestDeliveryRateLimitWaitsForTheWindow(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{})
	require.Equal(t, 2, b.limit(t, b.sub, 2).MaxPerSecond)
	for _, text := range []string{"one", "two", "three", "four", "five"} {
		b.post(t, b.w.Alex, b.w.Eskalation, text)
	}
	b.runRound(t)
	start := b.fake.Now()
	b.deliver(t, b.sub)

	rows := b.deliveries(t, b.sub)
	require.Len(t, rows, 5)
	var delivered []time.Time
	for i, r := range rows {
		require.Equal(t, "succeeded", r.Status, "delivery %d", i)
		require.Equal(t, 1, r.Attempt, "waiting is no attempt")
		delivered = append(delivered, *r.DeliveredAt)
	}
	for i := 2; i < len(delivered); i++ {
		require.GreaterOrEqual(t, delivered[i].Sub(delivered[i-2]), time.Second, "delivery %d waited for the window", i)
	}
	require.GreaterOrEqual(t, b.fake.Now().Sub(start), 2*time.Second, "the run waited twice")
	got := b.recv.requests()
	require.Equal(t, ids2(got), []string{rows[0].EventID.String(), rows[1].EventID.String(), rows[2].EventID.String(),
		rows[3].EventID.String(), rows[4].EventID.String()})
	require.Zero(t, b.subscription(t, b.sub).ConsecutiveFailures)
}

// TestDeliveryRateLimitThroughTwoWorkers: two worker runtimes deliver a
// subscription limited to 4 a second, as River runs them; the receiver
// never gets more than 4 requests within any second, in seq order, each
// event once, although every round and chain wakes both workers.
func TestDeliveryRateLimitThroughTwoWorkers(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{worker: true, realClock: true})
	b.secondWorker(t)
	const perSecond, events = 4, 14
	b.limit(t, b.sub, perSecond)
	// A receiver that answers at once sends the window's whole burst.
	b.recv.answer(func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	for i := range events {
		b.post(t, b.w.Alex, b.w.Eskalation, "paced "+string(rune('a'+i)))
		if i%5 == 0 {
			b.runRound(t)
		}
	}
	b.runRound(t)
	b.recv.wait(t, events)
	eventually(t, "all succeeded", func() bool {
		for _, r := range b.deliveries(t, b.sub) {
			if r.Status != "succeeded" {
				return false
			}
		}
		return true
	})
	b.waitJobsIdle(t)
	got := b.recv.requests()
	require.Len(t, got, events, "each event once")
	rows := b.deliveries(t, b.sub)
	var want []string
	var arrivals []time.Time
	for i, r := range rows {
		want = append(want, r.EventID.String())
		require.Equal(t, 1, r.Attempt, "delivery %d: waiting is no attempt", i)
	}
	for _, r := range got {
		arrivals = append(arrivals, r.at)
	}
	require.Equal(t, want, ids2(got), "seq order")
	require.LessOrEqual(t, webhookstest.MostWithinASecond(arrivals), perSecond, "no second got more than the limit: %s", webhookstest.Offsets(arrivals))
	require.Equal(t, 1, b.recv.peakInFlight())
}

// TestRateLimitIsValidatedAndRemovable: a limit above
// webhook.rate_limit_max is validation_failed at /max_per_second and
// changes nothing; 0 removes a limit.
func TestRateLimitIsValidatedAndRemovable(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{})
	tooMany := 101 // webhook.rate_limit_max is 100 by default
	_, err := b.w.Services.Webhooks.UpdateSubscription(b.robin(t), apps.UpdateSubscription{ID: b.sub, MaxPerSecond: &tooMany})
	e, ok := errs.As(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, errs.CodeValidationFailed, e.Code)
	require.Equal(t, []errs.FieldError{errs.Field("/max_per_second", "maximum")}, e.Fields)

	_, err = b.w.Services.Webhooks.CreateSubscription(b.robin(t), apps.CreateSubscription{AppID: b.appID,
		URL: b.recv.url(trackerPath), EventTypes: []string{"message.created"}, MaxPerSecond: tooMany})
	e, ok = errs.As(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, []errs.FieldError{errs.Field("/max_per_second", "maximum")}, e.Fields)

	subs, err := b.w.Services.Webhooks.ListSubscriptions(b.robin(t), b.appID)
	require.NoError(t, err)
	require.Len(t, subs, 1, "the refused create made nothing")
	require.Zero(t, subs[0].MaxPerSecond, "the refused update changed nothing")

	require.Equal(t, 100, b.limit(t, b.sub, 100).MaxPerSecond)
	require.Zero(t, b.limit(t, b.sub, 0).MaxPerSecond, "0 removes the limit")
	created, err := b.w.Services.Webhooks.CreateSubscription(b.robin(t), apps.CreateSubscription{AppID: b.appID,
		URL: b.recv.url(trackerPath), EventTypes: []string{"message.created"}, MaxPerSecond: 7})
	require.NoError(t, err)
	require.Equal(t, 7, created.MaxPerSecond)
	subs, err = b.w.Services.Webhooks.ListSubscriptions(b.robin(t), b.appID)
	require.NoError(t, err)
	stored := map[ids.ID]int{}
	for _, s := range subs {
		stored[s.ID] = s.MaxPerSecond
	}
	require.Equal(t, map[ids.ID]int{b.sub: 0, created.ID: 7}, stored)
}
