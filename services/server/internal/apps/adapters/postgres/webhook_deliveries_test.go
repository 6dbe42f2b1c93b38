package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/adapters/postgres"
	"bothy/server/internal/apps/adapters/postgres/db"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
	eventsync "bothy/server/internal/sync"
)

// subscriptionIn inserts a subscription of inst to message.created in
// state and returns its ID.
func (b *testBundle) subscriptionIn(t *testing.T, inst apps.Installation, state apps.SubscriptionState) ids.ID {
	t.Helper()
	id := b.subscription(t, inst, start).ID
	if state != apps.SubscriptionActive {
		var disabled *time.Time
		if state == apps.SubscriptionDisabled {
			disabled = &start
		}
		_, err := b.db.App.Exec(context.Background(), `UPDATE webhook_subscriptions SET state = $2, disabled_at = $3 WHERE id = $1`,
			id, string(state), disabled)
		require.NoError(t, err)
	}
	return id
}

// pending inserts one pending delivery per seq for sub.
func (b *testBundle) pending(t *testing.T, s *postgres.DeliveryStore, sub ids.ID, seqs ...int64) {
	t.Helper()
	rows := make([]app.NewDelivery, len(seqs))
	want := map[ids.ID]bool{}
	for i, seq := range seqs {
		rows[i] = app.NewDelivery{ID: ids.New(), SubscriptionID: sub, Event: eventsync.EventKey{Seq: seq}, EventID: ids.New()}
		want[rows[i].ID] = true
	}
	got, err := s.InsertDeliveries(context.Background(), rows, start)
	require.NoError(t, err)
	require.Equal(t, want, got, "the rows of several events go in one insert")
}

// record runs s.RecordAttempts(rec) in a unit of work of its own.
func (b *testBundle) record(t *testing.T, s *postgres.DeliveryStore, rec app.AttemptRecord) app.Recorded {
	t.Helper()
	var done app.Recorded
	require.NoError(t, b.uow.Do(context.Background(), func(ctx context.Context) error {
		recorded, err := s.RecordAttempts(ctx, rec)
		if err == nil {
			done = recorded[0]
		}
		return err
	}))
	return done
}

// explain returns the plan of query with sequential scans disabled, so it
// shows whether an index can answer the query at all (the planner prefers
// a sequential scan on tables this small).
func (b *testBundle) explain(t *testing.T, query string, args ...any) string {
	t.Helper()
	var plan strings.Builder
	require.NoError(t, b.uow.Do(context.Background(), func(ctx context.Context) error {
		tx, _ := pg.TxFrom(ctx)
		if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `EXPLAIN `+query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return err
			}
			plan.WriteString(line + "\n")
		}
		return rows.Err()
	}))
	return plan.String()
}

// TestDeliveryStoreQueriesAreIndexed: the candidates of a round, their
// bounded quota count and last row, and the head are answered by their
// indexes. The candidates are picked by type among many live
// subscriptions of other types, the case the partial GIN index is for.
func TestDeliveryStoreQueriesAreIndexed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inst := b.install(t, b.app(t, "Tracker"))
	_, err := b.db.App.Exec(context.Background(), `INSERT INTO webhook_subscriptions (id, app_installation_id, url,
		event_types, state, signing_key_kid, created_by, created_at, updated_at)
		SELECT uuidv7(), $1, 'https://hooks.example.com/bothy/events', '{channel.created}', 'active', 'kid', $2, $3, $3
		FROM generate_series(1, 2000)`, inst.ID, b.owner, start)
	require.NoError(t, err)
	b.subscriptionIn(t, inst, apps.SubscriptionActive)
	_, err = b.db.Owner.Exec(context.Background(), `ANALYZE webhook_subscriptions`)
	require.NoError(t, err)
	require.Contains(t, b.explain(t, `SELECT s.id FROM webhook_subscriptions s
		WHERE s.state IN ('active', 'paused') AND s.app_installation_id IS NOT NULL AND s.event_types @> ARRAY[$1::text]`, "message.created"),
		"webhook_subscriptions_candidates_idx")
	// The round's facts of a candidate (migration 00061, D-M2-26-84) are
	// inlined into the plan (no Function Scan) and read through the head
	// index and the unique key.
	facts := b.explain(t, `SELECT f.* FROM webhook_subscriptions s
		CROSS JOIN LATERAL webhook_subscription_round_facts(s.id, s.state = 'active', 10) AS f WHERE s.id = $1`, ids.New())
	require.NotContains(t, facts, "Function Scan", "webhook_subscription_round_facts is inlined:\n%s", facts)
	require.Contains(t, facts, "webhook_deliveries_head_idx", facts)
	require.Contains(t, facts, "webhook_deliveries_subscription_event_key", facts)
	require.Contains(t, b.explain(t, `SELECT h.id FROM webhook_deliveries h WHERE h.subscription_id = $1 AND h.status = 'pending'
		ORDER BY h.event_seq LIMIT 1`, ids.New()), "webhook_deliveries_head_idx")
}

