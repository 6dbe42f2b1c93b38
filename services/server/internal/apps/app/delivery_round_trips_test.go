package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/instance"
	"bothy/server/internal/kernel/ids"
)

// twoHeadsTraced returns a world with options o whose delivery path's
// statements c counts, with two pending heads of Tracker's subscription
// and c reset after the round that made them.
func twoHeadsTraced(t *testing.T, o options) (*bundle, *queryLog) {
	t.Helper()
	c := newQueryLog()
	o.tracer = c
	b := deliveryWorld(t, o)
	b.post(t, b.w.Alex, b.w.Eskalation, "Sam, the printer is back")
	b.postAndRound(t, "Robin, so is the scanner")
	c.reset()
	return b, c
}

// TestDeliveryRunEndsWithoutAClaimThatFindsNothing (D-M2-26-67, ADR
// 0088): the run claims both pending heads as one batch, sends them one
// after the other and records both in one statement, which tells that
// nothing else is pending, so the run ends without one more claim; a head
// a later round creates is delivered by the run of the job that round
// leaves. The rounds run in another process (ADR 0104: a run of a round
// of its own process reads its events with its lock,
// TestDeliveryRunReadsWhatItsRoundMadeWithItsLock).
func TestDeliveryRunEndsWithoutAClaimThatFindsNothing(t *testing.T) {
	t.Parallel()
	b, c := twoHeadsTraced(t, options{roundElsewhere: true})
	b.deliver(t, b.sub)
	b.recv.wait(t, 2)
	require.Equal(t, 1, c.count("WebhookSubscriptionLockDeliveryTargets"), "the run's first lock with its heads")
	require.Equal(t, 1, c.count("WebhookSubscriptionRecordAttempt"),
		"then the batch's record locks in its own statement (D-M2-26-68)")
	require.Equal(t, 1, c.count("WebhookSubscriptionLockForRecord"),
		"right after the lock it holds before it begins, so it reads the heads committed while it waited (D-M2-26-83)")
	require.Equal(t, 1, c.count("WebhookDeliveryClaimHeads"), "one claim for the batch, none after its record")
	require.Equal(t, 1, c.count("EventListByKeys"), "one read for the batch's events")
	require.Equal(t, 18, c.total(), "the run's statements: the first unit of work BEGIN, three SET LOCAL (lock_timeout, "+
		"plan_cache_mode, enable_seqscan; D-SQ-19, D-SQ-25), lock with the heads, events, grants, claim, lease wake-up, "+
		"sync_epoch, COMMIT; the second BEGIN, three SET LOCAL, lock, record, COMMIT (the wake-up stays for later runs, ADR 0087)")
	require.Equal(t, 6, c.roundTrips(), "the first unit of work BEGIN with the lock, the events with the grants, "+
		"the claim with the lease wake-up (ADR 0085), sync_epoch, COMMIT; the second BEGIN with the lock, the record "+
		"and the COMMIT (D-M2-26-86)")

	b.postAndRound(t, "Alex, and the coffee machine")
	c.reset()
	b.deliver(t, b.sub)
	got := b.recv.wait(t, 3)
	require.Len(t, got, 3)
	for _, r := range b.deliveries(t, b.sub) {
		require.Equal(t, "succeeded", r.Status, "seq %d", r.EventSeq)
	}
	require.Equal(t, 4, c.roundTrips(), "a later run, whose claim needs no wake-up (the first run's covers it, "+
		"ADR 0087): BEGIN with the lock, the events with the grants, the claim with the COMMIT (D-M2-26-80); "+
		"BEGIN with the lock, the record and the COMMIT (D-M2-26-86)")
}

// staleClaims answers the first claims of its subscription as claims
// whose heads changed under the row lock: the statement runs, for a head
// that is not there, and claims nothing.
type staleClaims struct {
	app.DeliveryStore
	sub   ids.ID
	stale atomic.Int32
}

