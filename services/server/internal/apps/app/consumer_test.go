package app_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/jobs"
)

// lastSeq returns the seq of the newest event of type whose audience is
// audience (Zero for any).
func (b *bundle) lastSeq(t *testing.T, typ string, audience ids.ID) int64 {
	t.Helper()
	var seq int64
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT max(seq) FROM event_log WHERE type = $1
		AND ($2::uuid IS NULL OR audience_principal_id = $2)`, typ, audience).Scan(&seq))
	return seq
}

// jobs returns how many apps.webhook_deliver jobs each subscription has.
func (b *bundle) jobs(t *testing.T, subs ...ids.ID) map[ids.ID]int {
	t.Helper()
	out := map[ids.ID]int{}
	for _, sub := range subs {
		out[sub] = len(b.w.Scheduled(t, sub))
	}
	return out
}

func TestWebhookRoundCreatesDeliveries(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{})
	helper := b.registerApp(t, "Helper", []string{"message.created", "app.installation.updated"}, nil)
	pager := b.registerApp(t, "Pager", []string{"app.installation.updated"}, nil)
	gone := b.registerApp(t, "Gone", []string{"message.created"}, nil)
	b.drain(t)

	active := b.sub
	paused := b.create(t, ids.Zero, nil, false).ID
	b.setState(t, paused, apps.SubscriptionPaused)
	disabled := b.create(t, ids.Zero, nil, false).ID
	b.disable(t, disabled)
	notGranted := b.create(t, helper.AppID, []string{"message.created", "app.installation.updated"}, false).ID
	otherType := b.create(t, pager.AppID, []string{"app.installation.updated"}, false).ID
	uninstalled := b.create(t, gone.AppID, nil, false).ID
	require.NoError(t, b.w.Services.Apps.UninstallApp(b.robin(t), gone.AppID))
	// Helper loses messages:read, so its installation no longer subscribes
	// to message.created (M2-24 narrows it); the change is a personal event
	// of Helper.
	_, err := b.w.Services.Apps.SetAppScopes(b.robin(t), app.SetAppScopes{AppID: helper.AppID, Scopes: []string{"events:subscribe", "messages:write"}})
	require.NoError(t, err)
	personal := b.lastSeq(t, "app.installation.updated", helper.PrincipalID)
	first := b.post(t, b.w.Alex, b.w.Eskalation, "Sam, the printer is on fire")
	second := b.post(t, b.w.Alex, b.w.Allgemein, "Robin, the printer is fine again")
	all := []ids.ID{active, paused, disabled, notGranted, otherType, uninstalled}
	jobs := b.jobs(t, all...)
	var cursor int64
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT last_seq FROM consumer_cursors WHERE name = 'webhooks'`).Scan(&cursor))
	require.Equal(t, 4, b.runRound(t), "the uninstall, the scope change and two messages")

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
	check := func() {
		t.Helper()
		require.Equal(t, []int64{first}, seqs(active), "routed by rights: Tracker cannot see Allgemein, so no row (D-M2-26-35)")
		require.Equal(t, []int64{first}, seqs(paused), "a paused subscription keeps collecting")
		require.Less(t, first, second)
		require.Empty(t, seqs(disabled), "events arriving while disabled are not delivered (D-M2-26-1)")
		require.Empty(t, seqs(uninstalled), "uninstalled")
		require.Equal(t, []int64{personal}, seqs(notGranted),
			"message.created left Helper's event subscriptions; its own personal event goes to it")
		require.Empty(t, seqs(otherType), "message.created is not in Pager's event types, and Helper's event is not Pager's")
		after := b.jobs(t, all...)
		for _, sub := range all {
			want := jobs[sub]
			if sub == active || sub == notGranted {
				want++ // one job per active subscription per round
			}
			require.Equal(t, want, after[sub])
		}
	}
	check()

	// A second round over the same events (the cursor moved back by hand,
	// as only a test database allows) changes nothing.
	_, err = b.db.App.Exec(bg, `UPDATE consumer_cursors SET last_seq = $1 WHERE name = 'webhooks'`, cursor)
	require.NoError(t, err)
	require.Equal(t, 4, b.runRound(t))
	check()
}