// TestStatementsOfManyComputeEachValueOnce: a claim or a record of
// several subscriptions computes a value it names in several places once
// per subscription. An inlined CTE would put the value's subquery in each
// place, planned, built and run there again in every statement: the
// claim's check of its heads names each subscription's head ids four
// times, the record's update names whether a record changes its
// subscription in six SET clauses (two counts each).
func TestStatementsOfManyComputeEachValueOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cases := []struct {
		statement string
		scan      string
		want      int
		why       string
	}{
		{"WebhookDeliveryClaimHeadsMany", "CTE Scan on head", 2, "the heads gathered per subscription, and the claim's update"},
		{"WebhookSubscriptionRecordAttemptsMany", "CTE Scan on delivery", 3, "the decision's two counts, and the result's count"},
	}
	for _, c := range cases {
		plan := b.genericPlan(t, hotStatement(t, c.statement))
		require.Equal(t, c.want, strings.Count(plan, c.scan), "%s: %s\n%s", c.statement, c.why, plan)
	}
}

// TestStatementsOfManyProbeEachRowOnce (D-SQ-25): under the settings of
// the delivery job's units of work (pg.UnitOfWork.GenericPlans), the
// claim and the record of several subscriptions reach each delivery row
// through its primary key from the element of their arrays that names it
// (an index scan whose condition is the element's id), so the arrays drive
// the join. With d.id = ANY(ids) beside the join, the planner put the
// table on the outer side, estimated at one row after the status test,
// and read the arrays once for every row: a claim of 120 heads visited
// 14,400 of them.
func TestStatementsOfManyProbeEachRowOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cases := []struct {
		statement string
		probes    []string
	}{
		{"WebhookDeliveryClaimHeadsMany", []string{"Index Cond: (id = h_1.id)"}},
		{"WebhookSubscriptionRecordAttemptsMany", []string{"Index Cond: (id = o.id)", "Index Cond: (id = u.id)"}},
	}
	for _, c := range cases {
		plan := b.genericPlan(t, hotStatement(t, c.statement), "SET LOCAL enable_seqscan = off")
		for _, probe := range c.probes {
			require.Contains(t, plan, probe, "%s reaches its rows from the arrays:\n%s", c.statement, plan)
		}
	}
}

// hotStatement returns the statement of db.HotStatements that sqlc names
// name; the test fails when there is none.
func hotStatement(t *testing.T, name string) string {
	t.Helper()
	for _, sql := range db.HotStatements {
		if strings.HasPrefix(sql, "-- name: "+name+" ") {
			return sql
		}
	}
	t.Fatalf("no hot statement %s", name)
	return ""
}

// genericPlan returns the plan PostgreSQL makes for query whatever its
// parameters (EXPLAIN (GENERIC_PLAN), through the simple protocol, which
// leaves the placeholders to PostgreSQL, as pg.Warm plans the hot
// statements), in a transaction of its own after the SET LOCAL statements
// settings.
func (b *testBundle) genericPlan(t *testing.T, query string, settings ...string) string {
	t.Helper()
	conn, err := b.db.App.Acquire(context.Background())
	require.NoError(t, err)
	defer conn.Release()
	sql := "EXPLAIN (GENERIC_PLAN) " + query
	if len(settings) > 0 {
		sql = "BEGIN; " + strings.Join(settings, "; ") + "; " + sql + "; COMMIT"
	}
	results, err := conn.Conn().PgConn().Exec(context.Background(), sql).ReadAll()
	require.NoError(t, err)
	var plan strings.Builder
	for _, r := range results {
		for _, row := range r.Rows {
			plan.Write(row[0])
			plan.WriteString("\n")
		}
	}
	return plan.String()
}

func TestDeliveryStoreCandidatesAndBoundedCount(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	s := postgres.NewDeliveryStore(b.db.App)
	inst := b.install(t, b.app(t, "Tracker"))
	active := b.subscriptionIn(t, inst, apps.SubscriptionActive)
	paused := b.subscriptionIn(t, inst, apps.SubscriptionPaused)
	b.subscriptionIn(t, inst, apps.SubscriptionDisabled)

	cands, err := s.DeliveryCandidates(ctx, "message.created", 3)
	require.NoError(t, err)
	got := map[ids.ID]apps.SubscriptionState{}
	for _, c := range cands {
		require.Equal(t, inst.ID, c.InstallationID)
		require.Equal(t, inst.PrincipalID, c.AppPrincipalID)
		require.Zero(t, c.Pending, "no open row yet")
		require.Zero(t, c.LastEventSeq, "no row yet")
		got[c.SubscriptionID] = c.State
	}
	require.Equal(t, map[ids.ID]apps.SubscriptionState{active: apps.SubscriptionActive, paused: apps.SubscriptionPaused}, got)
	cands, err = s.DeliveryCandidates(ctx, "channel.created", 3)
	require.NoError(t, err)
	require.Empty(t, cands)

	b.pending(t, s, active, 1, 2, 3, 4, 5)
	again := []app.NewDelivery{
		{ID: ids.New(), SubscriptionID: active, Event: eventsync.EventKey{Seq: 3}, EventID: ids.New()},
		{ID: ids.New(), SubscriptionID: paused, Event: eventsync.EventKey{Seq: 3}, EventID: ids.New()},
		{ID: ids.New(), SubscriptionID: ids.New(), Event: eventsync.EventKey{Seq: 3}, EventID: ids.New()},
	}
	created, err := s.InsertDeliveries(ctx, again, start)
	require.NoError(t, err)
	require.Equal(t, map[ids.ID]bool{again[1].ID: true}, created,
		"a second row for the same event is skipped, and so is a subscription that does not exist")
	// Both candidate reads bring the bounded count of an active
	// subscription's open rows and the last event seq of every candidate
	// (D-M2-26-84).
	every, err := s.DeliveryCandidates(ctx, "message.created", 3)
	require.NoError(t, err)
	of, err := s.DeliveryCandidatesOf(ctx, "message.created", []ids.ID{inst.PrincipalID}, 3)
	require.NoError(t, err)
	for _, cands := range [][]app.Candidate{every, of} {
		type facts struct {
			pending int
			last    int64
		}
		got := map[ids.ID]facts{}
		for _, c := range cands {
			got[c.SubscriptionID] = facts{c.Pending, c.LastEventSeq}
		}
		require.Equal(t, map[ids.ID]facts{active: {3, 5}, paused: {0, 3}}, got,
			"the count stops at its limit and counts only an active subscription; the last seq is any row's")
	}
}

