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

// statements counts the statements (round trips) the delivery path sends,
// by their first word (SELECT, UPDATE, INSERT, COMMIT, WITH; BATCH for a
// batch, such as a BEGIN with the first statement of a unit of work).
// It also sums the time each kind of statement takes, from sending it to
// its result: under the load of a shared machine the share of a kind in
// the total says more than the absolute times.
type statements struct {
	mu     sync.Mutex
	on     bool
	byVerb map[string]int
	timeOf map[string]time.Duration
}

// started is the context value of a traced statement: its kind and start.
type started struct {
	verb string
	at   time.Time
}

type startedKey struct{}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return s.start(ctx, verbOf(d.SQL))
}

// A unit of work sends its BEGIN with its first statement, in one batch
// (ADR 0084): one round trip, counted as BATCH with its time.
func (s *statements) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return s.start(ctx, "BATCH")
}

func (s *statements) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (s *statements) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	s.TraceQueryEnd(ctx, nil, pgx.TraceQueryEndData{})
}

// start counts one round trip of kind verb and notes when it started.
func (s *statements) start(ctx context.Context, verb string) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.on {
		return ctx
	}
	s.byVerb[verb]++
	return context.WithValue(ctx, startedKey{}, started{verb: verb, at: time.Now()})
}

// verbOf returns the first word of sql after its comments, upper case.
func verbOf(sql string) string {
	sql = strings.TrimSpace(sql)
	for strings.HasPrefix(sql, "--") {
		_, sql, _ = strings.Cut(sql, "\n")
		sql = strings.TrimSpace(sql)
	}
	verb, _, _ := strings.Cut(sql, " ")
	return strings.ToUpper(strings.TrimSuffix(verb, ";"))
}

func (s *statements) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	st, ok := ctx.Value(startedKey{}).(started)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on {
		s.timeOf[st.verb] += time.Since(st.at)
	}
}

func (s *statements) count(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on, s.byVerb, s.timeOf = on, map[string]int{}, map[string]time.Duration{}
}

// pause stops counting until resume, keeping what was counted.
func (s *statements) pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on = false
}

// resume counts again after pause.
func (s *statements) resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on = true
}

// report adds the statements per unit as a metric and their breakdown to
// the log of the benchmark.
func (s *statements) report(b *testing.B, units int, unit string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	total, spent := 0, time.Duration(0)
	verbs := make([]string, 0, len(s.byVerb))
	for v, n := range s.byVerb {
		total += n
		spent += s.timeOf[v]
		verbs = append(verbs, v)
	}
	sort.Strings(verbs)
	parts := make([]string, 0, len(verbs))
	for _, v := range verbs {
		parts = append(parts, fmt.Sprintf("%s %.2f (%.0f%% of the time)", v, float64(s.byVerb[v])/float64(units),
			100*s.timeOf[v].Seconds()/max(spent.Seconds(), 1e-9)))
	}
	b.ReportMetric(float64(total)/float64(units), "stmts/"+unit)
	b.ReportMetric(float64(spent.Microseconds())/float64(units), "db-µs/"+unit)
	b.Logf("statements per %s: %.2f (%s)", unit, float64(total)/float64(units), strings.Join(parts, ", "))
}

// appendEvents appends n message.created events in Eskalation by Alex, in
// batches of one transaction each.
func (w *bundle) appendEvents(tb testing.TB, n int) {
	tb.Helper()
	w.appendEventsIn(tb, n, []ids.ID{w.w.Eskalation})
}

// appendEventsIn appends n message.created events of Alex in Support,
// event i in channels[i mod len(channels)].
func (w *bundle) appendEventsIn(tb testing.TB, n int, channels []ids.ID) {
	tb.Helper()
	for done := 0; done < n; {
		batch := min(n-done, 500)
		require.NoError(tb, w.w.Services.UnitOfWork.Do(bg, func(ctx context.Context) error {
			for i := range batch {
				if _, err := w.w.Services.Events.Append(ctx, eventlog.Event{Type: eventlog.MessageCreated, ResourceID: ids.New(),
					SpaceID: w.w.Support, ChannelID: channels[(done+i)%len(channels)], ActorID: w.w.Alex.ID,
					Payload: map[string]any{"text": fmt.Sprintf("benchmark message %d of Alex", done+i)}}); err != nil {
					return err
				}
			}
			return nil
		}))
		done += batch
	}
}

