package app_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
	"bothy/server/test/harness"
)

// appendPersonal appends app.installation.updated for the installation
// inst, a personal event whose audience is its app principal.
func (b *bundle) appendPersonal(t *testing.T, inst apps.Installation) int64 {
	t.Helper()
	var seq int64
	require.NoError(t, b.uow.Do(bg, func(ctx context.Context) error {
		got, err := b.w.Services.Events.Append(ctx, eventlog.Event{Type: eventlog.AppInstallationUpdated, ResourceID: inst.ID,
			AudiencePrincipalID: inst.PrincipalID, ActorID: b.w.Robin.ID,
			Payload: map[string]any{"installation_id": inst.ID, "app_id": inst.AppID, "state": string(inst.State)}})
		seq = got.Seq
		return err
	}))
	return seq
}

func TestWebhookRoundCreatesDeliveries(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{})
	// Helper may receive its own app.installation.updated but not
	// message.created (its installation did not subscribe to it); Pager
	// only its own app.installation.updated; Gone is uninstalled.
	helper := b.registerApp(t, "Helper", []string{"message.created", "app.installation.updated"}, []string{"app.installation.updated"})
	pager := b.registerApp(t, "Pager", []string{"app.installation.updated"}, nil)
	gone := b.registerApp(t, "Gone", []string{"message.created"}, nil)
	b.drain(t)
	uninstalled := b.subscribe(t, subscription{installation: gone.ID})
	require.NoError(t, b.w.Services.Apps.UninstallApp(b.robin(t), gone.AppID))
	b.drain(t)

	active := b.subscribe(t, subscription{})
	paused := b.subscribe(t, subscription{state: apps.SubscriptionPaused})
	disabled := b.subscribe(t, subscription{state: apps.SubscriptionDisabled})
	otherType := b.subscribe(t, subscription{types: []string{"message.updated"}})
	notGranted := b.subscribe(t, subscription{installation: helper.ID, types: []string{"message.created", "app.installation.updated"}})
	notAudience := b.subscribe(t, subscription{installation: pager.ID, types: []string{"app.installation.updated"}})

	first := b.post(t, b.w.Alex, b.w.Eskalation, "Sam, the printer is on fire")
	second := b.post(t, b.w.Alex, b.w.Allgemein, "Robin, the printer is fine again")
	personal := b.appendPersonal(t, helper)
	require.Equal(t, 3, b.runRound(t))

	seqs := func(sub ids.ID) []int64 {
		var out []int64
		for _, r := range b.deliveries(t, sub) {
			require.Equal(t, "pending", r.Status)
			require.Zero(t, r.Attempt)
			require.NotNil(t, r.NextAttemptAt, "a new row is due at once")
			out = append(out, r.EventSeq)
		}
		return out
	}
	require.Equal(t, []int64{first, second}, seqs(active), "rights are checked at delivery, not in the round")
	require.Equal(t, []int64{first, second}, seqs(paused), "a paused subscription keeps collecting")
	require.Empty(t, seqs(disabled), "events arriving while disabled are not delivered (D-M2-26-1)")
	require.Empty(t, seqs(otherType))
	require.Empty(t, seqs(uninstalled))
	require.Equal(t, []int64{personal}, seqs(notGranted), "message.created is not in Helper's event subscriptions; its own event is")
	require.Empty(t, seqs(notAudience), "a personal event goes only to the installation of its audience")

	require.Len(t, b.jobsOf(t, active), 1, "one job per active subscription per round")
	require.Len(t, b.jobsOf(t, notGranted), 1)
	for _, sub := range []ids.ID{paused, disabled, otherType, uninstalled, notAudience} {
		require.Empty(t, b.jobsOf(t, sub))
	}

	// A second round over the same events (the cursor moved back by hand,
	// as only a test database allows) changes nothing.
	_, err := b.db.App.Exec(bg, `UPDATE consumer_cursors SET last_seq = $1 WHERE name = 'webhooks'`, first-1)
	require.NoError(t, err)
	require.Equal(t, 3, b.runRound(t))
	require.Equal(t, []int64{first, second}, seqs(active))
	require.Equal(t, []int64{first, second}, seqs(paused))
	require.Equal(t, []int64{personal}, seqs(notGranted))
	require.Len(t, b.jobsOf(t, active), 1)
	require.Len(t, b.jobsOf(t, notGranted), 1)
}

