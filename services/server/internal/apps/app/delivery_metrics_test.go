package app_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/app"
	"bothy/server/internal/platform/otel/attr"
)

// TestDeliveryMetricsFollowTheOutcome: each outcome of the delivery path
// shows in the delivery metrics with its closed labels only: a success
// counts one finished delivery, one attempt and one lag; a failure that is
// retried counts an attempt and no finished delivery; a 410 counts a failed
// delivery and the system transition; a revoked right counts a dead
// delivery and no attempt. No data point carries a subscription ID.
func TestDeliveryMetricsFollowTheOutcome(t *testing.T) {
	t.Parallel()
	outcome, reason := attr.Outcome.String, attr.Reason.String

	t.Run("a success", func(t *testing.T) {
		t.Parallel()
		b, sub := withPending(t, options{}, "to a receiver that answers")
		b.deliver(t, sub)
		m := b.appMetrics
		require.Equal(t, int64(1), m.Sum(t, app.MetricDeliveriesFinished, outcome("succeeded")))
		require.Equal(t, uint64(1), m.HistogramCount(t, app.MetricAttemptDuration, outcome("succeeded")))
		require.Equal(t, uint64(1), m.HistogramCount(t, app.MetricDeliveryLag))
		require.ElementsMatch(t, []string{"bothy.outcome"}, keyNames(m.AttributeKeys(t, app.MetricDeliveriesFinished)))
	})
	t.Run("a failure that is retried", func(t *testing.T) {
		t.Parallel()
		b, sub := withPending(t, options{}, "to a receiver that fails")
		b.recv.status(http.StatusInternalServerError)
		b.deliver(t, sub)
		m := b.appMetrics
		require.Equal(t, uint64(1), m.HistogramCount(t, app.MetricAttemptDuration, outcome("failed"), reason("http_status")))
		require.Zero(t, m.Sum(t, app.MetricDeliveriesFinished), "a pending delivery is not finished")
		require.Zero(t, m.HistogramCount(t, app.MetricDeliveryLag))
	})
	t.Run("a receiver that is gone", func(t *testing.T) {
		t.Parallel()
		b, sub := withPending(t, options{}, "to a receiver that is gone")
		b.recv.status(http.StatusGone)
		b.deliver(t, sub)
		m := b.appMetrics
		require.Equal(t, int64(1), m.Sum(t, app.MetricDeliveriesFinished, outcome("failed"), reason("gone")))
		require.Equal(t, uint64(1), m.HistogramCount(t, app.MetricAttemptDuration, outcome("gone"), reason("gone")))
		require.Equal(t, int64(1), m.Sum(t, app.MetricSubscriptionTransitions,
			attr.WebhookSubscriptionState.String("disabled"), reason("gone")))
	})
	t.Run("a revoked right", func(t *testing.T) {
		t.Parallel()
		b, sub := withPending(t, options{}, "before the revocation")
		require.NoError(t, b.w.Services.Apps.DeleteAppGrant(b.robin(t), b.appID, b.w.G6.ID))
		b.deliver(t, sub)
		m := b.appMetrics
		require.Equal(t, int64(1), m.Sum(t, app.MetricDeliveriesFinished, outcome("dead"), reason("not_authorized")))
		require.Zero(t, m.HistogramCount(t, app.MetricAttemptDuration), "no request, no attempt")
		for _, name := range []string{app.MetricDeliveriesFinished, app.MetricAttemptDuration, app.MetricDeliveryLag} {
			require.NotContains(t, keyNames(m.AttributeKeys(t, name)), string(attr.WebhookSubscriptionID))
		}
	})
}

// deadlockedClaim answers the second ClaimHeads with a deadlock, so the
// unit of work runs the record of the first attempt again.
type deadlockedClaim struct {
	app.DeliveryStore
	claims atomic.Int32
}

func (s *deadlockedClaim) ClaimHeads(ctx context.Context, cs ...app.HeadClaimRequest) ([][]app.ClaimedHead, error) {
	if s.claims.Add(1) == 2 {
		return nil, &pgconn.PgError{Code: "40P01"}
	}
	return s.DeliveryStore.ClaimHeads(ctx, cs...)
}

// TestDeliveryMetricsCountARepeatedUnitOfWorkOnce: the unit of work that
// records an attempt and claims the next head is run again after a
// deadlock; the delivery it finished is counted once.
func TestDeliveryMetricsCountARepeatedUnitOfWorkOnce(t *testing.T) {
	t.Parallel()
	store := &deadlockedClaim{}
	b := deliveryWorld(t, options{wrap: func(s app.DeliveryStore) app.DeliveryStore {
		store.DeliveryStore = s
		return store
	}, change: func(o *app.DeliveryOptions) { o.BatchMaxDeliveries = 1 }})
	b.post(t, b.w.Alex, b.w.Eskalation, "recorded twice, counted once")
	// A second head, so the unit of work that records the first claims
	// again (D-M2-26-67); one head per claim, so it is not in the first
	// batch.
	b.postAndRound(t, "the head after it")
	b.deliver(t, b.sub)
	require.Equal(t, int32(3), store.claims.Load(), "the second claim deadlocked and ran again")
	for _, r := range b.deliveries(t, b.sub) {
		require.Equal(t, "succeeded", r.Status)
	}
	require.Equal(t, int64(2), b.appMetrics.Sum(t, app.MetricDeliveriesFinished, attr.Outcome.String("succeeded")),
		"two deliveries, each counted once")
	require.Equal(t, uint64(2), b.appMetrics.HistogramCount(t, app.MetricDeliveryLag))
}

func keyNames[K ~string](ks []K) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}
