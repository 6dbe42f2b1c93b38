package app_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/webhookstest"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/egress/egresstest"
	"bothy/server/internal/platform/otel/attr"
)

// closedLogAttrs are the attributes a delivery log line may carry (Design
// note 16): never a URL path or query, a body, a signature or a secret.
var closedLogAttrs = map[string]bool{
	string(attr.WebhookSubscriptionID): true, string(attr.EventSeq): true, string(attr.EventType): true,
	string(attr.Reason): true, string(attr.ServerAddress): true,
}

// TestDeliveryPrivateAddressRefused (red team "webhooks to private
// targets"): without an allow_private entry the egress client refuses a
// target that resolves to loopback or RFC 1918; the attempt is a counted
// failure with address_blocked and nothing reaches the receiver. With the
// entry the same delivery succeeds. A redirect is never followed.
func TestDeliveryPrivateAddressRefused(t *testing.T) {
	t.Parallel()
	t.Run("refused without allow_private", func(t *testing.T) {
		t.Parallel()
		b, sub := withPending(t, options{blockPrivate: true}, "to a private address")
		b.deliver(t, sub)

		b.resolver.Set(egresstest.DefaultHost, netip.MustParseAddr("10.1.2.3"))
		b.advance(t, b.deliveries(t, sub)[0].NextAttemptAt.Sub(b.now()))
		b.deliver(t, sub)

		require.Empty(t, b.recv.requests(), "no connection reaches the receiver")
		row := b.deliveries(t, sub)[0]
		require.Equal(t, "pending", row.Status)
		require.Equal(t, "address_blocked", *row.LastError)
		require.Nil(t, row.ResponseCode)
		require.Zero(t, row.Attempt, "a refused address sends no request, so no attempt (D-M2-26-43)")
		require.Equal(t, 2, b.subscription(t, sub).ConsecutiveFailures, "a refused address is a counted failure")
		require.Equal(t, int64(2), b.metrics.Blocked(t, "webhook", "address_blocked"))

		blocked := 0
		for _, r := range b.egressLog.Records() {
			if r.Message == "egress blocked" {
				blocked++
				require.Equal(t, map[string]string{string(attr.ServerAddress): egresstest.DefaultHost, string(attr.Reason): "address_blocked"},
					r.Attrs, "the log carries host and reason only")
			}
		}
		require.Equal(t, 2, blocked)
		failed := 0
		for _, r := range b.log.Records() {
			if r.Message != "webhook delivery failed" {
				continue
			}
			failed++
			for k := range r.Attrs {
				require.True(t, closedLogAttrs[k], "attribute %s", k)
			}
			require.Equal(t, "address_blocked", r.Attrs[string(attr.Reason)])
			require.Equal(t, egresstest.DefaultHost, r.Attrs[string(attr.ServerAddress)])
			require.Equal(t, "message.created", r.Attrs[string(attr.EventType)])
		}
		require.Equal(t, 2, failed)
	})
	t.Run("allowed with allow_private", func(t *testing.T) {
		t.Parallel()
		b, sub := withPending(t, options{}, "to an allowed private address")
		b.deliver(t, sub)
		require.Len(t, b.recv.requests(), 1)
		require.Equal(t, "succeeded", b.deliveries(t, sub)[0].Status)
		require.Zero(t, b.metrics.Blocked(t, "webhook", "address_blocked"))
	})
	t.Run("a redirect is never followed", func(t *testing.T) {
		t.Parallel()
		b, sub := withPending(t, options{}, "to a receiver that redirects")
		b.recv.answer(func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Location", fmt.Sprintf("https://%s:%d/elsewhere", otherHost, b.recv.srv.Port))
			w.WriteHeader(http.StatusFound)
		})
		b.deliver(t, sub)
		got := b.recv.requests()
		require.Len(t, got, 1)
		require.NotEqual(t, otherHost, got[0].host)
		row := b.deliveries(t, sub)[0]
		require.Equal(t, "pending", row.Status)
		require.Equal(t, "http_status", *row.LastError)
		require.Equal(t, http.StatusFound, *row.ResponseCode)
	})
}

