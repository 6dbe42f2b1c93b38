package app_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/app"
	"bothy/server/internal/kernel/ids"
)

// claimSizes counts the heads of every claim (ADR 0088).
type claimSizes struct {
	app.DeliveryStore
	mu    sync.Mutex
	sizes []int
}

func (s *claimSizes) ClaimHeads(ctx context.Context, cs ...app.HeadClaimRequest) ([][]app.ClaimedHead, error) {
	s.mu.Lock()
	for _, c := range cs {
		s.sizes = append(s.sizes, len(c.Heads))
	}
	s.mu.Unlock()
	return s.DeliveryStore.ClaimHeads(ctx, cs...)
}

// claims returns the sizes of the claims so far.
func (s *claimSizes) claims() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.sizes...)
}

// batchWorld returns a world whose claims sizes counts, with the pending
// heads texts of Tracker's subscription.
func batchWorld(t *testing.T, o options, texts ...string) (*bundle, *claimSizes) {
	t.Helper()
	sizes := &claimSizes{}
	o.wrap = func(s app.DeliveryStore) app.DeliveryStore {
		sizes.DeliveryStore = s
		return sizes
	}
	b := deliveryWorld(t, o)
	for _, text := range texts {
		b.post(t, b.w.Alex, b.w.Eskalation, text)
	}
	b.runRound(t)
	return b, sizes
}

// TestDeliveryBatchStopsAtAFailure (ADR 0088): one claim takes the four
// due heads; the receiver answers 500 to the second, so the batch sends
// nothing after it. The first is succeeded, the second waits for its
// retry, and the two after it are pending with their attempt given back:
// no request of theirs left. The retry sends the rest in seq order.
func TestDeliveryBatchStopsAtAFailure(t *testing.T) {
	t.Parallel()
	b, sizes := batchWorld(t, options{}, "one", "two", "three", "four")
	b.recv.failRequest(1, http.StatusNoContent)
	rows := b.deliveries(t, b.sub)
	b.deliver(t, b.sub)
	require.Equal(t, []int{4}, sizes.claims(), "one claim for the four due heads")
	ev := func(i int) string { return rows[i].EventID.String() }
	require.Equal(t, []string{ev(0), ev(1)}, ids2(b.recv.requests()), "nothing after the failure")
	got := b.deliveries(t, b.sub)
	require.Equal(t, "succeeded", got[0].Status)
	require.Equal(t, "pending", got[1].Status)
	require.Equal(t, 1, got[1].Attempt)
	require.Equal(t, "http_status", *got[1].LastError)
	for _, r := range got[2:] {
		require.Equal(t, "pending", r.Status)
		require.Zero(t, r.Attempt, "the heads after the failure were claimed and given back")
	}
	require.Equal(t, rows[0].EventSeq, b.subscription(t, b.sub).LastDeliveredSeq)
	require.Equal(t, 1, b.subscription(t, b.sub).ConsecutiveFailures)

	b.advance(t, b.opts.Retry.Cap)
	b.deliver(t, b.sub)
	require.Equal(t, []string{ev(0), ev(1), ev(1), ev(2), ev(3)}, ids2(b.recv.requests()))
	for i, r := range b.deliveries(t, b.sub) {
		require.Equal(t, "succeeded", r.Status, "delivery %d", i)
	}
	require.Equal(t, []int{4, 3}, sizes.claims())
}

// TestDeliveryBatchIsCutByItsTime (ADR 0088): a send after the first
// starts only while a whole webhook.delivery_timeout fits into the batch's
// lease. The first answer takes longer than webhook.batch_max_duration,
// so the batch ends after it; its other heads get their attempt back and
// the run's next claims send them, each request with its whole timeout,
// each event once. The first batch had time for one send, so the next
// claim takes one (D-M2-26-88); that one is answered at once, so the claim
// after it takes every head left.
func TestDeliveryBatchIsCutByItsTime(t *testing.T) {
	t.Parallel()
	b, sizes := batchWorld(t, options{}, "one", "two", "three")
	b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			b.advance(t, b.opts.BatchMaxDuration+time.Millisecond)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	rows := b.deliveries(t, b.sub)
	b.deliver(t, b.sub)
	require.Equal(t, []int{3, 1, 1}, sizes.claims(), "the run claimed the two heads the first batch did not send, one, then the other")
	require.Equal(t, []string{rows[0].EventID.String(), rows[1].EventID.String(), rows[2].EventID.String()},
		ids2(b.recv.requests()))
	for i, r := range b.deliveries(t, b.sub) {
		require.Equal(t, "succeeded", r.Status, "delivery %d", i)
		require.Equal(t, 1, r.Attempt, "delivery %d: one request, one attempt", i)
	}
}

// paced answers 204 to every request after moving the fake clock by
// pace, as a receiver that takes that long to answer would.
func (b *bundle) paced(t *testing.T, pace func(n int) time.Duration) {
	b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
		b.advance(t, pace(n))
		w.WriteHeader(http.StatusNoContent)
	})
}

// posts returns n texts to post.
func posts(n int) []string {
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("message %d", i)
	}
	return texts
}

// TestDeliveryBatchTakesWhatItsTimeSends (D-M2-26-88): a receiver that
// answers in 300 ms gets four requests of a batch in its second
// (webhook.batch_max_duration), so after the first batch, which claimed
// the most it may and gave twelve heads back, every claim of the run takes
// four: no claim, signature and give-back of heads the batch has no time
// to send.
func TestDeliveryBatchTakesWhatItsTimeSends(t *testing.T) {
	t.Parallel()
	b, sizes := batchWorld(t, options{}, posts(20)...)
	b.paced(t, func(int) time.Duration { return 300 * time.Millisecond })
	b.deliver(t, b.sub)
	require.Len(t, b.recv.requests(), 20)
	require.Equal(t, []int{16, 4, 4, 4, 4}, sizes.claims())
	for i, r := range b.deliveries(t, b.sub) {
		require.Equal(t, "succeeded", r.Status, "delivery %d", i)
		require.Equal(t, 1, r.Attempt, "delivery %d: one request, one attempt", i)
	}
}

