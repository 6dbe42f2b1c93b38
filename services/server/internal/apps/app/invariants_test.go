package app_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/jobs"
)

// The invariants of the delivery engine (docs/DECISIONS.md D-M2-26-36 to
// D-M2-26-43, services/server/internal/apps/README.md "Invariants"): at
// most one attempt per subscription is in flight whatever owners and jobs
// do; a lease outlives the attempt it covers; an answer that arrived is
// recorded; a pending head always has a job; a round never skips an event
// silently (internal/sync/app); a deleted subscription costs only itself;
// a head that keeps failing on our side says why.

// holdFirst makes the receiver hold its first request until release is
// closed and answer every request with 200.
func holdFirst(b *bundle) (arrived <-chan struct{}, release chan struct{}) {
	first, rel := make(chan struct{}), make(chan struct{})
	b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			close(first)
			<-rel
		}
		w.WriteHeader(http.StatusOK)
	})
	return first, rel
}

// TestDeliveryResumeDuringAttemptKeepsOneInFlight: an owner pauses and
// resumes the subscription while the receiver holds attempt 1, with River
// running the jobs of two worker runtimes. The resume makes the head due,
// but the attempt in flight keeps its lease: the receiver never holds two
// requests of the subscription at once and sees the events in seq order.
func TestDeliveryResumeDuringAttemptKeepsOneInFlight(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{worker: true, realClock: true})
	b.secondWorker(t)
	arrived, release := holdFirst(b)
	b.post(t, b.w.Alex, b.w.Eskalation, "first")
	b.post(t, b.w.Alex, b.w.Eskalation, "second")
	rows := b.roundRows(t)
	<-arrived
	b.setState(t, b.sub, apps.SubscriptionPaused)
	b.setState(t, b.sub, apps.SubscriptionActive)
	// Give the jobs of the resume the chance to send concurrently before
	// the first attempt ends.
	b.waitJobsIdle(t)
	close(release)
	got := b.recv.wait(t, 2)
	eventually(t, "both succeeded", func() bool { return b.statusesAre(t, "succeeded", "succeeded") })
	require.Equal(t, 1, b.recv.peakInFlight(), "one attempt in flight at a time")
	require.Equal(t, []string{rows[0].EventID.String(), rows[1].EventID.String()}, ids2(b.recv.requests()))
	require.Len(t, got, 2)
	require.Equal(t, 1, b.deliveries(t, b.sub)[0].Attempt, "the held attempt was never claimed again")
}

// TestDeliveryRedeliveryDuringAttemptKeepsOneInFlight: an owner redelivers
// an earlier, succeeded delivery while the receiver holds the next one.
// The redelivered row becomes the head, but it waits until the attempt in
// flight ended: never two events of one subscription in flight at once.
func TestDeliveryRedeliveryDuringAttemptKeepsOneInFlight(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{worker: true, realClock: true})
	b.secondWorker(t)
	b.post(t, b.w.Alex, b.w.Eskalation, "first")
	b.roundRows(t)
	b.recv.wait(t, 1)
	eventually(t, "the first succeeded", func() bool { return b.statusesAre(t, "succeeded") })

	released := make(chan struct{})
	second := make(chan struct{})
	b.recv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			close(second)
			<-released
		}
		w.WriteHeader(http.StatusOK)
	})
	b.post(t, b.w.Alex, b.w.Eskalation, "second")
	rows := b.roundRows(t)
	<-second
	_, err := b.w.Services.Webhooks.Redeliver(b.robin(t), rows[0].ID)
	require.NoError(t, err)
	b.waitJobsIdle(t)
	close(released)
	b.recv.wait(t, 3)
	eventually(t, "all succeeded", func() bool { return b.statusesAre(t, "succeeded", "succeeded") })
	require.Equal(t, 1, b.recv.peakInFlight(), "one attempt in flight at a time")
	first, next := rows[0].EventID.String(), rows[1].EventID.String()
	require.Equal(t, []string{first, next, first}, ids2(b.recv.requests()), "the redelivery waited for the attempt in flight")
}