func (s *staleClaims) ClaimHeads(ctx context.Context, cs ...app.HeadClaimRequest) ([][]app.ClaimedHead, error) {
	cs = slices.Clone(cs)
	for i := range cs {
		if cs[i].SubscriptionID == s.sub && s.stale.Add(-1) >= 0 {
			cs[i].Heads = []ids.ID{ids.New()}
		}
	}
	return s.DeliveryStore.ClaimHeads(ctx, cs...)
}

// TestDeliveryRunReadsWhatItsRoundMadeWithItsLock (ADR 0104): the run a
// round of its own process started reads the events of the rows that
// round made, and the rights of their app, in the round trip of its lock
// (after the lock, in that order), so its first unit of work takes one
// round trip less than a run of a round of another process
// (TestDeliveryRunEndsWithoutAClaimThatFindsNothing). A round that finds
// an open row of the subscription (here one a failed attempt left) keeps
// nothing, as its rows are not the heads: that run reads after its lock,
// and every head goes out once, in order.
func TestDeliveryRunReadsWhatItsRoundMadeWithItsLock(t *testing.T) {
	t.Parallel()
	b, c := twoHeadsTraced(t, options{})
	b.deliver(t, b.sub)
	b.recv.wait(t, 2)
	trips := c.TakeNames()
	require.Contains(t, trips[0], "WebhookSubscriptionLockDeliveryTargets", "%v", trips)
	require.Contains(t, trips[0], "EventListByKeys", "the events with the lock: %v", trips)
	require.Len(t, trips[0], 7, "BEGIN, three SET LOCAL, the lock, the events, the grants: %v", trips)
	require.Equal(t, 1, c.count("EventListByKeys"), "nothing read again")
	require.Len(t, trips, 5, "BEGIN with the lock, the events and the grants; the claim with the lease wake-up; "+
		"sync_epoch; COMMIT; the second BEGIN with the lock, the record and the COMMIT (D-M2-26-86): %v", trips)

	b.postAndRound(t, "Alex, and the coffee machine")
	c.reset()
	b.deliver(t, b.sub)
	b.recv.wait(t, 3)
	require.Equal(t, 3, c.roundTrips(), "BEGIN with the lock, the events and the grants; the claim with the COMMIT; "+
		"BEGIN with the lock, the record and the COMMIT")

	// Seq 4 fails; seq 5 comes from the next round, which finds seq 4
	// open and keeps nothing: the retry run reads both after its lock.
	b.recv.failRequest(3, http.StatusOK)
	b.postAndRound(t, "Sam, the fourth")
	b.deliver(t, b.sub)
	b.postAndRound(t, "Robin, the fifth")
	b.advance(t, time.Hour)
	c.reset()
	b.deliver(t, b.sub)
	got := b.recv.wait(t, 6)
	require.Equal(t, 1, c.count("EventListByKeys"), "seq 4 and seq 5 read once, after the lock")
	require.NotContains(t, c.TakeNames()[0], "EventListByKeys", "nothing read with the lock")
	require.Equal(t, got[3].id, got[4].id, "the failed head again first")
	require.NotEqual(t, got[4].id, got[5].id)
	rows := b.deliveries(t, b.sub)
	require.Len(t, rows, 5)
	for _, r := range rows {
		require.Equal(t, "succeeded", r.Status, "seq %d", r.EventSeq)
	}
}