// TestDeliverySuspendedInstallation: rows are created while the
// installation is suspended and nothing is sent; resuming it (the delivery
// part of ResumeInstallation) delivers them in order.
func TestDeliverySuspendedInstallation(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{})
	sub := b.sub
	_, err := b.w.Services.Apps.SuspendApp(b.robin(t), b.appID)
	require.NoError(t, err)
	b.post(t, b.w.Alex, b.w.Eskalation, "first while suspended")
	b.postAndRound(t, "second while suspended")
	jobsBefore := len(b.w.Scheduled(t, sub))
	require.Zero(t, jobsBefore, "a suspended installation gets no job from the round")
	b.deliver(t, sub)
	require.Empty(t, b.recv.requests())
	rows := b.deliveries(t, sub)
	require.Len(t, rows, 2)
	for _, r := range rows {
		require.Equal(t, "pending", r.Status)
		require.Zero(t, r.Attempt)
	}

	b.advance(t, time.Minute)
	_, err = b.w.Services.Apps.ResumeApp(b.robin(t), b.appID)
	require.NoError(t, err)
	jobs := b.w.Scheduled(t, sub)
	require.Len(t, jobs, 1, "ResumeInstallation schedules the job")
	require.True(t, jobs[0].Equal(b.now()))
	b.deliver(t, sub)
	got := b.recv.requests()
	require.Len(t, got, 2)
	require.Equal(t, rows[0].EventID.String(), got[0].id)
	require.Equal(t, rows[1].EventID.String(), got[1].id)
}

// TestDeliveryConcurrentJobs: two jobs of one subscription at once send
// exactly one request; they serialize on the subscription's row lock and
// only a due head is sent.
func TestDeliveryConcurrentJobs(t *testing.T) {
	t.Parallel()
	b, sub := withPending(t, options{}, "once")
	release := make(chan struct{})
	b.recv.answer(func(_ int, w http.ResponseWriter, _ *http.Request) {
		<-release
		w.WriteHeader(http.StatusOK)
	})
	done := make(chan error, 2)
	for range 2 {
		go func() { done <- b.d.Deliver(bg, sub) }()
	}
	// One job holds the attempt at the receiver; the other finds the head
	// leased and ends.
	require.NoError(t, <-done)
	close(release)
	require.NoError(t, <-done)
	require.Len(t, b.recv.requests(), 1)
	row := b.deliveries(t, sub)[0]
	require.Equal(t, "succeeded", row.Status)
	require.Equal(t, 1, row.Attempt)
}

// failingStore fails RecordAttempts once, after the receiver answered: a
// crash between send and record.
type failingStore struct {
	app.DeliveryStore
	failed atomic.Bool
}

var errInjected = errors.New("injected record failure")

func (s *failingStore) RecordAttempts(ctx context.Context, rs ...app.AttemptRecord) ([]app.Recorded, error) {
	if s.failed.CompareAndSwap(false, true) {
		return nil, errInjected
	}
	return s.DeliveryStore.RecordAttempts(ctx, rs...)
}

