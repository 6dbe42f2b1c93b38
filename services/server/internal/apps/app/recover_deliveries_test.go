package app_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/adapters/deliveryjobs"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/webhookstest"
	"bothy/server/internal/authz"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/ids"
)

// The send side of recoverWebhookDeliveries (ADR 0079, D-M2-26-50): the
// recovered deliveries rejoin the subscription's order through the head
// rule alone, with River running the jobs. The rows, the window, the bound
// and the answers of the operation are TestRecoverWebhookDeliveries in
// adapters/httpapi.

// recovery returns the recovery use case over the world's modules with
// the bound maxDeliveries (webhook.recover_max_deliveries) and the
// world's sync.event_retention.
func (b *bundle) recovery(t testing.TB, maxDeliveries int) *app.Recovery {
	t.Helper()
	s := b.w.Services
	r, err := app.NewRecovery(app.RecoveryDeps{
		UnitOfWork: s.UnitOfWork, Authorizer: s.Authorizer, Audit: s.Audit, Installations: s.AppsStore, Store: s.SubscriptionStore,
		Log: s.Log, Scheduler: deliveryjobs.NewScheduler(s.Jobs.Inserter()), Clock: b.clock,
	}, app.RecoveryOptions{MaxDeliveries: maxDeliveries, EventRetention: s.Config.Sync.EventRetention})
	require.NoError(t, err)
	return r
}

// deadRows posts texts in Eskalation as Alex and leaves one dead delivery
// per text (not_authorized, no request: G-6 is revoked for the attempt and
// given back afterwards), returning the rows in seq order.
func (b *bundle) deadRows(t testing.TB, texts ...string) []deliveryRow {
	t.Helper()
	for _, text := range texts {
		b.post(t, b.w.Alex, b.w.Eskalation, text)
	}
	b.runRound(t)
	require.NoError(t, b.w.Services.Apps.DeleteAppGrant(b.robin(t), b.appID, b.w.G6.ID))
	b.deliver(t, b.sub)
	g, err := b.w.Services.Apps.CreateAppGrant(b.robin(t), app.CreateAppGrant{AppID: b.appID, SpaceID: b.w.Support,
		ChannelID: b.w.Eskalation, Level: authz.LevelWrite})
	require.NoError(t, err)
	b.w.G6 = g
	rows := b.deliveries(t, b.sub)
	require.Len(t, rows, len(texts))
	for _, r := range rows {
		require.Equal(t, "dead", r.Status)
		require.Equal(t, "not_authorized", *r.LastError)
	}
	require.Empty(t, b.recv.requests(), "a dead delivery of a revoked right sent nothing")
	return rows
}

// recover recovers Tracker's deliveries created in [since, until) as
// Robin; a zero until means now.
func (b *bundle) recover(t testing.TB, r *app.Recovery, since, until time.Time) apps.Recovery {
	t.Helper()
	got, err := r.RecoverDeliveries(b.robin(t), apps.RecoverDeliveries{SubscriptionID: b.sub, Since: since, Until: until})
	require.NoError(t, err)
	return got
}

// TestRecoveredDeliveriesGoBeforeANewerPendingOne: two dead deliveries are
// recovered while a newer one waits, due, on a paused subscription. After
// the resume the worker sends them in seq order, the recovered older ones
// first, with their own webhook-ids, one attempt at a time.
func TestRecoveredDeliveriesGoBeforeANewerPendingOne(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{realClock: true})
	since := b.now()
	dead := b.deadRows(t, "first", "second")
	b.setState(t, b.sub, apps.SubscriptionPaused)
	b.postAndRound(t, "third")
	rows := b.deliveries(t, b.sub)
	require.Equal(t, "pending", rows[2].Status, "the newer delivery waits while paused")

	jobs := len(b.w.Scheduled(t, b.sub))
	got := b.recover(t, b.recovery(t, 10), since, time.Time{})
	require.Equal(t, 2, got.Recovered)
	require.False(t, got.HasMore)
	require.Equal(t, dead[0].EventSeq, got.FirstSeq)
	require.Equal(t, dead[1].EventSeq, got.LastSeq)
	require.Len(t, b.w.Scheduled(t, b.sub), jobs, "no job while paused")

	b.secondWorker(t)
	b.setState(t, b.sub, apps.SubscriptionActive)
	b.recv.wait(t, 3)
	eventually(t, "all succeeded", func() bool { return b.statusesAre(t, "succeeded", "succeeded", "succeeded") })
	require.Equal(t, []string{dead[0].EventID.String(), dead[1].EventID.String(), rows[2].EventID.String()}, ids2(b.recv.requests()),
		"the recovered older deliveries go first, in seq order, with their webhook-ids")
	require.Equal(t, 1, b.recv.peakInFlight(), "one attempt in flight at a time")
	for i, r := range b.deliveries(t, b.sub)[:2] {
		require.Equal(t, 1, r.Attempt, "delivery %d: its attempt count went on from 0", i)
	}
	require.Equal(t, rows[2].EventSeq, b.subscription(t, b.sub).LastDeliveredSeq)
}