// expire moves the fake clock past sync.event_retention of every event so
// far and runs the partition maintenance, which drops their partitions.
func (b *bundle) expire(t *testing.T) {
	t.Helper()
	cfg := b.w.Services.Config
	b.advance(t, cfg.Sync.EventRetention+2*cfg.Sync.PartitionInterval)
	harness.CreatePartitions(t, b.db, cfg, b.now())
}

// TestDeliveryGapDisables (Design note 5 e): the head's event left the log
// while the subscription was paused; after the resume the subscription is
// disabled with cause gap and every expired pending row is dead; a second
// re-enable delivers the first retained event.
func TestDeliveryGapDisables(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{})
	sub := b.subscribe(t, subscription{state: apps.SubscriptionPaused})
	first := b.post(t, b.w.Alex, b.w.Eskalation, "first, soon gone")
	second := b.post(t, b.w.Alex, b.w.Eskalation, "second, soon gone")
	b.runRound(t)
	b.expire(t)
	retained := b.post(t, b.w.Alex, b.w.Eskalation, "retained")
	b.runRound(t)
	require.Len(t, b.deliveries(t, sub), 3)

	b.setState(t, sub, apps.SubscriptionActive)
	b.deliver(t, sub)
	require.Empty(t, b.recv.requests())
	s := b.subscription(t, sub)
	require.Equal(t, "disabled", s.State)
	require.NotNil(t, s.DisabledAt)
	rows := b.deliveries(t, sub)
	for _, r := range rows[:2] {
		require.Equal(t, "dead", r.Status)
		require.Equal(t, "event_expired", *r.LastError)
		require.Zero(t, r.Attempt, "an expired head was never sent")
	}
	require.Equal(t, "pending", rows[2].Status)
	audits := b.transitions(t)
	require.Len(t, audits, 1)
	require.Equal(t, map[string]any{"subscription_id": sub.String(), "from_state": "active", "to_state": "disabled",
		"cause": "gap", "from_seq": first, "to_seq": second}, audits[0].Details)

	b.setState(t, sub, apps.SubscriptionActive)
	b.deliver(t, sub)
	got := b.recv.requests()
	require.Len(t, got, 1)
	require.Equal(t, rows[2].EventID.String(), got[0].id)
	require.Equal(t, retained, b.subscription(t, sub).LastDeliveredSeq)
	require.Equal(t, "active", b.subscription(t, sub).State)
}