// TestDeliveryGapDisables (D-M2-26-5): the head's event left the log
// while the subscription was paused; after the resume the subscription is
// disabled with cause gap and every expired pending row is dead; a second
// re-enable delivers the first retained event.
func TestDeliveryGapDisables(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{})
	sub := b.sub
	b.setState(t, sub, apps.SubscriptionPaused)
	first := b.post(t, b.w.Alex, b.w.Eskalation, "first, soon gone")
	second := b.post(t, b.w.Alex, b.w.Eskalation, "second, soon gone")
	b.runRound(t)
	b.w.ExpireLog(t)
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

// TestConsumerLossDisablesSubscriptions (D-M2-26-5): the consumer
// webhooks itself fell behind retention; the round disables every live
// subscription with cause gap, makes their pending rows dead and creates
// nothing for the retained events of that round. A re-enable delivers the
// next new event and does not disable again.
func TestConsumerLossDisablesSubscriptions(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{})
	active := b.sub
	paused := b.create(t, ids.Zero, nil, false).ID
	b.setState(t, paused, apps.SubscriptionPaused)
	first := b.post(t, b.w.Alex, b.w.Eskalation, "seen by the consumer")
	b.runRound(t)
	lost := b.post(t, b.w.Alex, b.w.Eskalation, "never seen by the consumer")
	b.w.ExpireLog(t)
	b.post(t, b.w.Alex, b.w.Eskalation, "retained, in the round of the loss")
	jobsBefore := len(b.w.Scheduled(t, active))
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
	require.Len(t, b.w.Scheduled(t, active), jobsBefore, "no job for the round of the loss")
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

// TestDeliveryQuotaPauses (D-M2-26-2): with a blocked
// receiver, the round whose row brings the open deliveries to
// webhook.max_pending_per_subscription pauses the subscription; rows keep
// being created; after a resume the next round does not pause again, and
// the backlog drains in order.
func TestDeliveryQuotaPauses(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{change: func(o *app.DeliveryOptions) { o.MaxPendingPerSubscription = 3 }})
	sub := b.sub
	arrived, release := make(chan struct{}, 16), make(chan struct{})
	b.recv.answer(func(_ int, w http.ResponseWriter, _ *http.Request) {
		arrived <- struct{}{}
		<-release
		w.WriteHeader(http.StatusOK)
	})
	b.postAndRound(t, "1")
	done := make(chan error, 1)
	go func() { done <- b.d.Deliver(bg, sub) }()
	<-arrived // the receiver holds the first delivery

	b.postAndRound(t, "2")
	require.Equal(t, "active", b.subscription(t, sub).State, "two open deliveries are below the quota")
	b.postAndRound(t, "3")
	require.Equal(t, "paused", b.subscription(t, sub).State, "the third open delivery reaches the quota")
	audits := b.transitions(t)
	require.Len(t, audits, 1)
	require.Equal(t, map[string]any{"subscription_id": sub.String(), "from_state": "active", "to_state": "paused", "cause": "max_pending"},
		audits[0].Details)

	b.post(t, b.w.Alex, b.w.Eskalation, "4")
	b.postAndRound(t, "5")
	require.Len(t, b.deliveries(t, sub), 5, "rows keep being created while paused")

	b.setState(t, sub, apps.SubscriptionActive)
	b.postAndRound(t, "6")
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

// TestDeliveryQuotaPausedInTheRoundIsNotWoken: the round schedules the
// subscriptions it served once, at its end (EndRound), and only those
// still active then. A round whose second event makes the subscription
// reach webhook.max_pending_per_subscription pauses it and leaves no job
// for it, although its first event found it active.
func TestDeliveryQuotaPausedInTheRoundIsNotWoken(t *testing.T) {
	t.Parallel()
	// With inserts of one row each (D-M2-26-82), the quota pauses in the
	// round's second insert a subscription its first had made due.
	for _, insertMax := range []int{100, 1} {
		b := deliveryWorld(t, options{change: func(o *app.DeliveryOptions) {
			o.MaxPendingPerSubscription = 2
			o.RoundInsertMaxDeliveries = insertMax
		}})
		sub := b.sub
		jobs := b.jobs(t, sub)[sub]
		b.post(t, b.w.Alex, b.w.Eskalation, "Sam, the printer is on fire")
		b.post(t, b.w.Alex, b.w.Eskalation, "Robin, it is still on fire")
		require.Equal(t, 2, b.runRound(t))
		require.Equal(t, "paused", b.subscription(t, sub).State, "the second open delivery reaches the quota")
		require.Len(t, b.deliveries(t, sub), 2)
		require.Equal(t, jobs, b.jobs(t, sub)[sub], "a subscription the round paused is not woken at its end")
	}
}

