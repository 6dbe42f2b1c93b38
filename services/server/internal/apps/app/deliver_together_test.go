package app_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/otel/attr"
)

// createAt creates a subscription of Tracker to the receiver's path for
// message.created, as Robin does, and returns its id.
func (b *bundle) createAt(t testing.TB, path string) ids.ID {
	t.Helper()
	created, err := b.w.Services.Webhooks.CreateSubscription(b.robin(t),
		apps.CreateSubscription{AppID: b.appID, URL: b.recv.url(path), EventTypes: []string{"message.created"}})
	require.NoError(t, err)
	return created.ID
}

// ownJobs counts the apps.webhook_deliver jobs due at once that name sub
// alone (a lease wake-up is due later).
func (b *bundle) ownJobs(t testing.TB, sub ids.ID) int {
	t.Helper()
	var n int
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT count(*) FROM river_job
		WHERE kind = 'apps.webhook_deliver' AND args->>'subscription_id' = $1 AND state = 'available'`, sub.String()).Scan(&n))
	return n
}

// sharedJobs returns the number of subscriptions each apps.webhook_deliver
// job for several names, smallest first.
func (b *bundle) sharedJobs(t testing.TB) []int {
	t.Helper()
	var out []int
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT coalesce(array_agg(jsonb_array_length(args->'subscription_ids')
		ORDER BY jsonb_array_length(args->'subscription_ids')), '{}') FROM river_job
		WHERE kind = 'apps.webhook_deliver' AND args ? 'subscription_ids'`).Scan(&out))
	return out
}

// withThree returns a world with three subscriptions of Tracker (its own
// and two at /hooks/b and /hooks/c), each with one pending delivery the
// round made, and the subscriptions in the order of the round's job.
func withThree(t *testing.T, o options) (*bundle, []ids.ID) {
	t.Helper()
	b := deliveryWorld(t, o)
	subs := []ids.ID{b.sub, b.createAt(t, "/hooks/b"), b.createAt(t, "/hooks/c")}
	b.postAndRound(t, "Sam, the printer is back")
	return b, subs
}

// succeeded reports whether every delivery of sub succeeded and it has
// at least one.
func (b *bundle) succeeded(t testing.TB, sub ids.ID) bool {
	t.Helper()
	rows := b.deliveries(t, sub)
	for _, r := range rows {
		if r.Status != "succeeded" {
			return false
		}
	}
	return len(rows) > 0
}

// TestRoundSchedulesItsSubscriptionsInGroups (ADR 0089): a round that
// serves more subscriptions than webhook.run_max_subscriptions inserts as
// few jobs as the key allows, of sizes that differ by one at most; the job
// of a group of one names its subscription as every other trigger does.
func TestRoundSchedulesItsSubscriptionsInGroups(t *testing.T) {
	t.Parallel()
	b, subs := withThree(t, options{change: func(o *app.DeliveryOptions) { o.RunMaxSubscriptions = 2 }})
	require.Equal(t, []int{2}, b.sharedJobs(t), "three subscriptions at two a job: one job of two")
	own := 0
	for _, sub := range subs {
		own += b.ownJobs(t, sub)
		require.NotEmpty(t, b.w.Scheduled(t, sub), "every subscription the round served has a job")
	}
	require.Equal(t, 1, own, "and one of its own")
}

