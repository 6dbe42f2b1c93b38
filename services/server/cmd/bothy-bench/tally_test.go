package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPercentileUsesTheNearestRank(t *testing.T) {
	t.Parallel()
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	cases := []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{"no value gives zero", nil, 50, 0},
		{"one value is every percentile", ms(7), 99, 7 * time.Millisecond},
		{"the median of four is the second", ms(4, 1, 3, 2), 50, 2 * time.Millisecond},
		{"p90 of ten is the ninth", ms(10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 90, 9 * time.Millisecond},
		{"p99 of a hundred is the 99th", ms(seq(1, 100)...), 99, 99 * time.Millisecond},
		{"p100 is the largest", ms(5, 1, 9), 100, 9 * time.Millisecond},
		{"p0 is the smallest", ms(5, 1, 9), 0, time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, summarize(c.in).percentile(c.p))
		})
	}
}

func TestSummarizeGivesMaxAndCount(t *testing.T) {
	t.Parallel()
	s := summarize([]time.Duration{3, 1, 2})
	require.Equal(t, 3, s.count())
	require.Equal(t, time.Duration(3), s.max())
	require.Equal(t, time.Duration(0), summarize(nil).max())
}

func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func TestTallyCountsOrderViolationsAndDuplicatesPerSubscription(t *testing.T) {
	t.Parallel()
	var ta tally
	// Subscription 1 gets 1, 2, 4, then 3 late (a violation), then 4 again
	// (a duplicate, not a second violation).
	for _, a := range []arrival{
		{Sub: 1, WebhookID: "e1", Seq: 1},
		{Sub: 1, WebhookID: "e2", Seq: 2},
		{Sub: 1, WebhookID: "e4", Seq: 4},
		{Sub: 1, WebhookID: "e3", Seq: 3},
		{Sub: 1, WebhookID: "e4", Seq: 4},
	} {
		ta.add(a)
	}
	// Subscription 2 sees the same events (fan-out: the webhook-id is the
	// event's): neither duplicates nor violations of subscription 1.
	for _, a := range []arrival{
		{Sub: 2, WebhookID: "e1", Seq: 1},
		{Sub: 2, WebhookID: "e3", Seq: 3},
	} {
		ta.add(a)
	}
	require.Equal(t, 6, ta.unique)
	require.Equal(t, 1, ta.duplicates)
	require.Equal(t, 1, ta.violations)
	require.Len(t, ta.subs[1].seen, 4, "the distinct events of subscription 1")
	require.Len(t, ta.subs[2].seen, 2, "the distinct events of subscription 2")
}

func TestTallyReportsWhetherAnArrivalWasNew(t *testing.T) {
	t.Parallel()
	var ta tally
	require.True(t, ta.add(arrival{Sub: 0, WebhookID: "e1", Seq: 1}))
	require.False(t, ta.add(arrival{Sub: 0, WebhookID: "e1", Seq: 1}))
	require.True(t, ta.add(arrival{Sub: 0, WebhookID: "e2", Seq: 1}), "an equal seq of a new event is new and a violation")
	require.Equal(t, 1, ta.violations)
}

func TestHangSharesCompareTheHangScenarioWithTheFleetAlsoAtEachRunsSpeed(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	res := func(name string, delivered int, seconds int, benchCPU time.Duration) result {
		return result{Shape: shape{Name: name}, Delivered: delivered, DeliverFrom: t0,
			LastArrival: t0.Add(time.Duration(seconds) * time.Second), CPUBench: benchCPU}
	}
	// The hang run delivered 10 % less, on a machine whose own work per
	// delivery (the benchmark's) took 20 % longer: at each run's speed it
	// did 8 % more.
	got, ok := hangShares([]result{res("fleet", 1000, 10, 1000*time.Millisecond), res("hang", 900, 10, 1080*time.Millisecond)})
	require.True(t, ok)
	require.InDelta(t, 0.9, got.raw, 1e-9)
	require.InDelta(t, 1.08, got.atSpeed, 1e-9, "deliveries/s times the benchmark's own CPU per delivery")
	require.True(t, got.atSpeedKnown)

	got, ok = hangShares([]result{res("fleet", 1000, 10, 0), res("hang", 900, 10, time.Second)})
	require.True(t, ok)
	require.InDelta(t, 0.9, got.raw, 1e-9)
	require.False(t, got.atSpeedKnown, "without the benchmark's CPU of both runs there is no speed to compare at")

	_, ok = hangShares([]result{res("hang", 900, 10, time.Second)})
	require.False(t, ok, "without the fleet there is nothing to compare")
}

func TestSecondP99sTakesTheP99OfTheDeliveriesPostedInEachSecond(t *testing.T) {
	from := time.Date(2026, 12, 5, 23, 0, 0, 0, time.UTC)
	var posted []time.Time
	var lat []time.Duration
	// Second 0: 100 posts of 5 ms, one of 40 ms; second 2: 10 posts of 7
	// ms; second 1 has none.
	for i := range 100 {
		posted = append(posted, from.Add(time.Duration(i)*5*time.Millisecond))
		lat = append(lat, 5*time.Millisecond)
	}
	posted, lat = append(posted, from.Add(600*time.Millisecond)), append(lat, 40*time.Millisecond)
	for i := range 10 {
		posted = append(posted, from.Add(2*time.Second+time.Duration(i)*time.Millisecond))
		lat = append(lat, 7*time.Millisecond)
	}
	got := secondP99s(from, posted, lat)
	require.Equal(t, durations{5 * time.Millisecond, 7 * time.Millisecond}, got,
		"one p99 per second with posts, sorted: 40 ms is the 101st of 101 in second 0, above its p99")
	require.Empty(t, secondP99s(from, nil, nil))
}

func TestSplitStagesCutsEachDeliveryAtItsEventAndItsRow(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	started := map[string]time.Time{"m1": ms(0), "m2": ms(10), "m3": ms(20)}
	events := map[string]eventTimes{
		"e1": {Occurred: ms(1), Routed: ms(3)},
		"e2": {Occurred: ms(12), Routed: ms(17)},
		// m3's event has no row: a delivery the scenario did not keep.
	}
	arrivals := []arrival{
		{WebhookID: "e1", MessageID: "m1", At: ms(6)},
		{Sub: 1, WebhookID: "e1", MessageID: "m1", At: ms(8)}, // a fan-out's second subscription
		{WebhookID: "e2", MessageID: "m2", At: ms(30)},
		{WebhookID: "e3", MessageID: "m3", At: ms(40)},
		{WebhookID: "e9", MessageID: "unknown", At: ms(50)},
	}
	got := splitStages(arrivals, started, events)
	d := func(ns ...int) durations {
		out := make(durations, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	require.Equal(t, d(1, 1, 2), got.ToEvent, "post to event, sorted")
	require.Equal(t, d(2, 2, 5), got.ToRow)
	require.Equal(t, d(3, 5, 13), got.ToReceipt)
}
