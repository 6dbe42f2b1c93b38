package app_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/app"
	"bothy/server/internal/authz"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg/pgtest"
)

// queryLog counts the round trips and statements of a pool
// (pgtest.Trips) and the statements of each sqlc query (by the name sqlc
// puts in their first line), and keeps the SQL and arguments of the last
// one and the arguments of the first one since the last reset. The first statement of a unit of work travels in a batch with its
// BEGIN (ADR 0084), and so do the statements of txn.Together (ADR 0085).
type queryLog struct {
	pgtest.Trips
	mu    sync.Mutex
	calls map[string]int
	sql   map[string]string
	args  map[string][]any
	first map[string][]any
}

func newQueryLog() *queryLog {
	return &queryLog{calls: map[string]int{}, sql: map[string]string{}, args: map[string][]any{}, first: map[string][]any{}}
}

func (l *queryLog) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.saw(d.SQL, d.Args)
	return l.Trips.TraceQueryStart(ctx, c, d)
}

func (l *queryLog) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	l.saw(d.SQL, d.Args)
}

// saw counts a statement of a sqlc query by its name.
func (l *queryLog) saw(sql string, args []any) {
	name, ok := pgtest.QueryName(sql)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.calls[name] == 0 {
		l.first[name] = args
	}
	l.calls[name]++
	l.sql[name], l.args[name] = sql, args
}

// total returns how many statements were seen since the last reset.
func (l *queryLog) total() int {
	_, n := l.Count()
	return n
}

// roundTrips returns how many round trips were seen since the last reset.
func (l *queryLog) roundTrips() int {
	n, _ := l.Count()
	return n
}

func (l *queryLog) reset() {
	l.Take()
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.calls)
	clear(l.first)
}

func (l *queryLog) count(name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[name]
}

// firstArgs returns the arguments of the first statement of name since
// the last reset.
func (l *queryLog) firstArgs(name string) []any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.first[name]
}

// last returns the SQL and the arguments of the last statement of name.
func (l *queryLog) last(name string) (string, []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sql[name], l.args[name]
}

// TestRoundRoutesAllItsEventsWithTwoStatements (D-M2-26-65,
// D-M2-26-81, D-M2-26-93): a round whose events lie in many places routes
// them together: one read of the apps that can see each place with the
// grants of each of them, one read of the candidates among those apps
// (and one, in the round trip of the reach, of those the process expected
// from its last rounds), whatever the number of events and places; the
// decision needs no read of its own. Each event still reaches exactly the apps granted on its channel
// (a fleet app its own channel, Tracker Eskalation, nobody Allgemein).
func TestRoundRoutesAllItsEventsWithTwoStatements(t *testing.T) {
	t.Parallel()
	c := newQueryLog()
	b := deliveryWorld(t, options{tracer: c})
	b.addFleet(t, 3)
	fleet := b.fleetChannels(t)
	require.Len(t, fleet, 3)
	channels := append([]ids.ID{b.w.Eskalation, b.w.Allgemein}, fleet...)
	b.appendEventsIn(t, 2*len(channels), channels)

	c.reset()
	require.Equal(t, 2*len(channels), b.runRound(t))
	require.Equal(t, 1, c.count("GrantHoldersByPlaces"),
		"the apps that can see each of the five places and their grants, in one read")
	require.Equal(t, 2, c.count("WebhookSubscriptionDeliveryCandidatesOf"),
		"the candidates of the apps expected (Tracker's in Eskalation, routed as the world was built) with the reach, of every other app reached in one read")
	require.Zero(t, c.count("GrantFactsBySubjects"), "the decision has the grants of every app reached")

	var made, matching int
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT count(*) FROM webhook_deliveries`).Scan(&made))
	require.NoError(t, b.db.App.QueryRow(bg, `
		SELECT count(*) FROM webhook_deliveries d
		JOIN event_log e ON e.seq = d.event_seq
		JOIN webhook_subscriptions s ON s.id = d.subscription_id
		JOIN app_installations i ON i.id = s.app_installation_id
		JOIN apps a ON a.id = i.app_id
		JOIN grants g ON g.subject_principal_id = a.principal_id AND g.channel_id = e.channel_id`).Scan(&matching))
	require.Equal(t, 8, made, "two events each in Eskalation and the three fleet channels; none for Allgemein")
	require.Equal(t, made, matching, "every row goes to an app granted on its event's channel")
	require.Len(t, b.deliveries(t, b.sub), 2, "Tracker gets the two Eskalation events")
}

// TestRoundCountsWithItsCandidates (D-SY-17, D-M2-26-84): the open
// count of each active candidate comes with the candidates, read before
// the round's rows, so the quota still counts what was open before the
// round and no statement of its own counts.
func TestRoundCountsWithItsCandidates(t *testing.T) {
	t.Parallel()
	c := newQueryLog()
	b := deliveryWorld(t, options{tracer: c})
	b.post(t, b.w.Alex, b.w.Eskalation, "Sam, the printer is back")
	b.post(t, b.w.Alex, b.w.Eskalation, "Robin, so is the scanner")
	c.reset()
	require.Equal(t, 2, b.runRound(t))
	require.Zero(t, c.count("WebhookDeliveryCountPending"), "no count of its own")
	require.Equal(t, 1, c.count("WebhookSubscriptionDeliveryCandidatesOf"), "the candidates with their counts, in one read")
	require.Len(t, b.deliveries(t, b.sub), 2, "Tracker gets both Eskalation events")
}

// TestRoundWritesItsRowsInChunks (D-M2-26-82): a round whose events call
// for more rows than webhook.round_insert_max_deliveries writes them with
// several inserts of at most that many (an event's rows stay together),
// so the worker's memory follows the key and not the round's events times
// their subscriptions. Every row is made, each subscription's open rows
// are counted once, before its first row, and each subscription is woken
// once, at the round's end.
func TestRoundWritesItsRowsInChunks(t *testing.T) {
	t.Parallel()
	c := newQueryLog()
	b := deliveryWorld(t, options{tracer: c, change: func(o *app.DeliveryOptions) { o.RoundInsertMaxDeliveries = 3 }})
	b.addFleet(t, 3)
	channels := append([]ids.ID{b.w.Eskalation}, b.fleetChannels(t)...)
	b.appendEventsIn(t, 8, channels)

	c.reset()
	require.Equal(t, 8, b.runRound(t))
	require.Equal(t, 3, c.count("WebhookDeliveryInsertForRound"), "eight rows, at most three an insert")
	require.Zero(t, c.count("WebhookDeliveryCountPending"), "the open counts came with the candidates")
	require.Equal(t, 1, c.count("JobInsertFastMany"), "the four subscriptions woken once, together")
	var made int
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT count(*) FROM webhook_deliveries`).Scan(&made))
	require.Equal(t, 8, made)
	require.Len(t, b.deliveries(t, b.sub), 2, "Tracker gets both Eskalation events")
}