// TestDeliverTogetherClaimsInOneUnitOfWork (ADR 0089): the runs of a
// round's job lock and claim all of its subscriptions in one unit of work
// whose statements travel together, in as many round trips as one
// subscription's first unit of work takes; then each records in its own.
func TestDeliverTogetherClaimsInOneUnitOfWork(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		elsewhere bool
		// first is the round trips of the shared claim.
		first int
	}{
		// BEGIN with the lock, the events with the grants, the claims with
		// the lease wake-ups, sync_epoch, COMMIT.
		{name: "after a round of another process", elsewhere: true, first: 5},
		// The events and the grants travel with the lock (ADR 0104).
		{name: "after a round of its own process", first: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newQueryLog()
			b, subs := withThree(t, options{tracer: c, roundElsewhere: tc.elsewhere})
			require.Equal(t, []int{3}, b.sharedJobs(t), "the round's one job names all three")
			c.reset()
			require.NoError(t, b.d.DeliverTogether(bg, subs, b.now()))
			got := b.recv.wait(t, 3)
			paths := map[string]bool{}
			for _, r := range got {
				paths[r.path] = true
			}
			require.Equal(t, map[string]bool{"/hooks/bothy": true, "/hooks/b": true, "/hooks/c": true}, paths)
			for _, sub := range subs {
				require.True(t, b.succeeded(t, sub))
			}
			require.Equal(t, 1, c.count("WebhookSubscriptionLockDeliveryTargets"), "one statement locks all three (D-M2-26-76)")
			records := c.count("WebhookSubscriptionRecordAttempt") + c.count("WebhookSubscriptionRecordAttemptsMany")
			require.GreaterOrEqual(t, records, 1, "the records whose answers arrived together share a statement (D-M2-26-78)")
			require.LessOrEqual(t, records, 3)
			require.Equal(t, 1, c.count("WebhookDeliveryClaimHeadsMany"), "one statement claims for all three (D-M2-26-77)")
			require.Zero(t, c.count("WebhookDeliveryClaimHeads"), "none for one of them")
			require.Equal(t, 1, c.count("EventListByKeys"), "one read of the three heads' events")
			_, args := c.last("EventListByKeys")
			require.Len(t, args[0], 1, "the three heads are one event, read once")
			require.Equal(t, 1, c.count("GrantFactsBySubjects"), "one read of the app's grants, none per subscription")
			trips := c.TakeNames()
			if !tc.elsewhere {
				require.Subset(t, trips[0], []string{"WebhookSubscriptionLockDeliveryTargets", "EventListByKeys", "GrantFactsBySubjects"},
					"the events and the grants with the lock: %v", trips)
			}
			// Each record is BEGIN with it and COMMIT; records whose
			// answers arrived while another was written share it, so the
			// records take one to three units of work.
			require.GreaterOrEqual(t, len(trips), tc.first+2, "%v", trips)
			require.LessOrEqual(t, len(trips), tc.first+3*2, "%v", trips)
		})
	}
}

// TestDeliverTogetherSlowReceiverHoldsBackOnlyItsOwn (ADR 0089): after the
// shared claim each subscription's run goes on alone, so the two whose
// receivers answer at once are recorded while the third's receiver still
// holds its request.
func TestDeliverTogetherSlowReceiverHoldsBackOnlyItsOwn(t *testing.T) {
	t.Parallel()
	b, subs := withThree(t, options{})
	release := make(chan struct{})
	b.recv.answer(func(_ int, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hooks/c" {
			<-release
		}
		w.WriteHeader(http.StatusNoContent)
	})
	done := make(chan error, 1)
	go func() { done <- b.d.DeliverTogether(bg, subs, b.now()) }()
	eventually(t, "the two fast subscriptions recorded", func() bool {
		return b.succeeded(t, subs[0]) && b.succeeded(t, subs[1])
	})
	require.Equal(t, "pending", b.deliveries(t, subs[2])[0].Status, "the slow receiver still holds its request")
	close(release)
	require.NoError(t, <-done)
	require.True(t, b.succeeded(t, subs[2]))
}

// heldRecords holds the first RecordAttempts until release is closed,
// after closing first, and keeps the number of records of every call.
type heldRecords struct {
	app.DeliveryStore
	first, release chan struct{}
	mu             sync.Mutex
	sizes          []int
}

