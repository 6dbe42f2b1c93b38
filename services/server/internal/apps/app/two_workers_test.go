package app_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/jobs"
)

// TestDeliveryThroughTwoWorkers runs the delivery scenarios of the spec
// with River doing the scheduling, as in production: the real clock, jobs
// run by two worker runtimes on one database (two worker processes' worth),
// retries, lease wake-ups and the chain exactly as River runs them. The
// tests that call Deliver by hand (deliver_test.go) stay for the fake
// clock's control of time.
func TestDeliveryThroughTwoWorkers(t *testing.T) {
	t.Parallel()
	fast := func(o *app.DeliveryOptions) {
		o.Retry.Base, o.Retry.Cap = 200*time.Millisecond, 400*time.Millisecond
		o.DeliveryTimeout, o.ChainMaxDuration = 2*time.Second, time.Second
	}
	world := func(t *testing.T, o options) *bundle {
		o.worker, o.realClock = true, true
		if o.change == nil {
			o.change = fast
		}
		b := deliveryWorld(t, o)
		b.secondWorker(t)
		return b
	}

	t.Run("strict order under 500s", func(t *testing.T) {
		t.Parallel()
		b := world(t, options{})
		b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
			if n < 2 {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		})
		for _, text := range []string{"first", "second", "third"} {
			b.post(t, b.w.Alex, b.w.Eskalation, text)
		}
		rows := b.roundRows(t)
		b.recv.wait(t, 5)
		eventually(t, "all succeeded", func() bool { return b.statusesAre(t, "succeeded", "succeeded", "succeeded") })
		first, second, third := rows[0].EventID.String(), rows[1].EventID.String(), rows[2].EventID.String()
		require.Equal(t, []string{first, first, first, second, third}, ids2(b.recv.requests()))
		require.Equal(t, 1, b.recv.peakInFlight())
	})

	t.Run("a 500 in the middle of a batch", func(t *testing.T) {
		t.Parallel()
		// The round makes the four rows while the subscription is paused,
		// so the first run claims them as one batch (ADR 0088).
		b := world(t, options{})
		b.setState(t, b.sub, apps.SubscriptionPaused)
		b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
			if n == 1 {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		})
		for _, text := range []string{"first", "second", "third", "fourth"} {
			b.post(t, b.w.Alex, b.w.Eskalation, text)
		}
		rows := b.roundRows(t)
		b.setState(t, b.sub, apps.SubscriptionActive)
		b.recv.wait(t, 5)
		eventually(t, "all succeeded", func() bool {
			return b.statusesAre(t, "succeeded", "succeeded", "succeeded", "succeeded")
		})
		ev := func(i int) string { return rows[i].EventID.String() }
		require.Equal(t, []string{ev(0), ev(1), ev(1), ev(2), ev(3)}, ids2(b.recv.requests()),
			"nothing after the 500 until its retry, then the rest in order")
		require.Equal(t, 1, b.recv.peakInFlight())
		for i, r := range b.deliveries(t, b.sub) {
			want := 1
			if i == 1 {
				want = 2
			}
			require.Equal(t, want, r.Attempt, "delivery %d: the attempts count the requests", i)
		}
	})

	t.Run("runs share one lease wake-up", func(t *testing.T) {
		t.Parallel()
		// Runs within webhook.chain_max_duration of the first share its
		// wake-up.
		b := world(t, options{change: func(o *app.DeliveryOptions) { fast(o); o.ChainMaxDuration = 20 * time.Second }})
		for i, text := range []string{"first", "second", "third"} {
			b.postAndRound(t, text)
			eventually(t, "recorded", func() bool {
				rows := b.deliveries(t, b.sub)
				return len(rows) == i+1 && rows[i].Status == "succeeded"
			})
			b.waitJobsIdle(t)
		}
		require.Len(t, b.recv.requests(), 3)
		var waiting int
		require.NoError(t, b.db.App.QueryRow(bg, `SELECT count(*) FROM river_job
			WHERE kind = 'apps.webhook_deliver' AND state = 'scheduled' AND NOT $2 = ANY(tags)
			AND args->>'subscription_id' = $1`, b.sub.String(), jobs.TagInProcess).
			Scan(&waiting))
		require.Equal(t, 1, waiting, "three runs, on either worker, relied on the first run's wake-up (ADR 0087)")
	})

	t.Run("Retry-After is honoured", func(t *testing.T) {
		t.Parallel()
		b := world(t, options{})
		var mu sync.Mutex
		var at []time.Time
		b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
			mu.Lock()
			at = append(at, time.Now())
			mu.Unlock()
			if n == 0 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			w.WriteHeader(http.StatusOK)
		})
		b.postAndRound(t, "throttled once")
		b.recv.wait(t, 2)
		eventually(t, "it succeeded", func() bool { return b.statusesAre(t, "succeeded") })
		mu.Lock()
		defer mu.Unlock()
		require.GreaterOrEqual(t, at[1].Sub(at[0]), time.Second, "the retry waited for Retry-After")
		require.Zero(t, b.subscription(t, b.sub).ConsecutiveFailures, "a throttle is not counted")
	})

	t.Run("410 disables", func(t *testing.T) {
		t.Parallel()
		b := world(t, options{})
		b.recv.status(http.StatusGone)
		b.post(t, b.w.Alex, b.w.Eskalation, "gone")
		b.postAndRound(t, "never sent")
		eventually(t, "the subscription is disabled", func() bool { return b.subscription(t, b.sub).State == "disabled" })
		b.waitJobsIdle(t)
		require.Len(t, b.recv.requests(), 1)
		require.True(t, b.statusesAre(t, "failed", "pending"))
	})

	t.Run("a revoked right sends nothing", func(t *testing.T) {
		t.Parallel()
		b := world(t, options{})
		// Paused, the round makes the row and no job runs; the right goes
		// between the round and the attempt.
		b.setState(t, b.sub, apps.SubscriptionPaused)
		b.postAndRound(t, "before the revocation")
		require.NoError(t, b.w.Services.Apps.DeleteAppGrant(b.robin(t), b.appID, b.w.G6.ID))
		b.setState(t, b.sub, apps.SubscriptionActive)
		eventually(t, "the delivery is dead", func() bool { return b.statusesAre(t, "dead") })
		require.Equal(t, "not_authorized", *b.deliveries(t, b.sub)[0].LastError)
		b.waitJobsIdle(t)
		require.Empty(t, b.recv.requests())
	})

	t.Run("a crash after the send is sent again with the same webhook-id", func(t *testing.T) {
		t.Parallel()
		store := &failingStore{}
		b := world(t, options{wrap: func(s app.DeliveryStore) app.DeliveryStore {
			store.DeliveryStore = s
			return store
		}})
		b.postAndRound(t, "at least once")
		got := b.recv.wait(t, 2)
		eventually(t, "it succeeded", func() bool { return b.statusesAre(t, "succeeded") })
		require.Equal(t, got[0].id, got[1].id)
		require.Equal(t, 1, b.recv.peakInFlight())
	})

	t.Run("a row made while its subscription's attempt is out is sent without the wake-up", func(t *testing.T) {
		t.Parallel()
		// Two subscriptions whose receiver answers after 20 ms, and a
		// round after every post, 5 to 35 ms apart, so rounds end at every
		// moment of a run: while its attempt is out, while its record
		// ends it (D-M2-26-83), after it ended. A run's lease wake-up is a
		// minute away (webhook.chain_max_duration), beyond the test's
		// wait: a row no run or job read would miss the wait.
		b := world(t, options{change: func(o *app.DeliveryOptions) { fast(o); o.ChainMaxDuration = time.Minute }})
		subs := map[string]ids.ID{"/hooks/bothy": b.sub, "/hooks/b": b.createAt(t, "/hooks/b")}
		b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
			time.Sleep(20 * time.Millisecond)
			w.WriteHeader(http.StatusNoContent)
		})
		const messages = 40
		for i := range messages {
			b.postAndRound(t, fmt.Sprintf("message %d", i))
			time.Sleep(time.Duration(5+(i*7)%31) * time.Millisecond)
		}
		eventually(t, "every delivery succeeded", func() bool {
			for _, sub := range subs {
				if len(b.deliveries(t, sub)) != messages || !b.succeeded(t, sub) {
					return false
				}
			}
			return true
		})
		got := b.recv.idsByPath()
		for path, sub := range subs {
			var want []string
			for _, r := range b.deliveries(t, sub) {
				want = append(want, r.EventID.String())
			}
			require.Equal(t, want, got[path], "%s: every event once, in order", path)
		}
	})

	t.Run("subscriptions served together keep their own order", func(t *testing.T) {
		t.Parallel()
		// Five subscriptions, two to a round's job (ADR 0089): each
		// receiver answers 500 to every third request, the record of one
		// sent attempt fails once (a crash after the send), and Robin
		// pauses one subscription for a while.
		store := &failingStore{}
		b := world(t, options{
			change: func(o *app.DeliveryOptions) { fast(o); o.RunMaxSubscriptions = 2 },
			wrap: func(s app.DeliveryStore) app.DeliveryStore {
				store.DeliveryStore = s
				return store
			}})
		paths := []string{"/hooks/bothy", "/hooks/b", "/hooks/c", "/hooks/d", "/hooks/e"}
		subs := []ids.ID{b.sub}
		for _, p := range paths[1:] {
			subs = append(subs, b.createAt(t, p))
		}
		b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
			if n%3 == 2 {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		})
		const messages = 8
		for i := range messages {
			if i == 3 {
				b.setState(t, subs[2], apps.SubscriptionPaused)
			}
			if i == 6 {
				b.setState(t, subs[2], apps.SubscriptionActive)
			}
			b.postAndRound(t, fmt.Sprintf("message %d", i))
		}
		eventually(t, "every delivery succeeded", func() bool {
			for _, sub := range subs {
				rows := b.deliveries(t, sub)
				if len(rows) != messages || !b.succeeded(t, sub) {
					return false
				}
			}
			return true
		})
		require.True(t, store.failed.Load(), "a record failed after its send")
		events := b.deliveries(t, b.sub)
		byPath := b.recv.idsByPath()
		place := map[string]int{}
		for i, r := range events {
			place[r.EventID.String()] = i
		}
		for _, p := range paths {
			// In seq order, at least once: no receipt skips an event, so
			// every event arrives only after all before it, and a repeat
			// (a batch sent again after its record failed, ADR 0088) starts
			// again from an event already received.
			highest := -1
			for k, id := range byPath[p] {
				i, known := place[id]
				require.True(t, known, "%s: receipt %d names an event of the subscription", p, k)
				require.LessOrEqual(t, i, highest+1, "%s: receipt %d skips an event", p, k)
				highest = max(highest, i)
			}
			require.Equal(t, messages-1, highest, "%s: every event", p)
		}
	})
}