// TestRecoveryDuringAnAttemptKeepsOneInFlight: the recovery commits while
// the receiver holds the attempt of a newer delivery. That attempt ends
// first; then the recovered deliveries go out in seq order, never two
// attempts at once (ADR 0069).
func TestRecoveryDuringAnAttemptKeepsOneInFlight(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{realClock: true})
	since := b.now()
	dead := b.deadRows(t, "first", "second")

	held, released := make(chan struct{}), make(chan struct{})
	b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			close(held)
			<-released
		}
		w.WriteHeader(http.StatusOK)
	})
	b.post(t, b.w.Alex, b.w.Eskalation, "third")
	rows := b.roundRows(t)
	b.secondWorker(t)
	<-held

	got := b.recover(t, b.recovery(t, 10), since, time.Time{})
	require.Equal(t, 2, got.Recovered)
	b.waitJobsIdle(t)
	close(released)
	b.recv.wait(t, 3)
	eventually(t, "all succeeded", func() bool { return b.statusesAre(t, "succeeded", "succeeded", "succeeded") })
	require.Equal(t, []string{rows[2].EventID.String(), dead[0].EventID.String(), dead[1].EventID.String()}, ids2(b.recv.requests()),
		"the attempt in flight ends first, then the recovered ones in seq order")
	require.Equal(t, 1, b.recv.peakInFlight(), "one attempt in flight at a time")
}

// TestRecoveryIsBoundedAndGoesOn: with webhook.recover_max_deliveries 2,
// three dead deliveries take two requests with the same window (the second
// names the until the first answered): the lowest seqs first with
// has_more, then the last one; a third request finds nothing, because a
// recovered delivery's created_at left the window, even after the
// recovered ones went dead again.
// One job per request that recovered something; the audit entries name the
// window and the range, never anything but codes and numbers.
func TestRecoveryIsBoundedAndGoesOn(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{})
	since := b.now()
	dead := b.deadRows(t, "first", "second", "third")
	b.advance(t, time.Minute)
	r := b.recovery(t, 2)
	jobs := len(b.w.Scheduled(t, b.sub))

	first := b.recover(t, r, since, time.Time{})
	now := b.now()
	require.Equal(t, apps.Recovery{Recovered: 2, HasMore: true, Since: since, Until: now,
		FirstSeq: dead[0].EventSeq, LastSeq: dead[1].EventSeq}, first)
	rows := b.deliveries(t, b.sub)
	for _, row := range rows[:2] {
		require.Equal(t, "pending", row.Status)
		require.True(t, row.NextAttemptAt.Equal(now), "due at once")
		require.True(t, row.CreatedAt.Equal(now), "a new retry window")
		require.Nil(t, row.LastError)
		require.Zero(t, row.Attempt, "the attempt count is kept")
	}
	require.Equal(t, "dead", rows[2].Status, "beyond the bound")
	scheduled := b.w.Scheduled(t, b.sub)
	require.Len(t, scheduled, jobs+1, "one job")
	require.Equal(t, webhookstest.AtOnce, scheduled[0], "due at once")

	b.advance(t, time.Second)
	second := b.recover(t, r, since, first.Until)
	require.Equal(t, 1, second.Recovered)
	require.False(t, second.HasMore)
	require.Equal(t, dead[2].EventSeq, second.FirstSeq)
	require.NoError(t, b.w.Services.Apps.DeleteAppGrant(b.robin(t), b.appID, b.w.G6.ID))
	b.deliver(t, b.sub)
	require.True(t, b.statusesAre(t, "dead", "dead", "dead"), "dead again without a request")
	b.advance(t, time.Second)
	before := b.w.Scheduled(t, b.sub)
	third := b.recover(t, r, since, first.Until)
	require.Zero(t, third.Recovered, "the recovered deliveries left the window")
	require.False(t, third.HasMore)
	require.Equal(t, before, b.w.Scheduled(t, b.sub), "no job for a request that recovered nothing")

	entries := audittest.List(t, b.db.App, audittest.Filter{Action: "webhook_out.redeliver", Outcome: "allow"})
	require.Len(t, entries, 3)
	require.Equal(t, "webhook_delivery", entries[0].ResourceKind)
	require.Equal(t, ids.Zero, entries[0].ResourceID, "the deliveries of the subscription, a collection")
	require.Equal(t, map[string]any{"subscription_id": b.sub.String(), "app_id": b.appID.String(),
		"since_unix_us": since.UnixMicro(), "until_unix_us": now.UnixMicro(), "recovered": int64(2), "has_more": true,
		"first_seq": dead[0].EventSeq, "last_seq": dead[1].EventSeq}, entries[0].Details)
	require.NotContains(t, entries[2].Details, "first_seq", "no range when nothing was recovered")
}