// lockOne locks sub with up to heads of its pending deliveries, as a run
// of one subscription does; false when it is not an app subscription.
func lockOne(ctx context.Context, s *postgres.DeliveryStore, sub ids.ID, heads int) (app.DeliveryTarget, []app.PendingHead, bool, error) {
	locked, err := s.LockDeliveryTargets(ctx, []ids.ID{sub}, heads)
	if err != nil || len(locked) == 0 {
		return app.DeliveryTarget{}, nil, false, err
	}
	return locked[0].Target, locked[0].Heads, true, nil
}

// claimOne claims the batch of c alone, as a run of one subscription does.
func claimOne(ctx context.Context, s *postgres.DeliveryStore, c app.HeadClaimRequest) ([]app.ClaimedHead, error) {
	claimed, err := s.ClaimHeads(ctx, c)
	if err != nil {
		return nil, err
	}
	return claimed[0], nil
}

// TestDeliveryStoreLocksSeveralTargetsInOneStatement (D-M2-26-76): the
// subscriptions of a shared unit of work are locked with one statement, in
// the order of their ids, each with its own heads; an id that names no
// subscription has no row.
func TestDeliveryStoreLocksSeveralTargetsInOneStatement(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := postgres.NewDeliveryStore(b.db.App)
	inst := b.install(t, b.app(t, "Tracker"))
	first, second := b.subscriptionIn(t, inst, apps.SubscriptionActive), b.subscriptionIn(t, inst, apps.SubscriptionPaused)
	b.pending(t, s, first, 3, 4, 5)
	b.pending(t, s, second, 4)
	ctx := context.Background()
	unknown := ids.New()
	require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
		locked, err := s.LockDeliveryTargets(ctx, []ids.ID{second, unknown, first}, 2)
		require.NoError(t, err)
		require.Len(t, locked, 2, "the unknown id has no row")
		byID := map[ids.ID]app.LockedTarget{}
		for i, l := range locked {
			byID[l.Target.SubscriptionID] = l
			if i > 0 {
				require.Negative(t, ids.Compare(locked[i-1].Target.SubscriptionID, l.Target.SubscriptionID), "in the order of the ids")
			}
		}
		require.Equal(t, []int64{3, 4}, seqsOf(byID[first].Heads), "each with its own heads, at most as many as asked")
		require.Equal(t, []int64{4}, seqsOf(byID[second].Heads))
		require.Equal(t, apps.SubscriptionPaused, byID[second].Target.State)
		require.Equal(t, inst.PrincipalID, byID[first].Target.Installation.PrincipalID)

		var locks int
		require.NoError(t, b.db.App.QueryRow(ctx, `SELECT count(*) FROM webhook_subscriptions
			WHERE id = ANY($1) AND id NOT IN (SELECT id FROM webhook_subscriptions FOR NO KEY UPDATE SKIP LOCKED)`,
			[]ids.ID{first, second}).Scan(&locks))
		require.Equal(t, 2, locks, "another session finds both rows locked")
		return nil
	}))
}

