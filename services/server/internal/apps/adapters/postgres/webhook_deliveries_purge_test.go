package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/adapters/postgres"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/ids"
)

// finishedAt moves a delivery's finish time (finished_at) to at.
func (b *testBundle) finishedAt(t *testing.T, d apps.Delivery, at time.Time) {
	t.Helper()
	_, err := b.db.App.Exec(context.Background(), `UPDATE webhook_deliveries SET finished_at = $2 WHERE id = $1`, d.ID, at)
	require.NoError(t, err)
}

func remainingDeliveries(t *testing.T, b *testBundle) map[ids.ID]bool {
	t.Helper()
	rows, err := b.db.App.Query(context.Background(), `SELECT id FROM webhook_deliveries`)
	require.NoError(t, err)
	defer rows.Close()
	out := map[ids.ID]bool{}
	for rows.Next() {
		var id ids.ID
		require.NoError(t, rows.Scan(&id))
		out[id] = true
	}
	require.NoError(t, rows.Err())
	return out
}

// TestPurgeDeletesOldFinishedDeliveriesAndNeverPendingOnes: with a batch
// size of 2, five old finished rows go in three batches; an old pending row,
// a recent finished row and the subscription's progress stay.
func TestPurgeDeletesOldFinishedDeliveriesAndNeverPendingOnes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sub := b.subscription(t, b.install(t, b.app(t, "Tracker")), start)
	retention := 30 * 24 * time.Hour
	now := start.Add(60 * 24 * time.Hour)
	old := now.Add(-retention - time.Second)

	var gone []apps.Delivery
	for seq, st := range []apps.DeliveryStatus{apps.DeliverySucceeded, apps.DeliveryDead, apps.DeliverySucceeded, apps.DeliveryDead, apps.DeliverySucceeded} {
		d := b.delivery(t, sub, int64(seq+1), st)
		b.finishedAt(t, d, old)
		gone = append(gone, d)
	}
	oldPending := b.delivery(t, sub, 10, apps.DeliveryPending)
	b.finishedAt(t, oldPending, old.Add(-24*time.Hour))
	recent := b.delivery(t, sub, 11, apps.DeliverySucceeded)
	b.finishedAt(t, recent, now.Add(-retention+time.Second))
	_, err := b.db.App.Exec(context.Background(), `UPDATE webhook_subscriptions SET last_delivered_seq = 11 WHERE id = $1`, sub.ID)
	require.NoError(t, err)

	purger, err := app.NewDeliveryPurger(postgres.NewDeliveryStore(b.db.App), clock.NewFake(now), app.PurgeOptions{Retention: retention, BatchSize: 2})
	require.NoError(t, err)
	n, err := purger.Purge(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(len(gone)), n)
	require.Equal(t, map[ids.ID]bool{oldPending.ID: true, recent.ID: true}, remainingDeliveries(t, b))
	var last int64
	require.NoError(t, b.db.App.QueryRow(context.Background(), `SELECT last_delivered_seq FROM webhook_subscriptions WHERE id = $1`, sub.ID).Scan(&last))
	require.Equal(t, int64(11), last, "the subscription's progress does not depend on its delivery rows")

	n, err = purger.Purge(context.Background())
	require.NoError(t, err)
	require.Zero(t, n, "a second run finds nothing")
}

// TestPurgeBatchIsIndexed: one batch reads webhook_deliveries_finished_idx,
// never the whole table.
func TestPurgeBatchIsIndexed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.Contains(t, b.explain(t, `SELECT d.id FROM webhook_deliveries d
		WHERE d.finished_at IS NOT NULL AND d.finished_at < $1 ORDER BY d.finished_at LIMIT 100`, start), "webhook_deliveries_finished_idx")
}

func TestNewDeliveryPurgerRefusesBadOptions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	store := postgres.NewDeliveryStore(b.db.App)
	for name, o := range map[string]app.PurgeOptions{
		"no retention":    {BatchSize: 10},
		"a zero batch":    {Retention: time.Hour},
		"a negative both": {Retention: -time.Hour, BatchSize: -1},
	} {
		_, err := app.NewDeliveryPurger(store, clock.NewFake(start), o)
		require.Error(t, err, name)
	}
}
