package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/adapters/postgres"
	"bothy/server/internal/apps/app"
)

// TestDeliveryBacklogCountsPendingAndSubscriptions: the gauges' one
// statement counts only pending rows (a finished row is not backlog), gives
// the created_at of the oldest pending row, and every subscription state,
// also the empty ones.
func TestDeliveryBacklogCountsPendingAndSubscriptions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	s := postgres.NewDeliveryStore(b.db.App)
	now := start.Add(time.Hour)

	empty, err := s.DeliveryBacklog(ctx, now)
	require.NoError(t, err)
	require.Equal(t, app.DeliveryBacklog{
		Pending:                0,
		OldestPendingCreatedAt: now,
		Subscriptions:          map[apps.SubscriptionState]int64{apps.SubscriptionActive: 0, apps.SubscriptionPaused: 0, apps.SubscriptionDisabled: 0},
	}, normalized(empty))

	inst := b.install(t, b.app(t, "Tracker"))
	active := b.subscriptionIn(t, inst, apps.SubscriptionActive)
	b.subscriptionIn(t, inst, apps.SubscriptionActive)
	paused := b.subscriptionIn(t, inst, apps.SubscriptionPaused)
	b.subscriptionIn(t, inst, apps.SubscriptionDisabled)
	b.pending(t, s, active, 1, 2, 3)
	b.pending(t, s, paused, 1)
	_, err = b.db.App.Exec(ctx, `UPDATE webhook_deliveries SET created_at = $2 WHERE subscription_id = $1 AND event_seq = 1`,
		active, start.Add(-time.Minute))
	require.NoError(t, err)
	_, err = b.db.App.Exec(ctx, `UPDATE webhook_deliveries SET status = 'dead', next_attempt_at = NULL, last_error = 'not_authorized'
		WHERE subscription_id = $1 AND event_seq = 3`, active)
	require.NoError(t, err)

	got, err := s.DeliveryBacklog(ctx, now)
	require.NoError(t, err)
	require.Equal(t, app.DeliveryBacklog{
		Pending:                3,
		OldestPendingCreatedAt: start.Add(-time.Minute),
		Subscriptions:          map[apps.SubscriptionState]int64{apps.SubscriptionActive: 2, apps.SubscriptionPaused: 1, apps.SubscriptionDisabled: 1},
	}, normalized(got))
}

// normalized puts the time in UTC, as the test's times are.
func normalized(b app.DeliveryBacklog) app.DeliveryBacklog {
	b.OldestPendingCreatedAt = b.OldestPendingCreatedAt.UTC()
	return b
}

// TestDeliveryBacklogReadsOnlyPendingRows: the pending part of the
// statement WebhookBacklog, as written in queries/webhook_backlog.sql, is
// answered by a partial index of the pending rows, so its cost
// never grows with the finished rows a subscription leaves behind.
func TestDeliveryBacklogReadsOnlyPendingRows(t *testing.T) {
	t.Parallel()
	b := setup(t)
	raw, err := os.ReadFile(filepath.Join("queries", "webhook_backlog.sql"))
	require.NoError(t, err)
	var stmt []string
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			stmt = append(stmt, line)
		}
	}
	query := strings.TrimSuffix(strings.TrimSpace(strings.ReplaceAll(strings.Join(stmt, "\n"), "sqlc.arg(now)", "$1")), ";")
	plan := b.explain(t, query, start)
	require.Regexp(t, `webhook_deliveries_(head|due)_idx`, plan)
	require.NotContains(t, plan, "Seq Scan on webhook_deliveries")
}