// TestDeliveryStoreClaimsForSeveralSubscriptionsInOneStatement
// (D-M2-26-77): one statement claims the batches of three subscriptions,
// each under its own lease, rate window and wake-up; a batch whose heads
// are not the subscription's first pending ones claims nothing and leaves
// its subscription as it was, and the others are claimed all the same.
func TestDeliveryStoreClaimsForSeveralSubscriptionsInOneStatement(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := postgres.NewDeliveryStore(b.db.App)
	inst := b.install(t, b.app(t, "Tracker"))
	subs := []ids.ID{b.subscriptionIn(t, inst, apps.SubscriptionActive), b.subscriptionIn(t, inst, apps.SubscriptionActive),
		b.subscriptionIn(t, inst, apps.SubscriptionActive)}
	b.pending(t, s, subs[0], 1, 2, 3)
	b.pending(t, s, subs[1], 1, 2)
	b.pending(t, s, subs[2], 2)
	ctx := context.Background()
	window := webhook.RateWindow{start.Add(-2 * time.Second), start.Add(-time.Second)}
	var claimed [][]app.ClaimedHead
	require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
		locked, err := s.LockDeliveryTargets(ctx, subs, 2)
		require.NoError(t, err)
		heads := map[ids.ID][]app.PendingHead{}
		for _, l := range locked {
			heads[l.Target.SubscriptionID] = l.Heads
		}
		claimed, err = s.ClaimHeads(ctx,
			app.HeadClaimRequest{SubscriptionID: subs[0], Heads: idsOf(heads[subs[0]]), Now: start,
				LeaseUntil: start.Add(time.Minute), RateWindow: window, WakeUpAt: start.Add(2 * time.Minute)},
			app.HeadClaimRequest{SubscriptionID: subs[1], Heads: idsOf(heads[subs[1]][1:]), Now: start,
				LeaseUntil: start.Add(time.Minute), WakeUpAt: start.Add(2 * time.Minute)},
			app.HeadClaimRequest{SubscriptionID: subs[2], Heads: idsOf(heads[subs[2]]), Now: start,
				LeaseUntil: start.Add(3 * time.Minute)})
		return err
	}))
	require.Len(t, claimed, 3, "a result for each claim, in order")
	require.Equal(t, []int64{1, 2}, []int64{claimed[0][0].EventSeq, claimed[0][1].EventSeq})
	require.Empty(t, claimed[1], "seq 2 is not the head of its subscription")
	require.Len(t, claimed[2], 1)
	require.Equal(t, 1, claimed[2][0].Attempt)
	require.True(t, claimed[2][0].LeaseUntil.Equal(start.Add(3*time.Minute)), "each claim under its own lease")
	require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
		locked, err := s.LockDeliveryTargets(ctx, subs, 0)
		require.NoError(t, err)
		got := map[ids.ID]app.DeliveryTarget{}
		for _, l := range locked {
			got[l.Target.SubscriptionID] = l.Target
		}
		require.Equal(t, app.Lease{DeliveryID: claimed[0][0].ID, Until: start.Add(time.Minute)}, got[subs[0]].Lease)
		require.Equal(t, window, got[subs[0]].RateWindow, "the window of its own claim, in its order")
		require.True(t, got[subs[0]].WakeUpAt.Equal(start.Add(2*time.Minute)))
		require.Equal(t, app.Lease{}, got[subs[1]].Lease, "a claim that found stale heads takes no lease")
		require.Zero(t, got[subs[1]].WakeUpAt, "and names no wake-up")
		require.Equal(t, app.Lease{DeliveryID: claimed[2][0].ID, Until: start.Add(3 * time.Minute)}, got[subs[2]].Lease)
		require.Nil(t, got[subs[2]].RateWindow, "a subscription without a limit keeps an empty window")
		require.Zero(t, got[subs[2]].WakeUpAt, "a claim without a wake-up keeps the one named (none)")
		return nil
	}))
	var attempts int
	require.NoError(t, b.db.App.QueryRow(ctx, `SELECT sum(attempt) FROM webhook_deliveries WHERE subscription_id = $1`,
		subs[1]).Scan(&attempts))
	require.Zero(t, attempts, "the stale claim changed no attempt")
}

// TestDeliveryStoreRecordsSeveralSubscriptionsInOneStatement
// (D-M2-26-78): one statement records the batches of two subscriptions and
// answers a third that is gone: the record whose expectation holds is
// written with its subscription's change and gives its lease back; the
// other writes nothing, its lease stays; each answer in the order of the
// records.
func TestDeliveryStoreRecordsSeveralSubscriptionsInOneStatement(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := postgres.NewDeliveryStore(b.db.App)
	inst := b.install(t, b.app(t, "Tracker"))
	first, second := b.subscriptionIn(t, inst, apps.SubscriptionActive), b.subscriptionIn(t, inst, apps.SubscriptionActive)
	b.pending(t, s, first, 1, 2)
	b.pending(t, s, second, 1)
	ctx := context.Background()
	var claimed [][]app.ClaimedHead
	require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
		locked, err := s.LockDeliveryTargets(ctx, []ids.ID{first, second}, 1)
		require.NoError(t, err)
		heads := map[ids.ID][]app.PendingHead{}
		for _, l := range locked {
			heads[l.Target.SubscriptionID] = l.Heads
		}
		claimed, err = s.ClaimHeads(ctx,
			app.HeadClaimRequest{SubscriptionID: first, Heads: idsOf(heads[first]), Now: start, LeaseUntil: start.Add(time.Minute)},
			app.HeadClaimRequest{SubscriptionID: second, Heads: idsOf(heads[second]), Now: start, LeaseUntil: start.Add(time.Minute)})
		return err
	}))
	active := app.RecordBasis{Standing: webhook.Standing{State: apps.SubscriptionActive}}
	recordOf := func(sub ids.ID, head app.ClaimedHead, expected app.RecordBasis) app.AttemptRecord {
		return app.AttemptRecord{SubscriptionID: sub, LeaseDeliveryID: head.ID, Now: start, NextHeads: 5, Expected: expected,
			Outcomes: []app.AttemptOutcome{{DeliveryID: head.ID, Attempt: 1, StoredAttempt: 1,
				Status: apps.DeliverySucceeded, DeliveredAt: start, ResponseCode: 204}},
			Subscription: &app.SubscriptionChange{State: apps.SubscriptionActive, DeliveredSeq: head.EventSeq, SigningKeyKID: "kid-2"}}
	}
	paused := active
	paused.Standing.State = apps.SubscriptionPaused
	var done []app.Recorded
	require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
		var err error
		done, err = s.RecordAttempts(ctx, recordOf(second, claimed[1][0], paused), app.AttemptRecord{SubscriptionID: ids.New()},
			recordOf(first, claimed[0][0], active))
		return err
	}))
	require.Len(t, done, 3)
	require.True(t, done[0].Found)
	require.False(t, done[0].AsExpected, "the record expected a paused subscription")
	require.False(t, done[0].Written)
	require.Equal(t, second, done[0].Target.SubscriptionID)
	require.False(t, done[1].Found, "no such subscription")
	require.True(t, done[2].AsExpected)
	require.True(t, done[2].Written)
	require.Equal(t, first, done[2].Target.SubscriptionID)
	require.Equal(t, []int64{2}, seqsOf(done[2].Next), "seq 2 of the first subscription is still pending")
	require.Empty(t, done[0].Next, "the second has none left besides the one it sent")
	var leases []bool
	var kids []string
	rows, err := b.db.App.Query(ctx, `SELECT lease_delivery_id IS NOT NULL, signing_key_kid FROM webhook_subscriptions
		WHERE id = ANY($1) ORDER BY array_position($1, id)`, []ids.ID{first, second})
	require.NoError(t, err)
	for rows.Next() {
		var leased bool
		var kid string
		require.NoError(t, rows.Scan(&leased, &kid))
		leases, kids = append(leases, leased), append(kids, kid)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []bool{false, true}, leases, "the written record gave its lease back, the other kept it")
	require.Equal(t, "kid-2", kids[0], "the change of the written record")
	require.NotEqual(t, "kid-2", kids[1])
	require.Equal(t, 1, b.attemptOf(t, claimed[1][0].ID), "the unwritten delivery keeps its claimed attempt")
}