// TestDeliveryLeaseOutlivesItsAttempt: the claim's commit is slow (a
// deferred trigger sleeps once, as a loaded database would), and the
// receiver holds every request until the sender gives up. Another job
// trying the subscription all along never sends while the first attempt
// is in flight, because the attempt's deadline is the end of its lease,
// measured after the commit.
func TestDeliveryLeaseOutlivesItsAttempt(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{realClock: true, change: func(o *app.DeliveryOptions) {
		o.DeliveryTimeout = 3 * time.Second
		o.Retry.Base, o.Retry.Cap = 5*time.Second, 5*time.Second
	}})
	b.postAndRound(t, "slow commit")
	_, err := b.db.Owner.Exec(bg, `
		CREATE TABLE slow_commit_once (done boolean NOT NULL);
		INSERT INTO slow_commit_once VALUES (false);
		GRANT SELECT, UPDATE ON slow_commit_once TO bothy_app;
		CREATE FUNCTION slow_commit_once() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NOT (SELECT done FROM slow_commit_once) THEN
				UPDATE slow_commit_once SET done = true;
				PERFORM pg_sleep(1.2);
			END IF;
			RETURN NULL;
		END $$;
		CREATE CONSTRAINT TRIGGER slow_commit_once AFTER UPDATE ON webhook_deliveries
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit_once();`)
	require.NoError(t, err)
	b.recv.answer(func(_ int, w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers; the sender gives up
	})

	first := make(chan error, 1)
	go func() { first <- b.d.Deliver(bg, b.sub) }()
	var others atomic.Int32
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			others.Add(1)
			_ = b.d.Deliver(bg, b.sub)
		}
	}()
	require.NoError(t, <-first)
	close(stop)
	<-done
	require.Positive(t, others.Load())
	require.Equal(t, 1, b.recv.peakInFlight(), "no second attempt while the first was in flight")
	require.Len(t, b.recv.requests(), 1)
	row := b.deliveries(t, b.sub)[0]
	require.Equal(t, "pending", row.Status)
	require.Equal(t, "timeout", *row.LastError)
}

// nextClaimFails fails the claim of the next head after the first recorded
// attempt: the authorizer, the keys or the wake-up insert failing while
// the run goes on after a 2xx.
type nextClaimFails struct {
	app.DeliveryStore
	claims atomic.Int32
}

var errNextClaim = errors.New("injected failure of the next claim")

func (s *nextClaimFails) ClaimHeads(ctx context.Context, cs ...app.HeadClaimRequest) ([][]app.ClaimedHead, error) {
	if s.claims.Add(1) == 2 {
		return nil, errNextClaim
	}
	return s.DeliveryStore.ClaimHeads(ctx, cs...)
}

// TestDeliveryAnswerIsRecordedWhenTheNextClaimFails: the receiver accepted
// the first of two deliveries, then preparing the second fails. The answer
// that arrived is recorded (succeeded), the run returns the error for
// River to retry, and the retry sends only the second.
func TestDeliveryAnswerIsRecordedWhenTheNextClaimFails(t *testing.T) {
	t.Parallel()
	store := &nextClaimFails{}
	// One head per claim, so the second head needs a claim of its own.
	b := deliveryWorld(t, options{wrap: func(s app.DeliveryStore) app.DeliveryStore {
		store.DeliveryStore = s
		return store
	}, change: func(o *app.DeliveryOptions) { o.BatchMaxDeliveries = 1 }})
	b.post(t, b.w.Alex, b.w.Eskalation, "accepted")
	b.postAndRound(t, "next")
	require.ErrorIs(t, b.d.Deliver(bg, b.sub), errNextClaim)
	rows := b.deliveries(t, b.sub)
	require.Equal(t, "succeeded", rows[0].Status, "the 2xx that arrived is recorded")
	require.Equal(t, rows[0].EventSeq, b.subscription(t, b.sub).LastDeliveredSeq)
	require.Equal(t, "pending", rows[1].Status)
	require.Zero(t, rows[1].Attempt)

	b.deliver(t, b.sub) // River's retry
	require.Equal(t, []string{rows[0].EventID.String(), rows[1].EventID.String()}, ids2(b.recv.requests()),
		"the first is never sent again")
}