// TestConsumerLossDisablesSubscriptions (Design note 3 f): the consumer
// webhooks itself fell behind retention; the round disables every live
// subscription with cause gap, makes their pending rows dead and creates
// nothing for the retained events of that round. A re-enable delivers the
// next new event and does not disable again.
func TestConsumerLossDisablesSubscriptions(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{})
	active := b.subscribe(t, subscription{})
	paused := b.subscribe(t, subscription{state: apps.SubscriptionPaused})
	first := b.post(t, b.w.Alex, b.w.Eskalation, "seen by the consumer")
	b.runRound(t)
	lost := b.post(t, b.w.Alex, b.w.Eskalation, "never seen by the consumer")
	b.expire(t)
	b.post(t, b.w.Alex, b.w.Eskalation, "retained, in the round of the loss")
	jobsBefore := len(b.jobsOf(t, active))
	b.runRound(t)

	for _, sub := range []ids.ID{active, paused} {
		s := b.subscription(t, sub)
		require.Equal(t, "disabled", s.State)
		require.NotNil(t, s.DisabledAt)
		rows := b.deliveries(t, sub)
		require.Len(t, rows, 1, "no row for the retained event of the round")
		require.Equal(t, first, rows[0].EventSeq)
		require.Equal(t, "dead", rows[0].Status)
		require.Equal(t, "event_expired", *rows[0].LastError)
	}
	require.Len(t, b.jobsOf(t, active), jobsBefore, "no job for the round of the loss")
	audits := b.transitions(t)
	require.Len(t, audits, 2)
	for _, a := range audits {
		require.Equal(t, "gap", a.Details["cause"])
		require.Equal(t, first, a.Details["from_seq"], "the lowest expired row")
		require.Equal(t, lost, a.Details["to_seq"])
	}

	b.setState(t, active, apps.SubscriptionActive)
	next := b.post(t, b.w.Alex, b.w.Eskalation, "after the re-enable")
	b.runRound(t)
	b.deliver(t, active)
	got := b.recv.requests()
	require.Len(t, got, 1)
	require.Equal(t, b.deliveries(t, active)[1].EventID.String(), got[0].id)
	require.Equal(t, next, b.subscription(t, active).LastDeliveredSeq)
	require.Equal(t, "active", b.subscription(t, active).State, "the loss is not found again")
	require.Len(t, b.transitions(t), 2)
}

// TestDeliveryQuotaPauses (Design note 3 d, D-M2-26-2): with a blocked
// receiver, the round whose row brings the open deliveries to
// webhook.max_pending_per_subscription pauses the subscription; rows keep
// being created; after a resume the next round does not pause again, and
// the backlog drains in order.
func TestDeliveryQuotaPauses(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{change: func(o *app.DeliveryOptions) { o.MaxPendingPerSubscription = 3 }})
	sub := b.subscribe(t, subscription{})
	arrived, release := make(chan struct{}, 16), make(chan struct{})
	b.recv.answer(func(_ int, w http.ResponseWriter, _ *http.Request) {
		arrived <- struct{}{}
		<-release
		w.WriteHeader(http.StatusOK)
	})
	b.post(t, b.w.Alex, b.w.Eskalation, "1")
	b.runRound(t)
	done := make(chan error, 1)
	go func() { done <- b.d.Deliver(bg, sub) }()
	<-arrived // the receiver holds the first delivery

	b.post(t, b.w.Alex, b.w.Eskalation, "2")
	b.runRound(t)
	require.Equal(t, "active", b.subscription(t, sub).State, "two open deliveries are below the quota")
	b.post(t, b.w.Alex, b.w.Eskalation, "3")
	b.runRound(t)
	require.Equal(t, "paused", b.subscription(t, sub).State, "the third open delivery reaches the quota")
	audits := b.transitions(t)
	require.Len(t, audits, 1)
	require.Equal(t, map[string]any{"subscription_id": sub.String(), "from_state": "active", "to_state": "paused", "cause": "max_pending"},
		audits[0].Details)

	b.post(t, b.w.Alex, b.w.Eskalation, "4")
	b.post(t, b.w.Alex, b.w.Eskalation, "5")
	b.runRound(t)
	require.Len(t, b.deliveries(t, sub), 5, "rows keep being created while paused")

	b.setState(t, sub, apps.SubscriptionActive)
	b.post(t, b.w.Alex, b.w.Eskalation, "6")
	b.runRound(t)
	require.Equal(t, "active", b.subscription(t, sub).State, "a resumed backlog above the quota is not paused again")
	require.Len(t, b.transitions(t), 1)

	close(release)
	require.NoError(t, <-done)
	rows := b.deliveries(t, sub)
	got := b.recv.requests()
	require.Len(t, got, 6)
	for i, r := range rows {
		require.Equal(t, "succeeded", r.Status)
		require.Equal(t, r.EventID.String(), got[i].id, "in seq order")
	}
}
