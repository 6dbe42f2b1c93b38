package app_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/app"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/jobs"
)

// TestAWorkerWithTheDefaultsSendsToAHundredBusySubscriptionsAtOnce is the
// shape of a fleet whose receivers take their time (D-RT-13): each of 100
// subscriptions has more pending than one run sends, so after its first
// delivery every run leaves its next head to a job of its subscription
// alone (the chain's budget), and those jobs each take a worker of the
// delivery queue while their request waits for its answer. A worker
// started with the default jobs.queue.delivery.max_workers has a request
// in flight for every one of the 100 at once. With 20, the default
// before, 40 were (the test fails), and in make bench-e2e 100
// subscriptions that share every event got a third of what strict order
// allows from receivers that answer in 100 ms.
func TestAWorkerWithTheDefaultsSendsToAHundredBusySubscriptionsAtOnce(t *testing.T) {
	t.Parallel()
	const subscriptions = 100
	b := deliveryWorld(t, options{worker: true, realClock: true, configQueues: true, change: func(o *app.DeliveryOptions) {
		// One delivery per run: the second delivery of every subscription
		// is sent by the job its first run left.
		o.ChainMaxDeliveries, o.BatchMaxDeliveries = 1, 1
	}})
	for range subscriptions - 1 {
		b.create(t, ids.ID{}, nil, false)
	}
	b.post(t, b.w.Alex, b.w.Eskalation, "first")
	second := b.post(t, b.w.Alex, b.w.Eskalation, "second")

	// The receiver answers the first event at once and holds the second
	// until it holds it for every subscription (or a deadline passes).
	var (
		mu       sync.Mutex
		held     int
		everyone = make(chan struct{})
		release  sync.Once
	)
	let := func() { release.Do(func() { close(everyone) }) }
	t.Cleanup(let)
	b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
		if seq, ok := b.recv.requests()[n].seq(); !ok || seq != second {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		mu.Lock()
		held++
		if held == subscriptions {
			let()
		}
		mu.Unlock()
		select {
		case <-everyone:
		case <-time.After(20 * time.Second):
		}
		w.WriteHeader(http.StatusNoContent)
	})

	b.runRound(t)
	select {
	case <-everyone:
	case <-time.After(20 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the second deliveries of %d subscriptions were in flight at once, want all %d (jobs.queue.delivery.max_workers %d)",
			b.recv.peakInFlight(), subscriptions, b.queues[jobs.QueueDelivery].MaxWorkers)
	}
	b.recv.wait(t, 2*subscriptions)
	require.Equal(t, subscriptions, b.recv.peakInFlight(), "one request in flight per subscription, and every subscription's at once")
}