// BenchmarkDeliverLoop measures the attempt loop: claim under the row
// lock, event read, webhook_out.deliver, signing (v1a and v1), lease (the
// run's first claim also schedules its one wake-up job, ADR 0067), send to
// a local TLS receiver over the egress client,
// record, and the claim of the next head in the same transaction. b.N
// deliveries are spread over the given number of subscriptions, whose jobs
// run at once (one chain each, as River's delivery workers would). It
// reports deliveries per second and the SQL statements per delivery.
func BenchmarkDeliverLoop(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("subscriptions=%d", n), func(b *testing.B) {
			stmts := &statements{}
			o := options{realClock: true, tracer: stmts, change: func(o *app.DeliveryOptions) {
				o.ChainMaxDeliveries, o.ChainMaxDuration, o.MaxPendingPerSubscription = 1<<30, time.Hour, 1<<30
			}}
			w := deliveryWorld(b, o)
			w.setState(b, w.sub, apps.SubscriptionPaused)
			subs := make([]ids.ID, n)
			for i := range subs {
				subs[i] = w.create(b, ids.Zero, nil, true).ID
			}
			w.appendEvents(b, (b.N+n-1)/n)
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
			require.Equal(b, n*((b.N+n-1)/n), sent)
			b.ReportMetric(float64(sent)/b.Elapsed().Seconds(), "deliveries/s")
			stmts.report(b, sent, "delivery")
			w.reportHOT(b)
		})
	}
}