// behindClock is the real clock set back by d: an application host whose
// clock runs behind the database's.
type behindClock struct{ d time.Duration }

func (c behindClock) Now() time.Time { return time.Now().UTC().Add(-c.d) }

// TestDeliveryAppClockBehindTheDatabaseDoesNotStall: River makes a
// scheduled job available by the database's clock, the head is due by the
// application's, which runs three seconds behind. The retry after a 500
// fires "early", finds the head not yet due, and leaves a job for the
// head's time: the delivery goes out without waiting for another event.
func TestDeliveryAppClockBehindTheDatabaseDoesNotStall(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{worker: true, clk: behindClock{3 * time.Second}, change: func(o *app.DeliveryOptions) {
		o.Retry.Base, o.Retry.Cap = time.Second, time.Second
		o.ChainMaxDuration = time.Minute
	}})
	b.recv.failRequest(0, http.StatusOK)
	b.postAndRound(t, "retried on time")
	b.recv.wait(t, 2)
	eventually(t, "the retry succeeded", func() bool { return b.statusesAre(t, "succeeded") })
}

// deleteAfterCandidates deletes a subscription, committed on another
// connection, right after the round read the candidates of a type: an
// owner's deleteWebhookSubscription in the middle of a round.
type deleteAfterCandidates struct {
	app.DeliveryStore
	del  func()
	once atomic.Bool
}

func (s *deleteAfterCandidates) DeliveryCandidatesOf(ctx context.Context, t eventlog.Type, principals []ids.ID, countLimit int) ([]app.Candidate, error) {
	c, err := s.DeliveryStore.DeliveryCandidatesOf(ctx, t, principals, countLimit)
	if err == nil && s.del != nil && s.once.CompareAndSwap(false, true) {
		s.del()
	}
	return c, err
}

// TestRoundSurvivesASubscriptionDeletedMidRound: a subscription deleted
// after the round read it as a candidate costs only that subscription: the
// round commits and the other subscription gets its row and its job.
func TestRoundSurvivesASubscriptionDeletedMidRound(t *testing.T) {
	t.Parallel()
	store := &deleteAfterCandidates{}
	b := deliveryWorld(t, options{wrap: func(s app.DeliveryStore) app.DeliveryStore {
		store.DeliveryStore = s
		return store
	}})
	other := b.create(t, ids.Zero, nil, false).ID
	store.del = func() {
		_, err := b.db.App.Exec(bg, `DELETE FROM webhook_subscriptions WHERE id = $1`, other)
		require.NoError(t, err)
	}
	store.once.Store(false)
	b.post(t, b.w.Alex, b.w.Eskalation, "after a delete")
	n, err := b.round.RunRound(bg)
	require.NoError(t, err, "the round commits")
	require.Equal(t, 1, n)
	require.Len(t, b.deliveries(t, b.sub), 1, "the other subscription got its row")
	require.Empty(t, b.deliveries(t, other))
	require.NotEmpty(t, b.w.Scheduled(t, b.sub))
}