// TestRoundStartsItsDeliveryJobInTheWorker (ADR 0092): the delivery job a
// round inserts starts in the worker that ran the round, right after the
// commit, before River could take it (it is due
// jobs.in_process_start_fallback later), and deletes its row when its run
// ends; River would have kept it completed.
func TestRoundStartsItsDeliveryJobInTheWorker(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{worker: true, realClock: true})
	arrived, release := make(chan struct{}), make(chan struct{})
	b.recv.answer(func(_ int, w http.ResponseWriter, _ *http.Request) {
		close(arrived)
		<-release
		w.WriteHeader(http.StatusOK)
	})
	b.postAndRound(t, "started where the round ran")
	<-arrived
	// The round's job is the first; the run's lease wake-up came after it.
	var job int64
	var state string
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT id, state::text FROM river_job
		WHERE kind = 'apps.webhook_deliver' ORDER BY id LIMIT 1`).Scan(&job, &state))
	require.Equal(t, "scheduled", state, "River has not taken the job its worker runs")
	close(release)
	eventually(t, "the round's job leaves no row behind", func() bool {
		var left bool
		require.NoError(t, b.db.App.QueryRow(bg, `SELECT EXISTS (SELECT FROM river_job WHERE id = $1)`, job).Scan(&left))
		return !left
	})
	require.Equal(t, "succeeded", b.deliveries(t, b.sub)[0].Status)
}

// tracedRound returns a world whose worker runs the jobs and whose pool c
// traces, after Alex's post and the round that delivers it, with c
// reset before the round.
func tracedRound(t *testing.T) (*bundle, *queryLog) {
	t.Helper()
	c := newQueryLog()
	b := deliveryWorld(t, options{worker: true, realClock: true, tracer: c})
	b.post(t, b.w.Alex, b.w.Eskalation, "Sam, the printer is back")
	c.reset()
	b.runRound(t)
	return b, c
}

// TestRoundsJobEndsItsRowWithItsRunsRecord (D-M2-26-87): the job a round
// started in its worker for one subscription deletes its row in the round
// trip of the run's record and COMMIT, once the claim's lease and its
// wake-up committed, and not in a transaction of its own after the run.
func TestRoundsJobEndsItsRowWithItsRunsRecord(t *testing.T) {
	t.Parallel()
	b, c := tracedRound(t)
	b.recv.wait(t, 1)
	eventually(t, "the round's job leaves no row behind", func() bool {
		var left bool
		require.NoError(t, b.db.App.QueryRow(bg, `SELECT EXISTS (SELECT FROM river_job WHERE $1 = ANY(tags))`,
			jobs.TagInProcess).Scan(&left))
		return !left
	})
	require.Equal(t, "succeeded", b.deliveries(t, b.sub)[0].Status)
	var record []string
	for _, trip := range c.Take() {
		for _, sql := range trip {
			require.False(t, strings.Contains(sql, "DELETE FROM river_job") && strings.Contains(sql, "set_config"),
				"no delete of the row in a transaction of its own: %s", sql)
		}
		if slices.ContainsFunc(trip, func(sql string) bool { return strings.Contains(sql, "WebhookSubscriptionRecordAttempt") }) {
			record = trip
		}
	}
	require.NotNil(t, record, "the run recorded")
	require.True(t, slices.ContainsFunc(record, func(sql string) bool { return strings.HasPrefix(sql, "DELETE FROM river_job") }),
		"the row's delete travels with the record: %v", record)
	require.Equal(t, "commit", record[len(record)-1], "and with the COMMIT")
}

// TestRoundSendsItsRowsAndJobsWithItsCommit (ADR 0093, D-M2-26-84,
// D-M2-26-93): a round whose rows cannot bring a subscription to its
// quota inserts them, and the jobs that all start in its worker, in the
// round trip of the round's cursor write and COMMIT; the open counts came
// with the candidates, which travelled with the reach (Eskalation was
// routed as the world was built). The round takes four round trips: its
// frame's two, the reach with the candidates, the commit. The delivery
// still goes.
func TestRoundSendsItsRowsAndJobsWithItsCommit(t *testing.T) {
	t.Parallel()
	b, c := tracedRound(t)
	// The worker's River polls on the same pool meanwhile; the round's trips
	// are those with a statement of the round.
	var trips [][]string
	for _, trip := range c.TakeNames() {
		if slices.ContainsFunc(trip, func(name string) bool { return roundStatements[name] }) {
			trips = append(trips, trip)
		}
	}
	require.Len(t, trips, 4, "the frame's two (RunRound reads the cursor), the reach with the candidates, the commit: %v", trips)
	require.Equal(t, []string{"GrantHoldersByPlaces", "WebhookSubscriptionDeliveryCandidatesOf"}, trips[2])
	require.Equal(t, []string{"WebhookDeliveryInsertForRound", "JobInsertFastMany", "ConsumerCursorUpdate", "commit"},
		trips[len(trips)-1])
	require.NotContains(t, slices.Concat(trips...), "WebhookDeliveryCountPending", "the open counts come with the candidates")
	b.recv.wait(t, 1)
	eventually(t, "the delivery is recorded", func() bool { return b.deliveries(t, b.sub)[0].Status == "succeeded" })
}

// roundStatements are the statements of a consumer round of webhooks, by
// their sqlc names: a trip with one of them is a round trip of the round.
var roundStatements = map[string]bool{
	"ConsumerCursorGet": true, "EventListAfter": true, "EventListRecentAfter": true, "ConsumerCursorLock": true,
	"EventLogWatermarkMinRetainedSeq": true, "GrantHoldersByPlaces": true,
	"WebhookSubscriptionDeliveryCandidatesOf": true, "WebhookDeliveryCountPending": true,
	"WebhookDeliveryInsertForRound": true, "ConsumerCursorUpdate": true, "EventHeadSeq": true,
}

// TestRoundReplayedKeepsItsRowsAndItsQuota (D-M2-26-84): a round that
// handles events again (its cursor moved back) makes no second row, does
// not count the rows that exist toward the quota and wakes no
// subscription for them. With a quota of 3 the replayed rows could reach
// it, which alone keeps the insert out of the commit; with 5 they could
// not, and only their events at or below the subscription's last row do.
func TestRoundReplayedKeepsItsRowsAndItsQuota(t *testing.T) {
	t.Parallel()
	for _, quota := range []int{3, 5} {
		b := deliveryWorld(t, options{change: func(o *app.DeliveryOptions) { o.MaxPendingPerSubscription = quota }})
		sub := b.sub
		var cursor int64
		require.NoError(t, b.db.App.QueryRow(bg, `SELECT last_seq FROM consumer_cursors WHERE name = 'webhooks'`).Scan(&cursor))
		b.post(t, b.w.Alex, b.w.Eskalation, "Sam, the printer is back")
		b.post(t, b.w.Alex, b.w.Eskalation, "Robin, so is the scanner")
		require.Equal(t, 2, b.runRound(t))
		require.Len(t, b.deliveries(t, sub), 2)
		jobs := b.jobs(t, sub)[sub]
		_, err := b.db.App.Exec(bg, `UPDATE consumer_cursors SET last_seq = $1 WHERE name = 'webhooks'`, cursor)
		require.NoError(t, err)
		require.Equal(t, 2, b.runRound(t), "quota %d: both events handled again", quota)
		require.Len(t, b.deliveries(t, sub), 2, "quota %d: no second row for an event", quota)
		require.Equal(t, "active", b.subscription(t, sub).State, "quota %d: rows that existed do not count again", quota)
		require.Empty(t, b.transitions(t))
		require.Equal(t, jobs, b.jobs(t, sub)[sub], "quota %d: a row that existed wakes no one", quota)
	}
}