// TestDeliveryCrashAfterSend (plan "duplicate delivery"): the record step
// fails once after a 2xx; the round's job, started in process, goes to
// River, whose run finds the lease ahead and ends;
// after the lease the lease wake-up sends again with the same webhook-id,
// and the row ends succeeded once. The run's wake-up is due at its start +
// webhook.chain_max_duration + webhook.delivery_timeout (ADR 0067), so the
// test configuration keeps both short.
func TestDeliveryCrashAfterSend(t *testing.T) {
	t.Parallel()
	store := &failingStore{}
	b := deliveryWorld(t, options{worker: true, realClock: true,
		change: func(o *app.DeliveryOptions) { o.DeliveryTimeout, o.ChainMaxDuration = 2*time.Second, time.Second },
		wrap: func(s app.DeliveryStore) app.DeliveryStore {
			store.DeliveryStore = s
			return store
		}})
	sub := b.sub
	b.postAndRound(t, "at least once")
	got := b.recv.wait(t, 2)
	eventually(t, "the second attempt is recorded", func() bool { return b.deliveries(t, sub)[0].Status == "succeeded" })
	require.True(t, store.failed.Load())
	require.Equal(t, got[0].id, got[1].id, "the same webhook-id twice")
	row := b.deliveries(t, sub)[0]
	require.Equal(t, row.EventID.String(), got[0].id)
	require.Equal(t, 2, row.Attempt)
	require.Len(t, b.recv.requests(), 2)
	// The round's job started in process (ADR 0092): its failure is no
	// River attempt; the start handed the job to River at once, whose run
	// found the lease ahead and ended.
	var state string
	var attempt int
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT state::text, attempt FROM river_job
		WHERE kind = 'apps.webhook_deliver' ORDER BY id LIMIT 1`).Scan(&state, &attempt))
	require.Equal(t, "completed", state, "the failed start handed its job to River")
	require.Equal(t, 1, attempt)
}

// TestDeliveryDeletedDuringAttempt: a subscription deleted while the
// receiver holds the request: the result is discarded without an error.
func TestDeliveryDeletedDuringAttempt(t *testing.T) {
	t.Parallel()
	b, sub := withPending(t, options{}, "to a subscription about to go")
	arrived, release := make(chan struct{}), make(chan struct{})
	b.recv.answer(func(_ int, w http.ResponseWriter, _ *http.Request) {
		close(arrived)
		<-release
		w.WriteHeader(http.StatusOK)
	})
	done := make(chan error, 1)
	go func() { done <- b.d.Deliver(bg, sub) }()
	<-arrived
	require.NoError(t, b.w.Services.Webhooks.DeleteSubscription(b.robin(t), sub))
	close(release)
	require.NoError(t, <-done)
	require.Empty(t, b.deliveries(t, sub))
	require.Len(t, b.recv.requests(), 1)
}

// cancellingSender ends the job's context right after the receiver
// answered: a worker shutting down while the answer is on its way.
type cancellingSender struct {
	app.WebhookSender
	cancel context.CancelFunc
}

func (s *cancellingSender) Send(ctx context.Context, req app.SignedRequest) (app.SendResult, error) {
	res, err := s.WebhookSender.Send(ctx, req)
	s.cancel()
	return res, err
}

// TestDeliveryCancelledAfterTheAnswerIsRecorded: a job cancelled after the
// receiver answered records the answer instead of sending it twice, and
// leaves the next head to a new job scheduled at once.
func TestDeliveryCancelledAfterTheAnswerIsRecorded(t *testing.T) {
	t.Parallel()
	cs := &cancellingSender{}
	b, sub := withPending(t, options{sender: func(s app.WebhookSender) app.WebhookSender {
		cs.WebhookSender = s
		return cs
	}}, "answered while the worker stops")
	b.postAndRound(t, "left to the next job")
	jobs := len(b.w.Scheduled(t, sub))
	ctx, cancel := context.WithCancel(bg)
	cs.cancel = cancel
	require.NoError(t, b.d.Deliver(ctx, sub))

	require.Len(t, b.recv.requests(), 1)
	rows := b.deliveries(t, sub)
	require.Equal(t, "succeeded", rows[0].Status)
	require.Equal(t, "pending", rows[1].Status)
	require.Zero(t, rows[1].Attempt)
	scheduled := b.w.Scheduled(t, sub)
	require.Len(t, scheduled, jobs+2, "the next job, and the run's lease wake-up, which stays for later runs (ADR 0087)")
	require.Contains(t, scheduled, webhookstest.AtOnce, "the next head is scheduled at once")
}

// failingRecord fails the record of the nth sent attempt (from 1), once: a
// process that dies after that attempt went out and before its result was
// written.
type failingRecord struct {
	app.DeliveryStore
	nth     int32
	records atomic.Int32
}

func (s *failingRecord) RecordAttempts(ctx context.Context, rs ...app.AttemptRecord) ([]app.Recorded, error) {
	// A statement that records several batches fails when one of them is
	// the nth.
	if n := s.records.Add(int32(len(rs))); n >= s.nth && n-int32(len(rs)) < s.nth {
		return nil, errInjected
	}
	return s.DeliveryStore.RecordAttempts(ctx, rs...)
}

// failingRecordOf returns the options of a world whose store fails the
// record of the nth sent attempt, once (failingRecord).
func failingRecordOf(nth int32) options {
	store := &failingRecord{nth: nth}
	return options{wrap: func(s app.DeliveryStore) app.DeliveryStore {
		store.DeliveryStore = s
		return store
	}}
}

// TestDeliveryCrashMidChainSendsAgainAfterTheLease (ADR 0067, ADR 0088): a
// run sends a chain of batches of two heads and dies after sending the
// second batch. The run scheduled one lease wake-up, at its first claim,
// for the latest time a lease of the run can end (its start +
// webhook.chain_max_duration + a lease); its later claim inserted nothing,
// and every claim still leased its batch for one lease, named by the
// batch's first head. A retry of the run inside the lease sends nothing;
// the wake-up sends both heads of the second batch again with the same
// webhook-ids, in order, and the chain goes on.
func TestDeliveryCrashMidChainSendsAgainAfterTheLease(t *testing.T) {
	t.Parallel()
	o := failingRecordOf(2)
	o.change = func(o *app.DeliveryOptions) { o.BatchMaxDeliveries = 2 }
	b := deliveryWorld(t, o)
	sub := b.sub
	for _, text := range []string{"first", "second", "third", "fourth", "fifth"} {
		b.post(t, b.w.Alex, b.w.Eskalation, text)
	}
	b.runRound(t)
	rows := b.deliveries(t, sub)
	require.Len(t, rows, 5)
	before := b.w.Scheduled(t, sub)
	start := b.now()

	require.ErrorIs(t, b.d.Deliver(bg, sub), errInjected, "the run dies after sending the second batch")
	got := b.recv.requests()
	require.Len(t, got, 4)
	wakeUp := start.Add(b.opts.ChainMaxDuration + b.leaseLength())
	require.Equal(t, append(before, wakeUp), b.w.Scheduled(t, sub), "one wake-up for the run, none per claim")
	for _, d := range b.deliveries(t, sub)[2:4] {
		require.Equal(t, "pending", d.Status)
		require.Equal(t, 1, d.Attempt, "each head of the batch counts its request")
	}
	var leaseOf ids.ID
	var leaseUntil time.Time
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT lease_delivery_id, lease_until FROM webhook_subscriptions WHERE id = $1`, sub).
		Scan(&leaseOf, &leaseUntil))
	require.Equal(t, rows[2].ID, leaseOf, "the subscription holds the lease of the second batch, named by its first head")
	require.True(t, leaseUntil.Equal(start.Add(b.leaseLength())),
		"the claim leased it for its sends, one webhook.delivery_timeout and the time to record the answers (D-M2-26-58)")

	b.deliver(t, sub) // River's retry of the run, inside the lease
	require.Len(t, b.recv.requests(), 4, "the lease keeps a retry from sending")
	b.advance(t, wakeUp.Sub(b.now()))
	b.deliver(t, sub) // the wake-up
	got = b.recv.requests()
	var order []string
	for _, r := range got {
		order = append(order, r.id)
	}
	ev := func(i int) string { return rows[i].EventID.String() }
	require.Equal(t, []string{ev(0), ev(1), ev(2), ev(3), ev(2), ev(3), ev(4)}, order,
		"the second batch again with the same webhook-ids, then the rest in order")
	for i, r := range b.deliveries(t, sub) {
		require.Equal(t, "succeeded", r.Status, "delivery %d", i)
	}
	require.Equal(t, 2, b.deliveries(t, sub)[3].Attempt)
	require.Equal(t, rows[4].EventSeq, b.subscription(t, sub).LastDeliveredSeq)
}