// tripWith returns the round trip of trips (pgtest.Trips.TakeNames) that
// sent the statement name, nil when none did.
func tripWith(trips [][]string, name string) []string {
	for _, trip := range trips {
		if slices.Contains(trip, name) {
			return trip
		}
	}
	return nil
}

// tracedRoundIn posts text as Alex in channel, runs one round of the
// consumer webhooks and returns the round's round trips, each statement
// named (c's since the post).
func (b *bundle) tracedRoundIn(t *testing.T, c *queryLog, channel ids.ID, text string) [][]string {
	t.Helper()
	b.post(t, b.w.Alex, channel, text)
	c.reset()
	b.runRound(t)
	return c.TakeNames()
}

// TestRoundReadsTheCandidatesItExpectsWithTheReach (D-M2-26-93, ADR
// 0108): a round reads the candidates of the apps the last reach of an
// event's place named in the round trip of its reach. The first round
// with an event in a new channel reads its app's candidates after the
// reach; the next one reads them with it, one round trip less, and the
// app gets both events.
func TestRoundReadsTheCandidatesItExpectsWithTheReach(t *testing.T) {
	t.Parallel()
	c := newQueryLog()
	b := deliveryWorld(t, options{tracer: c})
	b.addFleet(t, 1)
	channel := b.fleetChannels(t)[0]
	first := b.tracedRoundIn(t, c, channel, "Sam, the printer is back")
	require.NotContains(t, tripWith(first, "GrantHoldersByPlaces"), "WebhookSubscriptionDeliveryCandidatesOf",
		"a place the process never routed: nothing to expect: %v", first)

	second := b.tracedRoundIn(t, c, channel, "Robin, so is the scanner")
	require.Contains(t, tripWith(second, "GrantHoldersByPlaces"), "WebhookSubscriptionDeliveryCandidatesOf",
		"the app's candidates travel with the reach: %v", second)
	require.Equal(t, 1, c.count("WebhookSubscriptionDeliveryCandidatesOf"), "and are read once")
	require.Len(t, second, len(first)-1, "one round trip less: %v against %v", second, first)
	var made int
	require.NoError(t, b.db.App.QueryRow(bg, `
		SELECT count(*) FROM webhook_deliveries d JOIN event_log e ON e.seq = d.event_seq
		WHERE e.channel_id = $1`, channel).Scan(&made))
	require.Equal(t, 2, made, "the fleet app gets both events")
}

// TestRoundRoutesByTheReachNotByWhatItExpected (D-M2-26-35, D-M2-26-93):
// what a round expects of a place only decides what it reads early. An
// app granted on the place since the last round gets its row (its
// candidates read after the reach), and an app whose grant was revoked
// since gets none, though the round read its candidates.
func TestRoundRoutesByTheReachNotByWhatItExpected(t *testing.T) {
	t.Parallel()
	c := newQueryLog()
	b := deliveryWorld(t, options{tracer: c})
	b.postAndRound(t, "Sam, the printer is back")

	// Notes, an app of its own on Eskalation from now on.
	notes := b.registerApp(t, "Notes", []string{"message.created"}, []string{"message.created"})
	_, err := b.w.Services.Apps.CreateAppGrant(b.robin(t), app.CreateAppGrant{AppID: notes.AppID, Level: authz.LevelRead,
		SpaceID: b.w.Support, ChannelID: b.w.Eskalation})
	require.NoError(t, err)
	notesSub := b.create(t, notes.AppID, nil, false).ID
	// round posts text in Eskalation and runs a round, which reads the
	// candidates it expects with its reach.
	round := func(text, expected string) {
		t.Helper()
		trips := b.tracedRoundIn(t, c, b.w.Eskalation, text)
		require.Contains(t, tripWith(trips, "GrantHoldersByPlaces"), "WebhookSubscriptionDeliveryCandidatesOf", expected)
	}
	round("Robin, so is the scanner", "Tracker's candidates expected with the reach")
	require.Len(t, b.deliveries(t, b.sub), 2, "Tracker gets its second event")
	require.Len(t, b.deliveries(t, notesSub), 1, "Notes gets the event of its new grant")

	// Tracker loses G-6, its grant on Eskalation.
	require.NoError(t, b.w.Services.Apps.DeleteAppGrant(b.robin(t), b.appID, b.w.G6.ID))
	round("Alex, the toner is low", "Tracker's and Notes' candidates expected with the reach")
	require.Len(t, b.deliveries(t, b.sub), 2, "no row for Tracker, not even a dead one")
	require.Len(t, b.deliveries(t, notesSub), 2, "Notes gets the event")
}