func TestDeliveryStoreClaimAndRecord(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := postgres.NewDeliveryStore(b.db.App)
	inst := b.install(t, b.app(t, "Tracker"))
	sub := b.subscriptionIn(t, inst, apps.SubscriptionActive)
	b.pending(t, s, sub, 7, 8, 9)
	ctx := context.Background()

	_, _, _, err := lockOne(ctx, s, sub, 2)
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err), "a row lock needs a unit of work")

	var claimed []app.ClaimedHead
	require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
		target, heads, ok, err := lockOne(ctx, s, sub, 2)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, inst.PrincipalID, target.Installation.PrincipalID)
		require.Equal(t, []string{"message.created"}, target.EventTypes)
		require.False(t, target.Lease.InForce(start), "no attempt in flight yet")
		require.Zero(t, target.WakeUpAt, "no wake-up named yet")
		require.Equal(t, []int64{7, 8}, seqsOf(heads), "the lock names the lowest pending heads, at most as many as asked")
		require.True(t, heads[0].NextAttemptAt.Equal(start), "with the time each is due")
		stale, err := claimOne(ctx, s, app.HeadClaimRequest{SubscriptionID: sub, Heads: []ids.ID{heads[1].ID},
			Now: start, LeaseUntil: start.Add(time.Minute)})
		require.NoError(t, err)
		require.Empty(t, stale, "heads that are not the first pending ones are not claimed")
		stale, err = claimOne(ctx, s, app.HeadClaimRequest{SubscriptionID: sub, Heads: []ids.ID{heads[0].ID, heads[1].ID},
			Now: start.Add(-time.Second), LeaseUntil: start.Add(time.Minute)})
		require.NoError(t, err)
		require.Empty(t, stale, "nor heads that are not due")
		claimed, err = claimOne(ctx, s, app.HeadClaimRequest{SubscriptionID: sub, Heads: []ids.ID{heads[0].ID, heads[1].ID},
			Now: start, LeaseUntil: start.Add(time.Minute), WakeUpAt: start.Add(2 * time.Minute)})
		return err
	}))
	require.Len(t, claimed, 2)
	head, second := claimed[0], claimed[1]
	require.Equal(t, []int64{7, 8}, []int64{head.EventSeq, second.EventSeq}, "claimed in seq order")
	require.Equal(t, []int{1, 1}, []int{head.Attempt, second.Attempt})
	require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
		target, _, _, err := lockOne(ctx, s, sub, 0)
		require.Equal(t, app.Lease{DeliveryID: head.ID, Until: start.Add(time.Minute)}, target.Lease,
			"the subscription holds the lease of the batch, which names its first head")
		require.True(t, target.WakeUpAt.Equal(start.Add(2*time.Minute)), "the claim named its wake-up (ADR 0087): %v", target.WakeUpAt)
		return err
	}))

	_, err = s.RecordAttempts(ctx, app.AttemptRecord{SubscriptionID: sub})
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err), "the record locks, so it needs a unit of work")
	outcome := app.AttemptOutcome{DeliveryID: head.ID, Attempt: 2, StoredAttempt: 2,
		Status: apps.DeliverySucceeded, DeliveredAt: start, ResponseCode: 200}
	rec := app.AttemptRecord{SubscriptionID: sub, LeaseDeliveryID: head.ID, Outcomes: []app.AttemptOutcome{outcome},
		Unsent: []app.ClaimedHead{second}, Now: start, NextHeads: 5,
		Subscription: &app.SubscriptionChange{State: apps.SubscriptionActive, DeliveredSeq: 7, SigningKeyKID: "kid-2"},
		Expected:     app.RecordBasis{Standing: webhook.Standing{State: apps.SubscriptionActive, ConsecutiveFailures: 3}}}
	done := b.record(t, s, rec)
	require.True(t, done.Found)
	require.False(t, done.AsExpected, "the subscription has no failures, the record expected three")
	require.False(t, done.Written, "a record computed from another standing writes nothing")
	require.Equal(t, app.Lease{DeliveryID: head.ID, Until: start.Add(time.Minute)}, done.Target.Lease, "not even the lease")
	require.Equal(t, 1, b.attemptOf(t, second.ID), "nor the unsent head's attempt")
	rec.Expected.Standing.ConsecutiveFailures = 0
	done = b.record(t, s, rec)
	require.True(t, done.AsExpected)
	require.False(t, done.Written, "another attempt's result is discarded")
	rec.Outcomes[0].Attempt, rec.Outcomes[0].StoredAttempt = 1, 1
	rec.Unsent = nil
	done = b.record(t, s, rec)
	require.True(t, done.Written)
	require.Equal(t, []int64{8, 9}, seqsOf(done.Next), "seqs 8 and 9 are still pending")
	require.Equal(t, sub, done.Target.SubscriptionID)
	require.Equal(t, inst.PrincipalID, done.Target.Installation.PrincipalID, "the record returns the locked target")
	done = b.record(t, s, rec)
	require.False(t, done.Written, "a finished delivery is not written again")
	done = b.record(t, s, app.AttemptRecord{SubscriptionID: ids.New()})
	require.False(t, done.Found, "no such subscription")
	var lastSeq int64
	var kid string
	require.NoError(t, b.db.App.QueryRow(ctx, `SELECT last_delivered_seq, signing_key_kid FROM webhook_subscriptions WHERE id = $1`, sub).
		Scan(&lastSeq, &kid))
	require.Equal(t, int64(7), lastSeq)
	require.Equal(t, "kid-2", kid)
	var leased bool
	require.NoError(t, b.db.App.QueryRow(ctx, `SELECT lease_delivery_id IS NOT NULL FROM webhook_subscriptions WHERE id = $1`, sub).
		Scan(&leased))
	require.False(t, leased, "the record gave the lease back")

	exp, err := s.ExpirePending(ctx, sub, 100, start)
	require.NoError(t, err)
	require.Equal(t, app.Expired{Count: 2, FirstSeq: 8, LastSeq: 9}, exp)
}