// TestDeliveryRunClaimsAgainAfterAClaimThatCommittedNothing
// (D-M2-26-80): a claim that travels with its COMMIT and finds its heads
// changed cannot read them again in its unit of work, which has ended;
// the run takes a fresh step, claims and delivers.
func TestDeliveryRunClaimsAgainAfterAClaimThatCommittedNothing(t *testing.T) {
	t.Parallel()
	c := newQueryLog()
	store := &staleClaims{}
	b := deliveryWorld(t, options{tracer: c, wrap: func(s app.DeliveryStore) app.DeliveryStore {
		store.DeliveryStore = s
		return store
	}})
	store.sub = b.sub
	b.postAndRound(t, "Sam, the printer is back")
	b.deliver(t, b.sub)
	b.recv.wait(t, 1)

	b.postAndRound(t, "Robin, so is the scanner")
	c.reset()
	store.stale.Store(1)
	b.deliver(t, b.sub)
	require.Len(t, b.recv.wait(t, 2), 2, "the run delivered after its stale claim")
	for _, r := range b.deliveries(t, b.sub) {
		require.Equal(t, "succeeded", r.Status, "seq %d", r.EventSeq)
	}
	require.Equal(t, 2, c.count("WebhookSubscriptionLockDeliveryTargets"), "the stale claim's step, then a fresh one")
	require.Equal(t, 2, c.count("WebhookDeliveryClaimHeads"), "the stale claim, then the one that claimed")
}

// TestDeliveryRunGoesOnWithAHeadThatCameDuringItsLastAttempt (D-M2-26-67):
// a head a round created while the run's last pending attempt was out is
// delivered by the same run, whose record of that attempt found it
// pending, after the other two. The round found the lease in force and
// started no job (ADR 0106: a job would find the lease and do nothing).
// The run's one lease wake-up covers all three claims (ADR 0067) and
// stays for later runs (ADR 0087).
func TestDeliveryRunGoesOnWithAHeadThatCameDuringItsLastAttempt(t *testing.T) {
	t.Parallel()
	b, c := twoHeadsTraced(t, options{})
	b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			// Sam writes while the last head's attempt is out.
			b.post(t, b.w.Sam, b.w.Eskalation, "Alex, one more")
			b.runRound(t)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	rounds := b.w.Scheduled(t, b.sub)
	wakeUp := b.now().Add(b.opts.ChainMaxDuration + b.leaseLength())
	b.deliver(t, b.sub)
	got := b.recv.wait(t, 3)
	require.Len(t, got, 3, "the run delivered the head that came during its last attempt")
	require.Equal(t, append(rounds, wakeUp), b.w.Scheduled(t, b.sub),
		"the rounds' jobs before, the run's one wake-up, and no job of Sam's round")
	require.Equal(t, 1, c.count("WebhookSubscriptionLockLeased"), "Sam's round asked for the lease")
	require.Equal(t, 2, c.count("WebhookSubscriptionLockDeliveryTargets"),
		"the record that was to end the run went with its COMMIT (D-M2-26-86), and the run claims the head it found in a fresh step")
	for _, r := range b.deliveries(t, b.sub) {
		require.Equal(t, "succeeded", r.Status, "seq %d", r.EventSeq)
	}
	require.Less(t, seqOf(t, got[0]), seqOf(t, got[1]))
	require.Less(t, seqOf(t, got[1]), seqOf(t, got[2]))
}

// countingState counts the reads of the instance record.
type countingState struct {
	instance.State
	loads atomic.Int32
}

func (s *countingState) Load(ctx context.Context) (instance.Record, error) {
	s.loads.Add(1)
	return s.State.Load(ctx)
}

// TestDeliverySyncEpochIsReadOncePerWorker (D-M2-26-66): the delivery path
// reads instance.sync_epoch once, in the first run that signs, and every
// later run's body carries the same epoch.
func TestDeliverySyncEpochIsReadOncePerWorker(t *testing.T) {
	t.Parallel()
	counter := &countingState{}
	b := deliveryWorld(t, options{state: func(s instance.State) instance.State { counter.State = s; return counter }})
	b.postAndRound(t, "Sam, first")
	b.deliver(t, b.sub)
	b.postAndRound(t, "Sam, second")
	b.deliver(t, b.sub)
	got := b.recv.wait(t, 2)
	require.Len(t, got, 2)
	require.Equal(t, int32(1), counter.loads.Load(), "two runs, one read")
	rec, err := b.w.Services.Instance.Load(bg)
	require.NoError(t, err)
	for _, r := range got {
		var body struct {
			SyncEpoch string `json:"sync_epoch"`
		}
		require.NoError(t, json.Unmarshal(r.body, &body))
		require.Equal(t, rec.SyncEpoch.String(), body.SyncEpoch)
	}
}