func (s *heldRecords) RecordAttempts(ctx context.Context, rs ...app.AttemptRecord) ([]app.Recorded, error) {
	s.mu.Lock()
	s.sizes = append(s.sizes, len(rs))
	isFirst := len(s.sizes) == 1
	s.mu.Unlock()
	if isFirst {
		close(s.first)
		<-s.release
	}
	return s.DeliveryStore.RecordAttempts(ctx, rs...)
}

// countedSends counts the sends that returned.
type countedSends struct {
	app.WebhookSender
	done atomic.Int32
}

func (s *countedSends) Send(ctx context.Context, req app.SignedRequest) (app.SendResult, error) {
	defer s.done.Add(1)
	return s.WebhookSender.Send(ctx, req)
}

// TestDeliverTogetherRecordsTogether (D-M2-26-78): the records of the runs
// whose answers arrive while a record of the job is being written share
// the next unit of work and its one statement, and every delivery is
// counted as succeeded. The first subscription's answer comes at once and
// its record is held; the other two answer once it is held, so both ask
// for their record while it is.
func TestDeliverTogetherRecordsTogether(t *testing.T) {
	t.Parallel()
	store := &heldRecords{first: make(chan struct{}), release: make(chan struct{})}
	sends := &countedSends{}
	c := newQueryLog()
	b, subs := withThree(t, options{tracer: c,
		wrap: func(s app.DeliveryStore) app.DeliveryStore {
			store.DeliveryStore = s
			return store
		},
		sender: func(s app.WebhookSender) app.WebhookSender {
			sends.WebhookSender = s
			return sends
		}})
	b.recv.answer(func(_ int, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hooks/bothy" {
			<-store.first
		}
		w.WriteHeader(http.StatusNoContent)
	})
	c.reset()
	done := make(chan error, 1)
	go func() { done <- b.d.DeliverTogether(bg, subs, b.now()) }()
	eventually(t, "all three answers are in", func() bool { return sends.done.Load() == 3 })
	// The two runs go from their answers to asking for their record
	// without waiting for anything; give them that moment.
	time.Sleep(100 * time.Millisecond)
	close(store.release)
	require.NoError(t, <-done)
	for _, sub := range subs {
		require.True(t, b.succeeded(t, sub))
	}
	store.mu.Lock()
	require.Equal(t, []int{1, 2}, store.sizes, "the held record alone, then the other two together")
	store.mu.Unlock()
	require.Equal(t, 1, c.count("WebhookSubscriptionRecordAttemptsMany"), "the two in one statement")
	require.Equal(t, 1, c.count("WebhookSubscriptionRecordAttempt"), "the held one in the statement of one")
	require.Equal(t, 1, c.count("WebhookSubscriptionLockDeliveryTargets"), "no run took a step again alone")
	require.Equal(t, int64(3), b.appMetrics.Sum(t, app.MetricDeliveriesFinished, attr.Outcome.String("succeeded")),
		"every record's outcome reached its run")
}

// failingFor fails ClaimHeads or RecordAttempts of one subscription, the
// first n times, makes ClaimHeads panic, or answers its claim as one
// whose heads changed under the lock (stale), claiming nothing for it.
type failingFor struct {
	app.DeliveryStore
	sub                           ids.ID
	claims, record, panics, stale int32
}

func (s *failingFor) ClaimHeads(ctx context.Context, cs ...app.HeadClaimRequest) ([][]app.ClaimedHead, error) {
	mine := slices.IndexFunc(cs, func(c app.HeadClaimRequest) bool { return c.SubscriptionID == s.sub })
	if mine >= 0 && atomic.AddInt32(&s.panics, -1) >= 0 {
		panic("injected claim panic")
	}
	if mine >= 0 && atomic.AddInt32(&s.claims, -1) >= 0 {
		return nil, errInjected
	}
	if mine >= 0 && atomic.AddInt32(&s.stale, -1) >= 0 {
		others, err := s.DeliveryStore.ClaimHeads(ctx, slices.Delete(slices.Clone(cs), mine, mine+1)...)
		if err != nil {
			return nil, err
		}
		return slices.Insert(others, mine, nil), nil
	}
	return s.DeliveryStore.ClaimHeads(ctx, cs...)
}

