package app_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/webhookstest"
)

// TestRoundGivesAJobToASubscriptionWhoseRowIsLocked (ADR 0106): as in
// TestDeliveryRunGoesOnWithAHeadThatCameDuringItsLastAttempt, Sam writes
// while the run's last attempt is out, but another transaction locks the
// subscription's row for update meanwhile, as a record under way does. The round cannot tell whether that
// record read its rows, so it does not wait and starts the subscription's
// job as before.
func TestRoundGivesAJobToASubscriptionWhoseRowIsLocked(t *testing.T) {
	t.Parallel()
	b, _ := twoHeadsTraced(t, options{})
	b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			holder, err := b.db.Owner.Begin(bg)
			require.NoError(t, err)
			_, err = holder.Exec(bg, `SELECT 1 FROM webhook_subscriptions WHERE id = $1 FOR NO KEY UPDATE`, b.sub)
			require.NoError(t, err)
			b.post(t, b.w.Sam, b.w.Eskalation, "Alex, one more")
			b.runRound(t)
			require.NoError(t, holder.Commit(bg))
		}
		w.WriteHeader(http.StatusNoContent)
	})
	rounds := b.w.Scheduled(t, b.sub)
	wakeUp := b.now().Add(b.opts.ChainMaxDuration + b.leaseLength())
	b.deliver(t, b.sub)
	require.Len(t, b.recv.wait(t, 3), 3)
	require.Equal(t, append(rounds, webhookstest.AtOnce, wakeUp), b.w.Scheduled(t, b.sub),
		"the rounds' jobs, the job of Sam's round, and the run's one wake-up")
}

// seqOf returns the event seq of the delivery r, failing the test when r
// carried no envelope.
func seqOf(t *testing.T, r received) int64 {
	t.Helper()
	seq, ok := r.seq()
	require.True(t, ok, "the body is an event envelope")
	return seq
}