// TestDeliveryRecordOfAPausedSubscriptionIsComputedAgain (D-M2-26-68): the
// record of an attempt is computed from the subscription as the claim
// left it and written with the lock in one statement only while the
// subscription's standing is still that; Robin pauses it while the
// request is out, and the receiver answers 500, so the record is computed
// again from the paused subscription under the lock: the pause stays, the
// failure counts once, and nothing follows.
func TestDeliveryRecordOfAPausedSubscriptionIsComputedAgain(t *testing.T) {
	t.Parallel()
	b, c := twoHeadsTraced(t, options{})
	paused := make(chan error, 1)
	b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			state := apps.SubscriptionPaused
			_, err := b.w.Services.Webhooks.UpdateSubscription(b.robin(t), apps.UpdateSubscription{ID: b.sub, State: &state})
			paused <- err
		}
		w.WriteHeader(http.StatusInternalServerError)
	})
	b.deliver(t, b.sub)
	require.NoError(t, <-paused)
	require.Len(t, b.recv.requests(), 1, "a paused subscription sends nothing more")
	require.Equal(t, 1, c.count("WebhookSubscriptionLockDeliveryTargets"), "the first lock")
	require.Equal(t, 2, c.count("WebhookSubscriptionRecordAttempt"), "the record that found the pause, the record computed again")
	got := b.subscription(t, b.sub)
	require.Equal(t, "paused", got.State, "the record keeps the owner's pause")
	require.Equal(t, 1, got.ConsecutiveFailures)
	rows := b.deliveries(t, b.sub)
	require.Equal(t, "pending", rows[0].Status, "the failed head waits for its retry")
	require.Equal(t, 1, rows[0].Attempt)
	require.Equal(t, "pending", rows[1].Status)
	require.Equal(t, 0, rows[1].Attempt)
}

// TestDeliveryRecordWithItsCommitFindsItsSubscriptionChanged (D-M2-26-86):
// the record of a run's last batch travels with its COMMIT, and writes
// nothing when the subscription is no longer as the claim left it; Robin
// pauses it while the request is out and the receiver accepts. The run
// records the batch again in a unit of work of its own, computed from the
// paused subscription under its lock: the delivery succeeded once, the
// lease is given back and the pause stays.
func TestDeliveryRecordWithItsCommitFindsItsSubscriptionChanged(t *testing.T) {
	t.Parallel()
	c := newQueryLog()
	b := deliveryWorld(t, options{tracer: c})
	b.postAndRound(t, "Sam, the printer is back")
	paused := make(chan error, 1)
	b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
		state := apps.SubscriptionPaused
		_, err := b.w.Services.Webhooks.UpdateSubscription(b.robin(t), apps.UpdateSubscription{ID: b.sub, State: &state})
		paused <- err
		w.WriteHeader(http.StatusNoContent)
	})
	c.reset()
	b.deliver(t, b.sub)
	require.NoError(t, <-paused)
	require.Len(t, b.recv.requests(), 1)
	require.Equal(t, 3, c.count("WebhookSubscriptionRecordAttempt"), "the record with the COMMIT that found the pause, "+
		"then in a unit of work of its own the record from the claim's subscription and the one computed again")
	rows := b.deliveries(t, b.sub)
	require.Len(t, rows, 1)
	require.Equal(t, "succeeded", rows[0].Status)
	require.Equal(t, 1, rows[0].Attempt)
	got := b.subscription(t, b.sub)
	require.Equal(t, "paused", got.State, "the record keeps the owner's pause")
	require.Equal(t, rows[0].EventSeq, got.LastDeliveredSeq)
	var leased bool
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT lease_delivery_id IS NOT NULL FROM webhook_subscriptions WHERE id = $1`,
		b.sub).Scan(&leased))
	require.False(t, leased, "the lease is given back")
}
