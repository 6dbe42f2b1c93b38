package app_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/webhookstest"
	"bothy/server/internal/kernel/ids"
)

// TestRedeliverWebhookSendSide is the send side of TestRedeliverWebhook
// (adapters/httpapi, the operation redeliverWebhook): a dead delivery the
// owner redelivers goes out again with the same webhook-id and ends
// succeeded, and a pending delivery waiting in backoff goes out at once
// instead of at its next_attempt_at.
func TestRedeliverWebhookSendSide(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{})
	sub := b.sub
	// redeliver redelivers id as Robin (redeliverWebhook): due at once,
	// with a job at once.
	redeliver := func(id ids.ID) {
		t.Helper()
		got, err := b.w.Services.Webhooks.Redeliver(b.robin(t), id)
		require.NoError(t, err)
		require.Equal(t, apps.DeliveryPending, got.Status)
		require.True(t, got.NextAttemptAt.Equal(b.now()), "due at once")
		require.Contains(t, b.w.Scheduled(t, sub), webhookstest.AtOnce, "with a job at once")
	}

	t.Run("a dead delivery goes out with the same webhook-id and ends succeeded", func(t *testing.T) {
		b.postAndRound(t, "dies after its retry window")
		b.recv.status(http.StatusInternalServerError)
		b.deliver(t, sub)
		b.advance(t, b.opts.Retry.MaxAge)
		b.deliver(t, sub)
		dead := b.deliveries(t, sub)[0]
		require.Equal(t, "dead", dead.Status)
		require.Equal(t, "disabled", b.subscription(t, sub).State, "retry_max_age disabled the subscription")
		b.setState(t, sub, apps.SubscriptionActive)
		b.deliver(t, sub)
		require.Len(t, b.recv.requests(), 2, "a re-enable does not send a dead delivery")

		b.recv.status(http.StatusOK)
		redeliver(dead.ID)
		b.deliver(t, sub)
		got := b.recv.requests()
		require.Len(t, got, 3)
		require.Equal(t, dead.EventID.String(), got[0].id)
		require.Equal(t, got[0].id, got[2].id, "the same webhook-id as the first attempt")
		row := b.deliveries(t, sub)[0]
		require.Equal(t, "succeeded", row.Status)
		require.Equal(t, http.StatusOK, *row.ResponseCode)
		require.Nil(t, row.LastError)
		require.Equal(t, 3, row.Attempt, "the attempt count goes on")
		require.Equal(t, row.EventSeq, b.subscription(t, sub).LastDeliveredSeq)
	})

	t.Run("a pending delivery in backoff goes out at once", func(t *testing.T) {
		b.postAndRound(t, "waits in backoff")
		b.recv.status(http.StatusInternalServerError)
		b.deliver(t, sub)
		waiting := b.deliveries(t, sub)[1]
		require.Equal(t, "pending", waiting.Status)
		require.True(t, waiting.NextAttemptAt.After(b.now()), "in backoff")
		b.deliver(t, sub)
		require.Len(t, b.recv.requests(), 4, "not due: nothing is sent")

		b.recv.status(http.StatusOK)
		redeliver(waiting.ID)
		b.deliver(t, sub)
		got := b.recv.requests()
		require.Len(t, got, 5, "sent without waiting for its backoff")
		require.Equal(t, waiting.EventID.String(), got[4].id)
		require.Equal(t, got[3].id, got[4].id, "the same webhook-id")
		row := b.deliveries(t, sub)[1]
		require.Equal(t, "succeeded", row.Status)
		require.Equal(t, 2, row.Attempt)
		require.True(t, row.CreatedAt.Equal(waiting.CreatedAt), "a pending delivery keeps its retry window")
	})
}