func (s *failingFor) RecordAttempts(ctx context.Context, rs ...app.AttemptRecord) ([]app.Recorded, error) {
	mine := slices.ContainsFunc(rs, func(r app.AttemptRecord) bool { return r.SubscriptionID == s.sub })
	if mine && atomic.AddInt32(&s.record, -1) >= 0 {
		return nil, errInjected
	}
	return s.DeliveryStore.RecordAttempts(ctx, rs...)
}

// withThreeFailing is withThree over store, which fails or panics for the
// second subscription.
func withThreeFailing(t *testing.T, store *failingFor) (*bundle, []ids.ID) {
	t.Helper()
	b, subs := withThree(t, options{wrap: func(s app.DeliveryStore) app.DeliveryStore {
		store.DeliveryStore = s
		return store
	}})
	store.sub = subs[1]
	return b, subs
}

// TestDeliverTogetherKeepsAFailureWithItsSubscription (ADR 0089): a
// shared unit of work that fails, or panics, is taken again by each of
// its runs alone, so a failure that does not repeat costs nothing but the
// retry; a subscription whose own step fails or panics too gets a job of
// its own, and the others' deliveries stand.
func TestDeliverTogetherKeepsAFailureWithItsSubscription(t *testing.T) {
	t.Parallel()
	t.Run("a claim that fails once", func(t *testing.T) {
		t.Parallel()
		b, subs := withThreeFailing(t, &failingFor{claims: 1})
		require.NoError(t, b.d.DeliverTogether(bg, subs, b.now()))
		b.recv.wait(t, 3)
		for _, sub := range subs {
			require.True(t, b.succeeded(t, sub))
			require.Zero(t, b.ownJobs(t, sub), "nothing to hand off")
		}
		require.Len(t, b.recv.requests(), 3, "the failed unit of work sent nothing")
	})
	t.Run("a claim that fails again alone", func(t *testing.T) {
		t.Parallel()
		b, subs := withThreeFailing(t, &failingFor{claims: 2})
		require.NoError(t, b.d.DeliverTogether(bg, subs, b.now()), "the failure went to a job of its own")
		b.recv.wait(t, 2)
		require.True(t, b.succeeded(t, subs[0]))
		require.True(t, b.succeeded(t, subs[2]))
		require.Equal(t, "pending", b.deliveries(t, subs[1])[0].Status)
		require.Equal(t, 0, b.deliveries(t, subs[1])[0].Attempt, "nothing was claimed")
		require.Equal(t, 1, b.ownJobs(t, subs[1]))
		require.Zero(t, b.ownJobs(t, subs[0])+b.ownJobs(t, subs[2]))
		b.deliver(t, subs[1])
		require.True(t, b.succeeded(t, subs[1]), "its own job delivers")
		require.Len(t, b.recv.requests(), 3)
	})
	t.Run("a claim that panics, once and again alone", func(t *testing.T) {
		t.Parallel()
		for panics := int32(1); panics <= 2; panics++ {
			b, subs := withThreeFailing(t, &failingFor{panics: panics})
			require.NoError(t, b.d.DeliverTogether(bg, subs, b.now()), "the panic stays with its run")
			require.True(t, b.succeeded(t, subs[0]))
			require.True(t, b.succeeded(t, subs[2]))
			require.Equal(t, panics == 1, b.succeeded(t, subs[1]), "%d panics: taken again alone", panics)
			require.Equal(t, int(panics-1), b.ownJobs(t, subs[1]), "%d panics: a job of its own after the second", panics)
		}
	})
	t.Run("a claim that finds its heads changed", func(t *testing.T) {
		t.Parallel()
		b, subs := withThreeFailing(t, &failingFor{stale: 1})
		require.NoError(t, b.d.DeliverTogether(bg, subs, b.now()))
		b.recv.wait(t, 3)
		for _, sub := range subs {
			require.True(t, b.succeeded(t, sub), "the run read its heads again and claimed alone (D-M2-26-77)")
			require.Zero(t, b.ownJobs(t, sub))
			require.Equal(t, 1, b.deliveries(t, sub)[0].Attempt, "claimed once")
		}
		require.Len(t, b.recv.requests(), 3, "each sent once")
	})
	t.Run("a record that fails once", func(t *testing.T) {
		t.Parallel()
		b, subs := withThreeFailing(t, &failingFor{record: 1})
		require.NoError(t, b.d.DeliverTogether(bg, subs, b.now()))
		for _, sub := range subs {
			require.True(t, b.succeeded(t, sub), "the record taken again alone")
			require.Zero(t, b.ownJobs(t, sub))
		}
		require.Len(t, b.recv.requests(), 3, "each sent once")
	})
	t.Run("a record that fails again alone", func(t *testing.T) {
		t.Parallel()
		b, subs := withThreeFailing(t, &failingFor{record: 2})
		require.NoError(t, b.d.DeliverTogether(bg, subs, b.now()), "the failure went to a job of its own")
		require.True(t, b.succeeded(t, subs[0]))
		require.True(t, b.succeeded(t, subs[2]))
		require.False(t, b.succeeded(t, subs[1]))
		require.Equal(t, 1, b.ownJobs(t, subs[1]))
		b.advance(t, b.leaseLength()+time.Second)
		b.deliver(t, subs[1])
		require.True(t, b.succeeded(t, subs[1]), "after the lease its own job sends the head again")
		require.Len(t, b.recv.requests(), 4)
	})
}