// TestDeliveryStoreRecordsABatch (ADR 0088): one record writes every sent
// attempt of a batch, raises last_delivered_seq to the highest accepted
// seq, gives the heads the batch did not send their attempt back and names
// them, still due, as the next heads.
func TestDeliveryStoreRecordsABatch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := postgres.NewDeliveryStore(b.db.App)
	sub := b.subscriptionIn(t, b.install(t, b.app(t, "Tracker")), apps.SubscriptionActive)
	b.pending(t, s, sub, 3, 4, 5, 6)
	ctx := context.Background()
	var claimed []app.ClaimedHead
	require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
		_, heads, _, err := lockOne(ctx, s, sub, 4)
		if err != nil {
			return err
		}
		claimed, err = claimOne(ctx, s, app.HeadClaimRequest{SubscriptionID: sub, Heads: idsOf(heads),
			Now: start, LeaseUntil: start.Add(time.Minute)})
		return err
	}))
	require.Len(t, claimed, 4)
	ok := func(h app.ClaimedHead) app.AttemptOutcome {
		return app.AttemptOutcome{DeliveryID: h.ID, Attempt: h.Attempt, StoredAttempt: h.Attempt,
			Status: apps.DeliverySucceeded, DeliveredAt: start, ResponseCode: 204}
	}
	failed := app.AttemptOutcome{DeliveryID: claimed[2].ID, Attempt: 1, StoredAttempt: 1,
		Status: apps.DeliveryPending, NextAttemptAt: start.Add(time.Hour), LastError: apps.LastErrorHTTPStatus, ResponseCode: 500}
	done := b.record(t, s, app.AttemptRecord{SubscriptionID: sub, LeaseDeliveryID: claimed[0].ID,
		Outcomes: []app.AttemptOutcome{ok(claimed[0]), ok(claimed[1]), failed}, Unsent: claimed[3:], Now: start, NextHeads: 4,
		Subscription: &app.SubscriptionChange{State: apps.SubscriptionActive, ConsecutiveFailures: 1, DeliveredSeq: 4},
		Expected:     app.RecordBasis{Standing: webhook.Standing{State: apps.SubscriptionActive}}})
	require.True(t, done.Written)
	require.Equal(t, []int64{6}, seqsOf(done.Next), "the sent ones are not named; the unsent one is, as it was")
	require.Equal(t, []int{1, 1, 1, 0}, []int{b.attemptOf(t, claimed[0].ID), b.attemptOf(t, claimed[1].ID),
		b.attemptOf(t, claimed[2].ID), b.attemptOf(t, claimed[3].ID)}, "the unsent head got its attempt back")
	var lastSeq int64
	var failures int
	var leased bool
	require.NoError(t, b.db.App.QueryRow(ctx, `SELECT last_delivered_seq, consecutive_failures, lease_delivery_id IS NOT NULL
		FROM webhook_subscriptions WHERE id = $1`, sub).Scan(&lastSeq, &failures, &leased))
	require.Equal(t, int64(4), lastSeq, "the highest accepted seq")
	require.Equal(t, 1, failures, "the standing after the batch's last attempt")
	require.False(t, leased, "the record gave the batch's lease back")
	var statuses []string
	require.NoError(t, b.db.App.QueryRow(ctx, `SELECT array_agg(status ORDER BY event_seq) FROM webhook_deliveries
		WHERE subscription_id = $1`, sub).Scan(&statuses))
	require.Equal(t, []string{"succeeded", "succeeded", "pending", "pending"}, statuses)
}