// TestDeliveryPoisonHeadIsVisible: the rights check fails on every run
// (the stored event names no receive action, a data fault the authorizer
// reports as an internal error, not a decision); once River's attempts of the job are spent
// the owner sees why on the head (last_error internal_error, still
// pending, nothing sent), operators get an error log line, and a job is
// left for the head so it is tried again later.
func TestDeliveryPoisonHeadIsVisible(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{worker: true, realClock: true, jobMaxAttempts: 2})
	// Paused, the round makes the row and no job runs; the fault comes
	// between the round and the attempt, whose job comes from the
	// delivery path's runtime (webhook.job_max_attempts of the test).
	b.setState(t, b.sub, apps.SubscriptionPaused)
	seq := b.post(t, b.w.Alex, b.w.Eskalation, "cannot be checked")
	b.runRound(t)
	_, err := b.db.Owner.Exec(bg, `UPDATE event_log SET receive_action = '' WHERE seq = $1`, seq)
	require.NoError(t, err)
	_, err = b.db.App.Exec(bg, `UPDATE webhook_subscriptions SET state = 'active' WHERE id = $1`, b.sub)
	require.NoError(t, err)
	b.schedule(t, b.sub)
	eventually(t, "the head names the error", func() bool {
		r := b.deliveries(t, b.sub)[0]
		return r.LastError != nil && *r.LastError == "internal_error"
	})
	row := b.deliveries(t, b.sub)[0]
	require.Equal(t, "pending", row.Status)
	require.Zero(t, row.Attempt, "nothing was sent")
	require.Nil(t, row.ResponseCode)
	require.Empty(t, b.recv.requests())
	require.Equal(t, "active", b.subscription(t, b.sub).State, "the state machine is unchanged")
	eventually(t, "an error log line", func() bool { return b.logged("webhook delivery stalled") })
	require.Positive(t, b.appMetrics.Sum(t, app.MetricDeliveriesStalled), "and a metric")
	require.NotEmpty(t, b.w.Scheduled(t, b.sub), "the head keeps a job")
}

// TestDeliveryRefusedAddressCountsNoAttempt (D-M2-26-43): the egress guard
// refuses the resolved address before any byte leaves, so the delivery's
// attempt stays 0 (attempt counts requests), while the refusal is a
// counted failure with a growing backoff.
func TestDeliveryRefusedAddressCountsNoAttempt(t *testing.T) {
	t.Parallel()
	b, sub := withPending(t, options{blockPrivate: true}, "to a private address")
	b.deliver(t, sub)
	row := b.deliveries(t, sub)[0]
	require.Equal(t, "pending", row.Status)
	require.Equal(t, "address_blocked", *row.LastError)
	require.Zero(t, row.Attempt, "no request left")
	require.Equal(t, 1, b.subscription(t, sub).ConsecutiveFailures)
	first := row.NextAttemptAt.Sub(b.now())
	b.advance(t, first)
	b.deliver(t, sub)
	row = b.deliveries(t, sub)[0]
	require.Zero(t, row.Attempt)
	require.Equal(t, 2, b.subscription(t, sub).ConsecutiveFailures)
	require.Empty(t, b.recv.requests())
}

// ids2 returns the webhook-ids of requests in arrival order.
func ids2(rs []received) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.id)
	}
	return out
}

// roundRows runs a round and returns the subscription's rows.
func (b *bundle) roundRows(t testing.TB) []deliveryRow {
	t.Helper()
	b.runRound(t)
	return b.deliveries(t, b.sub)
}

// statusesAre reports whether Tracker's deliveries have exactly these
// statuses in seq order.
func (b *bundle) statusesAre(t testing.TB, want ...string) bool {
	t.Helper()
	rows := b.deliveries(t, b.sub)
	if len(rows) != len(want) {
		return false
	}
	for i, r := range rows {
		if r.Status != want[i] {
			return false
		}
	}
	return true
}

// waitJobsIdle waits until no delivery job is available or running, so
// every job an owner's change inserted had its chance to run.
func (b *bundle) waitJobsIdle(t testing.TB) {
	t.Helper()
	eventually(t, "the delivery jobs ran", func() bool {
		var n int
		// The held attempt's job stays running (River's) or started in
		// process (its row scheduled for the fallback, ADR 0092); every
		// other one ended.
		require.NoError(t, b.db.App.QueryRow(bg, `SELECT count(*) FILTER (WHERE state = 'available') * 100
			+ count(*) FILTER (WHERE state = 'running' OR (state = 'scheduled' AND $1 = ANY(tags)))
			FROM river_job WHERE kind = 'apps.webhook_deliver'`, jobs.TagInProcess).Scan(&n))
		return n <= 1
	})
}