// TestDeliverTogetherGathersTheStepsOfItsRuns (D-M2-26-90): the answers
// of a job's runs arrive 100 ms apart. With webhook.run_gather_pause a
// step waits for the others' steps, so the three records share one unit
// of work; the wait ends once every run that has not ended asked (here
// the run of a fourth subscription with nothing to send ended at once),
// not at the pause's end, which the job's deadline would not reach.
// Without the pause the first answer is recorded alone.
func TestDeliverTogetherGathersTheStepsOfItsRuns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		pause   time.Duration
		records func(t *testing.T, c *queryLog)
	}{
		{name: "with a pause", pause: time.Hour, records: func(t *testing.T, c *queryLog) {
			require.Equal(t, 1, c.count("WebhookSubscriptionRecordAttemptsMany"), "the three records in one statement")
			require.Zero(t, c.count("WebhookSubscriptionRecordAttempt"))
		}},
		{name: "without", records: func(t *testing.T, c *queryLog) {
			require.GreaterOrEqual(t, c.count("WebhookSubscriptionRecordAttempt"), 1, "the first answer recorded alone")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newQueryLog()
			b, subs := withThree(t, options{tracer: c, change: func(o *app.DeliveryOptions) { o.RunGatherPause = tc.pause }})
			idle := b.createAt(t, "/hooks/d")
			var arrived sync.WaitGroup
			arrived.Add(3)
			b.recv.answer(func(_ int, w http.ResponseWriter, r *http.Request) {
				arrived.Done()
				if r.URL.Path != "/hooks/bothy" {
					// A receiver that takes its time: the first answer is
					// in long before these.
					arrived.Wait()
					time.Sleep(100 * time.Millisecond)
				}
				w.WriteHeader(http.StatusNoContent)
			})
			c.reset()
			ctx, cancel := context.WithTimeout(bg, time.Minute)
			defer cancel()
			require.NoError(t, b.d.DeliverTogether(ctx, append(subs, idle), b.now()))
			for _, sub := range subs {
				require.True(t, b.succeeded(t, sub))
			}
			tc.records(t, c)
		})
	}
}
