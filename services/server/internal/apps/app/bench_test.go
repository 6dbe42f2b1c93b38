package app_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
)

// statements counts the SQL statements the delivery path sends, by their
// first word (BEGIN, SELECT, UPDATE, INSERT, COMMIT, SET, WITH).
type statements struct {
	mu     sync.Mutex
	on     bool
	byVerb map[string]int
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on {
		sql := strings.TrimSpace(d.SQL)
		for strings.HasPrefix(sql, "--") {
			_, sql, _ = strings.Cut(sql, "\n")
			sql = strings.TrimSpace(sql)
		}
		verb, _, _ := strings.Cut(sql, " ")
		s.byVerb[strings.ToUpper(verb)]++
	}
	return ctx
}

func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (s *statements) count(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on, s.byVerb = on, map[string]int{}
}

// report adds the statements per unit as a metric and their breakdown to
// the log of the benchmark.
func (s *statements) report(b *testing.B, units int, unit string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	total := 0
	verbs := make([]string, 0, len(s.byVerb))
	for v, n := range s.byVerb {
		total += n
		verbs = append(verbs, v)
	}
	sort.Strings(verbs)
	parts := make([]string, 0, len(verbs))
	for _, v := range verbs {
		parts = append(parts, fmt.Sprintf("%s %.2f", v, float64(s.byVerb[v])/float64(units)))
	}
	b.ReportMetric(float64(total)/float64(units), "stmts/"+unit)
	b.Logf("statements per %s: %.2f (%s)", unit, float64(total)/float64(units), strings.Join(parts, ", "))
}

// appendEvents appends n message.created events in Eskalation by Alex, in
// batches of one transaction each.
func (w *bundle) appendEvents(tb testing.TB, n int) {
	tb.Helper()
	for done := 0; done < n; {
		batch := min(n-done, 500)
		require.NoError(tb, w.w.Services.UnitOfWork.Do(bg, func(ctx context.Context) error {
			for i := range batch {
				if _, err := w.w.Services.Events.Append(ctx, eventlog.Event{Type: eventlog.MessageCreated, ResourceID: ids.New(),
					SpaceID: w.w.Support, ChannelID: w.w.Eskalation, ActorID: w.w.Alex.ID,
					Payload: map[string]any{"text": fmt.Sprintf("benchmark message %d of Alex", done+i)}}); err != nil {
					return err
				}
			}
			return nil
		}))
		done += batch
	}
}

// withoutLeaseWakeUps drops the jobs scheduled after now (the lease
// wake-ups; the benchmark has no retries). It exists only to measure what
// the lease wake-up costs; the product always schedules it (Design note 4).
type withoutLeaseWakeUps struct {
	app.DeliveryScheduler
	clock interface{ Now() time.Time }
}

func (s withoutLeaseWakeUps) Schedule(ctx context.Context, sub ids.ID, at time.Time) error {
	if at.After(s.clock.Now()) {
		return nil
	}
	return s.DeliveryScheduler.Schedule(ctx, sub, at)
}

// BenchmarkDeliverLoop measures the attempt loop: claim under the row
// lock, event read, webhook_out.deliver, signing (v1a and v1), lease with
// its wake-up job, send to a local TLS receiver over the egress client,
// record, and the claim of the next head in the same transaction. b.N
// deliveries are spread over the given number of subscriptions, whose jobs
// run at once (one chain each, as River's delivery workers would). It
// reports deliveries per second and the SQL statements per delivery.
// wakeups=skipped measures the same loop without the lease wake-up insert,
// only to put a number on it (see the README).
func BenchmarkDeliverLoop(b *testing.B) {
	for _, bc := range []struct {
		subs    int
		wakeups bool
	}{{1, true}, {8, true}, {1, false}} {
		name := fmt.Sprintf("subscriptions=%d/wakeups=scheduled", bc.subs)
		if !bc.wakeups {
			name = fmt.Sprintf("subscriptions=%d/wakeups=skipped", bc.subs)
		}
		b.Run(name, func(b *testing.B) {
			stmts := &statements{}
			o := options{realClock: true, tracer: stmts, change: func(o *app.DeliveryOptions) {
				o.ChainMaxDeliveries, o.ChainMaxDuration, o.MaxPendingPerSubscription = 1<<30, time.Hour, 1<<30
			}}
			if !bc.wakeups {
				o.scheduler = func(s app.DeliveryScheduler) app.DeliveryScheduler {
					return withoutLeaseWakeUps{DeliveryScheduler: s, clock: clockNow{}}
				}
			}
			w := deliveryWorld(b, o)
			w.setState(b, w.sub, apps.SubscriptionPaused)
			subs := make([]ids.ID, bc.subs)
			for i := range subs {
				subs[i] = w.create(b, ids.Zero, nil, true).ID
			}
			w.appendEvents(b, (b.N+bc.subs-1)/bc.subs)
			w.drain(b)
			stmts.count(true)
			b.ResetTimer()
			var wg sync.WaitGroup
			for _, sub := range subs {
				wg.Go(func() { require.NoError(b, w.d.Deliver(bg, sub)) })
			}
			wg.Wait()
			b.StopTimer()
			sent := len(w.recv.requests())
			require.Equal(b, len(subs)*((b.N+bc.subs-1)/bc.subs), sent)
			b.ReportMetric(float64(sent)/b.Elapsed().Seconds(), "deliveries/s")
			stmts.report(b, sent, "delivery")
		})
	}
}

// clockNow is the real clock for withoutLeaseWakeUps.
type clockNow struct{}

func (clockNow) Now() time.Time { return time.Now() }

// BenchmarkConsumerRound measures the consumer webhooks: rounds of
// consumer.batch_size events, each event giving one pending row per
// subscription, with the quota count and one job per subscription and
// round. It reports events per second and statements per event.
func BenchmarkConsumerRound(b *testing.B) {
	for _, subs := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("subscriptions=%d", subs), func(b *testing.B) {
			stmts := &statements{}
			w := deliveryWorld(b, options{tracer: stmts, change: func(o *app.DeliveryOptions) { o.MaxPendingPerSubscription = 1 << 30 }})
			for range subs - 1 {
				w.create(b, ids.Zero, nil, false) // and Tracker's own
			}
			w.appendEvents(b, b.N)
			stmts.count(true)
			b.ResetTimer()
			for handled := 0; handled < b.N; {
				handled += w.runRound(b)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			stmts.report(b, b.N, "event")
		})
	}
}