// TestDeliveryStoreFinishUnsentTellsWhetherItFinished: a head ended
// without a request becomes dead with its code and keeps its attempt; one
// that is no longer pending (a read from before the row lock waited) is
// left as it is and reported, so the run reads its heads again.
func TestDeliveryStoreFinishUnsentTellsWhetherItFinished(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := postgres.NewDeliveryStore(b.db.App)
	sub := b.subscriptionIn(t, b.install(t, b.app(t, "Tracker")), apps.SubscriptionActive)
	b.pending(t, s, sub, 5)
	ctx := context.Background()
	var heads []app.PendingHead
	finish := func() bool {
		t.Helper()
		var done bool
		require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
			var err error
			if _, heads, _, err = lockOne(ctx, s, sub, 1); err != nil || len(heads) == 0 {
				return err
			}
			done, err = s.FinishUnsent(ctx, heads[0].ID, apps.LastErrorNotAuthorized, start)
			return err
		}))
		return done
	}
	require.True(t, finish())
	var status, lastError string
	require.NoError(t, b.db.App.QueryRow(ctx, `SELECT status, last_error FROM webhook_deliveries WHERE id = $1`, heads[0].ID).
		Scan(&status, &lastError))
	require.Equal(t, []string{"dead", "not_authorized"}, []string{status, lastError})
	require.Zero(t, b.attemptOf(t, heads[0].ID), "no request, no attempt")
	var again bool
	require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
		var err error
		again, err = s.FinishUnsent(ctx, heads[0].ID, apps.LastErrorNotSubscribed, start)
		return err
	}))
	require.False(t, again, "a head that is no longer pending is not finished again")
}

// seqsOf returns the event seqs of heads.
func seqsOf(heads []app.PendingHead) []int64 {
	out := make([]int64, len(heads))
	for i, h := range heads {
		out[i] = h.Event.Seq
	}
	return out
}

// idsOf returns the ids of heads.
func idsOf(heads []app.PendingHead) []ids.ID {
	out := make([]ids.ID, len(heads))
	for i, h := range heads {
		out[i] = h.ID
	}
	return out
}

// attemptOf returns the stored attempt of the delivery id.
func (b *testBundle) attemptOf(t *testing.T, id ids.ID) int {
	t.Helper()
	var n int
	require.NoError(t, b.db.App.QueryRow(context.Background(), `SELECT attempt FROM webhook_deliveries WHERE id = $1`, id).Scan(&n))
	return n
}

// TestDeliveryStoreRecordTellsWhetherOthersArePending (D-M2-26-67): the
// record of an attempt tells whether another delivery of the subscription
// is pending, whatever its seq (a recovery makes lower seqs pending again),
// so a run whose record finds none ends without a claim, and names the
// lowest of them, the next head (D-M2-26-70).
func TestDeliveryStoreRecordTellsWhetherOthersArePending(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := postgres.NewDeliveryStore(b.db.App)
	sub := b.subscriptionIn(t, b.install(t, b.app(t, "Tracker")), apps.SubscriptionActive)
	b.pending(t, s, sub, 3, 4)
	ctx := context.Background()
	claim := func() app.ClaimedHead {
		t.Helper()
		var claimed []app.ClaimedHead
		require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
			_, heads, _, err := lockOne(ctx, s, sub, 1)
			if err != nil {
				return err
			}
			claimed, err = claimOne(ctx, s, app.HeadClaimRequest{SubscriptionID: sub, Heads: idsOf(heads),
				Now: start, LeaseUntil: start.Add(time.Minute)})
			return err
		}))
		require.Len(t, claimed, 1)
		return claimed[0]
	}
	record := func(h app.ClaimedHead) app.Recorded {
		t.Helper()
		done := b.record(t, s, app.AttemptRecord{SubscriptionID: sub, LeaseDeliveryID: h.ID, NextHeads: 1,
			Outcomes: []app.AttemptOutcome{{DeliveryID: h.ID, Attempt: h.Attempt, StoredAttempt: h.Attempt,
				Status: apps.DeliverySucceeded, DeliveredAt: start, ResponseCode: 204}},
			Now: start, Expected: app.RecordBasis{Standing: webhook.Standing{State: apps.SubscriptionActive}}})
		require.True(t, done.Written)
		return done
	}

	first := claim()
	require.Equal(t, int64(3), first.EventSeq)
	done := record(first)
	require.Equal(t, []int64{4}, seqsOf(done.Next), "seq 4 waits: the record names the head claimed next (D-M2-26-70)")
	second := claim()
	require.Equal(t, int64(4), second.EventSeq)
	_, err := b.db.App.Exec(ctx, `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $2, finished_at = NULL, delivered_at = NULL WHERE id = $1`, first.ID, start)
	require.NoError(t, err)
	done = record(second)
	require.Equal(t, []int64{3}, seqsOf(done.Next), "seq 3, pending again as a recovery leaves it, counts though it lies below")
	again := claim()
	require.Equal(t, first.ID, again.ID)
	done = record(again)
	require.Empty(t, done.Next, "nothing else is pending, no next head")
}