// reportHOT reports the share of the updates of webhook_deliveries that
// were heap-only (HOT: no new index entries, D-M2-26-44). Closing the
// delivery path's pool makes its backends flush their statistics.
func (w *bundle) reportHOT(b *testing.B) {
	w.pool.Close()
	var upd, hot float64
	require.NoError(b, w.db.Owner.QueryRow(bg, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
		WHERE relname = 'webhook_deliveries'`).Scan(&upd, &hot))
	if upd > 0 {
		b.ReportMetric(100*hot/upd, "hot-updates-%")
	}
}

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
			w.benchRounds(b, stmts)
		})
	}
}

// addFleet adds n apps to the world in bulk (one statement), each with a
// channel of its own in Support, a write grant on it, an active
// installation with Tracker's scopes and a subscription to message.created
// at the receiver: the shape of a real instance, where most subscriptions
// do not match a given event.
func (w *bundle) addFleet(tb testing.TB, n int) {
	tb.Helper()
	_, err := w.db.App.Exec(bg, `
		WITH fleet AS (
			SELECT g, uuidv7() AS principal, uuidv7() AS app, uuidv7() AS installation, uuidv7() AS channel,
			       uuidv7() AS subscription, uuidv7() AS grant_id
			FROM generate_series(1, $1) AS g
		), p AS (
			INSERT INTO principals (id, kind, display_name, created_at)
			SELECT principal, 'app', 'Fleet ' || g, $2 FROM fleet
		), a AS (
			INSERT INTO apps (id, principal_id, name, manifest, created_by, created_at, updated_at)
			SELECT app, principal, 'Fleet ' || g, '{}'::jsonb, $3, $2, $2 FROM fleet
		), i AS (
			INSERT INTO app_installations (id, app_id, state, granted_scopes, event_subscriptions, installed_by, installed_at, updated_at)
			SELECT installation, app, 'active', ARRAY['events:subscribe', 'messages:read', 'messages:write'],
			       ARRAY['message.created'], $3, $2, $2 FROM fleet
		), c AS (
			INSERT INTO channels (id, space_id, name, created_by, created_at)
			SELECT channel, $4, 'fleet-' || g, $3, $2 FROM fleet
		), gr AS (
			INSERT INTO grants (id, subject_principal_id, level, space_id, channel_id, created_by, created_at)
			SELECT grant_id, principal, 'write', $4, channel, $3, $2 FROM fleet
		)
		INSERT INTO webhook_subscriptions (id, app_installation_id, url, event_types, state, signing_key_kid,
			created_by, created_at, updated_at)
		SELECT subscription, installation, $5, ARRAY['message.created'], 'active', 'bench', $3, $2, $2 FROM fleet`,
		n, w.now(), w.w.Robin.ID, w.w.Support, w.recv.url(trackerPath))
	require.NoError(tb, err)
	_, err = w.db.Owner.Exec(bg, `ANALYZE`)
	require.NoError(tb, err)
}

// fleetChannels returns the channels addFleet made, ordered by id.
func (w *bundle) fleetChannels(tb testing.TB) []ids.ID {
	tb.Helper()
	rows, err := w.db.App.Query(bg, `SELECT id FROM channels WHERE name LIKE 'fleet-%' ORDER BY id`)
	require.NoError(tb, err)
	fleet, err := pgx.CollectRows(rows, pgx.RowTo[ids.ID])
	require.NoError(tb, err)
	return fleet
}

// BenchmarkConsumerRoundFleet measures a round where only one subscription
// can see the events: apps=N apps in all, each granted on a channel of its
// own and subscribed to message.created, and every event in Eskalation,
// which only Tracker may see. Routing by rights at the round (D-M2-26-35)
// keeps the round's cost at the deliveries it creates: events/s and
// stmts/event stay flat from 1 to 10,000 apps, and each event gives one
// row. events=every-channel puts event i in the channel of app i mod N,
// the shape of make bench-e2e's fleet, where a round's events reach many
// places; routing them together (D-M2-26-65) keeps its stmts/event at
// those of one place.
func BenchmarkConsumerRoundFleet(b *testing.B) {
	for _, n := range []int{1, 100, 10000} {
		b.Run(fmt.Sprintf("apps=%d/channels=own", n), func(b *testing.B) {
			stmts := &statements{}
			w := deliveryWorld(b, options{tracer: stmts, change: func(o *app.DeliveryOptions) { o.MaxPendingPerSubscription = 1 << 30 }})
			w.addFleet(b, n-1)
			w.benchRounds(b, stmts)
			var rows int
			require.NoError(b, w.db.App.QueryRow(bg, `SELECT count(*) FROM webhook_deliveries`).Scan(&rows))
			require.Equal(b, b.N, rows, "one row per event: only Tracker sees Eskalation")
		})
	}
	// The shape of make bench-e2e's fleet: every event in the channel of
	// the next app, so a round's events reach many places and apps, and
	// each event still gives one row.
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("apps=%d/channels=own/events=every-channel", n), func(b *testing.B) {
			stmts := &statements{}
			w := deliveryWorld(b, options{tracer: stmts, change: func(o *app.DeliveryOptions) { o.MaxPendingPerSubscription = 1 << 30 }})
			w.addFleet(b, n-1)
			w.benchRoundsIn(b, stmts, append([]ids.ID{w.w.Eskalation}, w.fleetChannels(b)...))
			var made int
			require.NoError(b, w.db.App.QueryRow(bg, `SELECT count(*) FROM webhook_deliveries`).Scan(&made))
			require.Equal(b, b.N, made, "one row per event: each channel has one app")
		})
	}
}

// benchRounds appends b.N events in Eskalation and times the rounds that
// handle them, reporting events/s and the statements per event.
func (w *bundle) benchRounds(b *testing.B, stmts *statements) {
	w.benchRoundsIn(b, stmts, []ids.ID{w.w.Eskalation})
}

// benchRoundsIn is benchRounds with event i in channels[i mod
// len(channels)].
func (w *bundle) benchRoundsIn(b *testing.B, stmts *statements, channels []ids.ID) {
	w.appendEventsIn(b, b.N, channels)
	stmts.count(true)
	b.ResetTimer()
	for handled := 0; handled < b.N; {
		handled += w.runRound(b)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	stmts.report(b, b.N, "event")
}

// BenchmarkConsumerRoundOfOneEvent measures rounds of one event each, the
// shape of make bench-e2e's rate scenario: 100 apps, each granted on a
// channel of its own and subscribed to message.created, event i in the
// channel of app i mod 100, each round with its one event and its one row.
// From the second event in a channel on, the round reads the candidates it
// expects with its reach (ADR 0108): stmts/round counts the round trips.
func BenchmarkConsumerRoundOfOneEvent(b *testing.B) {
	stmts := &statements{}
	w := deliveryWorld(b, options{tracer: stmts, change: func(o *app.DeliveryOptions) { o.MaxPendingPerSubscription = 1 << 30 }})
	w.addFleet(b, 99)
	channels := append([]ids.ID{w.w.Eskalation}, w.fleetChannels(b)...)
	stmts.count(true)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		stmts.pause()
		w.appendEventsIn(b, 1, channels[i%len(channels):][:1])
		stmts.resume()
		b.StartTimer()
		require.Equal(b, 1, w.runRound(b))
	}
	b.StopTimer()
	stmts.report(b, b.N, "round")
	var made int
	require.NoError(b, w.db.App.QueryRow(bg, `SELECT count(*) FROM webhook_deliveries`).Scan(&made))
	require.Equal(b, b.N, made, "one row per event")
}