// TestDeliveryBatchGrowsWhenTheAnswersComeFaster (D-M2-26-88): the same
// receiver answers at once from its fifth request on, so the batch of four
// that follows the slow one sends in no time, and the next claim takes
// every head left again.
func TestDeliveryBatchGrowsWhenTheAnswersComeFaster(t *testing.T) {
	t.Parallel()
	b, sizes := batchWorld(t, options{}, posts(20)...)
	b.paced(t, func(n int) time.Duration {
		if n < 4 {
			return 300 * time.Millisecond
		}
		return 0
	})
	b.deliver(t, b.sub)
	require.Len(t, b.recv.requests(), 20)
	require.Equal(t, []int{16, 4, 12}, sizes.claims())
}

// chainOfEight makes a run leave its subscription to a new job after
// eight deliveries (webhook.chain_max_deliveries).
func chainOfEight(o *app.DeliveryOptions) { o.ChainMaxDeliveries = 8 }

// TestDeliveryRunStartsAtThePaceOfTheRunBefore (D-M2-26-89): the receiver
// answers in 300 ms, so a batch's second holds four sends. The first run
// claims eight (its budget), sends four and learns that pace; the runs of
// the next jobs of the subscription in this worker start at four instead
// of claiming, signing and giving back heads their batch has no time for.
func TestDeliveryRunStartsAtThePaceOfTheRunBefore(t *testing.T) {
	t.Parallel()
	b, sizes := batchWorld(t, options{change: chainOfEight}, posts(20)...)
	b.paced(t, func(int) time.Duration { return 300 * time.Millisecond })
	for range 3 {
		b.deliver(t, b.sub)
	}
	require.Len(t, b.recv.requests(), 20)
	require.Equal(t, []int{8, 4, 4, 4, 4}, sizes.claims())
}

// TestDeliveryRunsTogetherStartAtThePaceOfTheRunBefore (D-M2-26-89): a
// job of a consumer round for several subscriptions starts each run at
// the pace its subscription's run before it learned: its first claim
// takes four heads, and the events read ahead with the lock are theirs.
func TestDeliveryRunsTogetherStartAtThePaceOfTheRunBefore(t *testing.T) {
	t.Parallel()
	c := newQueryLog()
	b, sizes := batchWorld(t, options{change: chainOfEight, tracer: c}, posts(20)...)
	b.paced(t, func(int) time.Duration { return 300 * time.Millisecond })
	b.deliver(t, b.sub)
	c.reset()
	require.NoError(t, b.d.DeliverTogether(bg, []ids.ID{b.sub}, b.now()))
	require.Len(t, b.recv.requests(), 16)
	require.Equal(t, []int{8, 4, 4, 4}, sizes.claims())
	require.Len(t, c.firstArgs("EventListByKeys")[0], 4, "the events of the first claim's four heads read ahead")
}

// TestDeliveryRunForgetsAnOldPace (D-M2-26-89): a pace learned more than
// two webhook.chain_max_duration ago tells nothing of the receiver now;
// the run starts at the most it may claim again.
func TestDeliveryRunForgetsAnOldPace(t *testing.T) {
	t.Parallel()
	b, sizes := batchWorld(t, options{change: chainOfEight}, posts(20)...)
	b.paced(t, func(int) time.Duration { return 300 * time.Millisecond })
	b.deliver(t, b.sub)
	b.advance(t, 2*b.opts.ChainMaxDuration+time.Second)
	b.deliver(t, b.sub)
	require.Equal(t, []int{8, 4, 8, 4}, sizes.claims())
}

// TestDeliveryBatchOfALimitedSubscriptionHoldsOneHead (ADR 0088, ADR
// 0081): a subscription with max_per_second claims one head at a time, so
// its rate window counts every attempt as it ends.
func TestDeliveryBatchOfALimitedSubscriptionHoldsOneHead(t *testing.T) {
	t.Parallel()
	b, sizes := batchWorld(t, options{}, "one", "two", "three")
	b.limit(t, b.sub, 10)
	b.deliver(t, b.sub)
	require.Len(t, b.recv.requests(), 3)
	require.Equal(t, []int{1, 1, 1}, sizes.claims())
}

// TestDeliveryBatchRevokedRightEndsTheRestWithoutRequest (ADR 0088,
// AZ-M49): the right goes while the first batch is out. The batch was
// claimed under the right and is sent; the next claim checks every head
// again and ends them dead with not_authorized, without a request.
func TestDeliveryBatchRevokedRightEndsTheRestWithoutRequest(t *testing.T) {
	t.Parallel()
	b, sizes := batchWorld(t, options{change: func(o *app.DeliveryOptions) { o.BatchMaxDeliveries = 2 }},
		"one", "two", "three", "four")
	b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			require.NoError(t, b.w.Services.Apps.DeleteAppGrant(b.robin(t), b.appID, b.w.G6.ID))
		}
		w.WriteHeader(http.StatusNoContent)
	})
	b.deliver(t, b.sub)
	require.Len(t, b.recv.requests(), 2, "the batch out when the right went")
	require.Equal(t, []int{2}, sizes.claims(), "no claim after the revocation")
	require.True(t, b.statusesAre(t, "succeeded", "succeeded", "dead", "dead"))
	for _, r := range b.deliveries(t, b.sub)[2:] {
		require.Equal(t, "not_authorized", *r.LastError)
		require.Zero(t, r.Attempt)
	}
}