// TestRecordReadsTheRowsCommittedWhileItWaitedForItsLock (D-M2-26-83): a
// record that waits for its subscription's lock (here held by another
// transaction) names as its next heads the rows committed meanwhile. A
// run that finds the lease in force leaves the subscription to the
// lease's holder, trusting that holder's record to see the rows committed
// before that run looked; a record whose next heads came from a snapshot
// older than its lock gave the lease back without them, and the rows
// waited for the lease wake-up of the subscription's first run (chain
// budget and lease later, 43 s in make bench-e2e fleet).
func TestRecordReadsTheRowsCommittedWhileItWaitedForItsLock(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	s := postgres.NewDeliveryStore(b.db.App)
	sub := b.subscriptionIn(t, b.install(t, b.app(t, "Tracker")), apps.SubscriptionActive)
	b.pending(t, s, sub, 7)

	holder, err := b.db.Owner.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = holder.Rollback(ctx) }()
	_, err = holder.Exec(ctx, `SELECT 1 FROM webhook_subscriptions WHERE id = $1 FOR NO KEY UPDATE`, sub)
	require.NoError(t, err)

	type result struct {
		rec app.Recorded
		err error
	}
	done := make(chan result, 1)
	go func() {
		var got result
		got.err = b.uow.Do(ctx, func(ctx context.Context) error {
			recorded, err := s.RecordAttempts(ctx, app.AttemptRecord{SubscriptionID: sub, Now: start, NextHeads: 5})
			if err == nil {
				got.rec = recorded[0]
			}
			return err
		})
		done <- got
	}()
	require.Eventually(t, func() bool {
		var waiting int
		err := b.db.App.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting)
		return err == nil && waiting == 1
	}, 10*time.Second, 5*time.Millisecond, "the record waits for the subscription's lock")
	b.pending(t, s, sub, 8)
	require.NoError(t, holder.Commit(ctx))

	select {
	case res := <-done:
		require.NoError(t, res.err)
		got := res.rec
		require.True(t, got.Found)
		require.Equal(t, []int64{7, 8}, seqsOf(got.Next), "the row committed while the record waited is among its next heads")
	case <-time.After(10 * time.Second):
		t.Fatal("the record did not end")
	}
}

// TestLockLeasedLocksTheSubscriptionsWhoseLeaseHoldsAndNoOneLocks (ADR
// 0106): a consumer round leaves a subscription to its lease's holder only
// when the lease is in force at the round's time and the round holds the
// subscription's row in share mode until it commits, so the holder's
// record, which locks the row for update first, reads the round's rows. A
// subscription whose row another transaction locks (a record under way)
// is not waited for and not returned; nor is one whose lease has ended
// or that has none.
func TestLockLeasedLocksTheSubscriptionsWhoseLeaseHoldsAndNoOneLocks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	s := postgres.NewDeliveryStore(b.db.App)
	inst := b.install(t, b.app(t, "Tracker"))
	held := b.subscriptionIn(t, inst, apps.SubscriptionActive)
	ended := b.subscriptionIn(t, inst, apps.SubscriptionActive)
	none := b.subscriptionIn(t, inst, apps.SubscriptionActive)
	recording := b.subscriptionIn(t, inst, apps.SubscriptionActive)
	lease := func(sub ids.ID, until time.Time) {
		_, err := b.db.App.Exec(ctx, `UPDATE webhook_subscriptions SET lease_delivery_id = $2, lease_until = $3 WHERE id = $1`,
			sub, ids.New(), until)
		require.NoError(t, err)
	}
	lease(held, start.Add(time.Minute))
	lease(ended, start)
	lease(recording, start.Add(time.Minute))

	_, err := s.LockLeased(ctx, []ids.ID{held}, start)
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err), "a row lock needs a unit of work")

	holder, err := b.db.Owner.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = holder.Rollback(ctx) }()
	_, err = holder.Exec(ctx, `SELECT 1 FROM webhook_subscriptions WHERE id = $1 FOR NO KEY UPDATE`, recording)
	require.NoError(t, err)

	lockForRecord := func(sub ids.ID) error {
		_, err := b.db.Owner.Exec(ctx, `SELECT 1 FROM webhook_subscriptions WHERE id = $1 FOR NO KEY UPDATE NOWAIT`, sub)
		return err
	}
	require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error {
		got, err := s.LockLeased(ctx, []ids.ID{recording, none, ended, held}, start)
		require.NoError(t, err)
		require.Equal(t, []ids.ID{held}, got, "only the lease in force that no one else locks")
		var pgErr *pgconn.PgError
		require.ErrorAs(t, lockForRecord(held), &pgErr, "the holder's record waits for the round's commit")
		require.Equal(t, "55P03", pgErr.Code)
		require.NoError(t, lockForRecord(none), "a subscription the round leaves to a job stays free")
		return nil
	}))
	require.NoError(t, lockForRecord(held), "free again after the commit")
}