// TestDeliveryLeaseWakeUpIsBoundedByTheJobDeadline (ADR 0067): a run whose
// job ends before start + webhook.chain_max_duration +
// webhook.delivery_timeout stops claiming one webhook.delivery_timeout
// before its deadline, so its wake-up is due at the deadline. The run dies
// before it records its attempt; the wake-up stays in any case (ADR 0087).
func TestDeliveryLeaseWakeUpIsBoundedByTheJobDeadline(t *testing.T) {
	t.Parallel()
	b, sub := withPending(t, failingRecordOf(1), "within the job's deadline")
	before := b.w.Scheduled(t, sub)
	deadline := b.now().Add(b.opts.DeliveryTimeout + b.opts.ChainMaxDuration/2)
	ctx, cancel := context.WithDeadline(bg, deadline)
	defer cancel()
	require.ErrorIs(t, b.d.Deliver(ctx, sub), errInjected)
	require.Len(t, b.recv.requests(), 1)
	require.Equal(t, append(before, deadline), b.w.Scheduled(t, sub))
}

// TestDeliveryWakeUpMadeAvailableEarlyLeavesAJob (D-M2-26-72): River makes
// a scheduled job available by the database's clock, which may run ahead
// of the worker's. A job due at or after the end of a lease that finds
// the lease still in force leaves a job for the lease's end instead of
// ending, so the attempt in flight stays covered; a job due earlier (a
// round's) ends as before.
func TestDeliveryWakeUpMadeAvailableEarlyLeavesAJob(t *testing.T) {
	t.Parallel()
	b, sub := withPending(t, failingRecordOf(1), "sent, never recorded")
	require.ErrorIs(t, b.d.Deliver(bg, sub), errInjected, "the run dies after its send")
	leaseUntil := b.now().Add(b.leaseLength())
	b.advance(t, time.Second)
	before := b.w.Scheduled(t, sub)
	require.NoError(t, b.d.DeliverScheduled(bg, sub, b.now()), "a job due now finds the lease in force")
	require.Equal(t, before, b.w.Scheduled(t, sub), "and leaves nothing: the lease is covered already")
	require.NoError(t, b.d.DeliverScheduled(bg, sub, leaseUntil), "a job due at the lease's end, made available early")
	require.ElementsMatch(t, append(before, leaseUntil), b.w.Scheduled(t, sub), "leaves a job for the lease's end")
	require.Len(t, b.recv.requests(), 1, "neither sent anything inside the lease")
	b.advance(t, leaseUntil.Sub(b.now()))
	require.NoError(t, b.d.DeliverScheduled(bg, sub, leaseUntil))
	got := b.recv.requests()
	require.Len(t, got, 2)
	require.Equal(t, got[0].id, got[1].id, "the head again, with the same webhook-id")
}

// TestDeliveryRunsShareALeaseWakeUp (ADR 0087): a run's lease wake-up
// stays after the run ends and is named on the subscription, so a later
// run whose leases end by the time it is due inserts none;
// a run past that point inserts its own. A later run that dies after its
// send is covered by the shared wake-up, which sends the head again with
// the same webhook-id.
func TestDeliveryRunsShareALeaseWakeUp(t *testing.T) {
	t.Parallel()
	b, sub := withPending(t, failingRecordOf(2), "first")
	lease := b.leaseLength()
	rounds := b.w.Scheduled(t, sub)
	wakeUp := b.now().Add(b.opts.ChainMaxDuration + lease)
	require.NoError(t, b.d.Deliver(bg, sub))
	require.Equal(t, append(rounds, wakeUp), b.w.Scheduled(t, sub), "the run's wake-up stays for later runs")
	var named time.Time
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT wake_up_at FROM webhook_subscriptions WHERE id = $1`, sub).Scan(&named))
	require.True(t, named.Equal(wakeUp), "the subscription names its wake-up: %v", named)

	// A later run within the shared wake-up's cover dies after its send.
	b.advance(t, b.opts.ChainMaxDuration-time.Second)
	b.postAndRound(t, "second")
	rounds = b.w.Scheduled(t, sub)
	require.ErrorIs(t, b.d.Deliver(bg, sub), errInjected, "the run dies after sending the second head")
	require.Len(t, b.recv.requests(), 2)
	require.Equal(t, rounds, b.w.Scheduled(t, sub), "the second run inserted no wake-up")
	b.deliver(t, sub) // River's retry of the run, inside the lease
	require.Len(t, b.recv.requests(), 2, "the lease keeps a retry from sending")
	b.advance(t, wakeUp.Sub(b.now()))
	b.deliver(t, sub) // the shared wake-up
	got := b.recv.requests()
	require.Len(t, got, 3)
	require.Equal(t, got[1].id, got[2].id, "the wake-up sent the second head again with the same webhook-id")
	require.Equal(t, "succeeded", b.deliveries(t, sub)[1].Status)

	// The wake-up's run claimed past its own time, so it named a new
	// wake-up; a run past that one's cover inserts its own, and names it.
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT wake_up_at FROM webhook_subscriptions WHERE id = $1`, sub).Scan(&named))
	require.True(t, named.Equal(wakeUp.Add(b.opts.ChainMaxDuration+lease)), "the wake-up's run named its own: %v", named)
	b.advance(t, named.Sub(b.now()))
	b.postAndRound(t, "third")
	rounds = b.w.Scheduled(t, sub)
	own := b.now().Add(b.opts.ChainMaxDuration + lease)
	require.NoError(t, b.d.Deliver(bg, sub))
	require.Len(t, b.recv.requests(), 4)
	require.ElementsMatch(t, append(rounds, own), b.w.Scheduled(t, sub), "a run past the shared wake-up's cover inserts its own")
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT wake_up_at FROM webhook_subscriptions WHERE id = $1`, sub).Scan(&named))
	require.True(t, named.Equal(own), "the subscription names the newer wake-up: %v", named)
}
