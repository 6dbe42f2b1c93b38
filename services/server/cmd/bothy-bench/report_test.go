package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWriteStatementsListsAsManyAsAskedEachCutToTheWidth(t *testing.T) {
	stmts := []statement{
		{Query: "SELECT a, b, c FROM webhook_deliveries WHERE subscription_id = $1", Calls: 20, TotalMS: 4},
		{Query: "INSERT INTO messages (id) VALUES ($1)", Calls: 10, TotalMS: 2},
		{Query: "COMMIT", Calls: 10, TotalMS: 1},
	}
	var b strings.Builder
	writeStatements(&b, stmts, 10, 2, 30)
	out := b.String()
	require.Contains(t, out, "4.0 per delivery", "the totals count every statement")
	require.Contains(t, out, "SELECT a, b, c FROM webhook...", "a long text is cut to the width")
	require.Contains(t, out, "INSERT INTO messages (id) V...")
	require.NotContains(t, out, "COMMIT", "only the first two are listed")
	require.Contains(t, out, "  2.00   0.400   0.200   0.000     0.0  SELECT",
		"calls and time per delivery, time per call, planning and buffers per delivery")

	b.Reset()
	writeStatements(&b, stmts, 10, 0, 30)
	require.Contains(t, b.String(), "4.0 per delivery")
	require.NotContains(t, b.String(), "top statements", "0 lists none")
}

func TestWriteLatenciesWritesOneLinePerPostedArrival(t *testing.T) {
	t.Parallel()
	posted := time.UnixMicro(1_780_000_000_000_000)
	started := map[string]time.Time{"m1": posted, "m2": posted.Add(5 * time.Millisecond)}
	arrivals := []arrival{
		{Sub: 3, MessageID: "m1", At: posted.Add(6500 * time.Microsecond)},
		{Sub: 4, MessageID: "m2", At: posted.Add(17 * time.Millisecond)},
		{Sub: 5, MessageID: "not-posted-here", At: posted},
	}
	var out strings.Builder
	require.NoError(t, writeLatencies(&out, "rate", arrivals, started))
	require.Equal(t, "rate,1780000000000000,6500,3\nrate,1780000000005000,12000,4\n", out.String(),
		"one line per arrival of a posted message: scenario, posted at (us), latency (us), app")
}

func TestWriteWALGivesTheFlushesAndBytesPerDelivery(t *testing.T) {
	var b strings.Builder
	writeWAL(&b, walStats{Bytes: 11 << 20, Flushes: 8000, FlushMS: 2400, Timed: true}, 2000)
	require.Equal(t, "  wal           5.6 KiB and 4.0 flushes per delivery, 0.30 ms a flush (1.20 ms per delivery)\n", b.String())

	b.Reset()
	writeWAL(&b, walStats{Bytes: 11 << 20, Flushes: 8000}, 2000)
	require.Equal(t, "  wal           5.6 KiB and 4.0 flushes per delivery (flush times need track_wal_io_timing)\n", b.String())

	b.Reset()
	writeWAL(&b, walStats{Bytes: 1 << 20}, 0)
	require.Empty(t, b.String(), "nothing per delivery without a delivery")
}

func TestWriteBySecondGivesTheMedianAndWorstP99OfTheSeconds(t *testing.T) {
	var b strings.Builder
	writeBySecond(&b, durations{9 * time.Millisecond, 10 * time.Millisecond, 11 * time.Millisecond, 48 * time.Millisecond})
	require.Equal(t, "  by second     p99 of the deliveries posted in each second: median 10ms, worst 48ms (4 seconds)\n", b.String())

	b.Reset()
	writeBySecond(&b, nil)
	require.Empty(t, b.String())
}

func TestWritePostgresCPUSplitsItBetweenTheSessionsOfTheApiAndTheWorkers(t *testing.T) {
	var b strings.Builder
	writePostgresCPU(&b, result{Delivered: 2000, CPUPostgres: 1400 * time.Millisecond,
		CPUPostgresSessions: map[string]time.Duration{"bothy-api": 520 * time.Millisecond, "bothy-worker": 860 * time.Millisecond, "psql": 10 * time.Millisecond}})
	require.Equal(t, "  postgres cpu  per delivery: the api's sessions 0.26 ms, the workers' sessions 0.43 ms, the rest 0.01 ms (background processes, other and closed sessions)\n", b.String())

	b.Reset()
	writePostgresCPU(&b, result{CPUPostgres: time.Second})
	require.Empty(t, b.String(), "nothing per delivery without a delivery")
}

func TestWriteRelativeCPUDividesBothyAndPostgresByTheBenchmarksOwn(t *testing.T) {
	var b strings.Builder
	writeRelativeCPU(&b, result{Delivered: 1000, CPUAPI: 250 * time.Millisecond, CPUWorkers: 300 * time.Millisecond,
		CPUPostgres: 650 * time.Millisecond, CPUBench: 160 * time.Millisecond})
	require.Equal(t, "  relative cpu  bothy and postgres 7.50 times the benchmark's own CPU per delivery (its work per delivery is fixed, so the machine's speed drops out)\n", b.String())

	b.Reset()
	writeRelativeCPU(&b, result{Delivered: 1000, CPUAPI: time.Second})
	require.Empty(t, b.String(), "nothing without the benchmark's CPU")
	writeRelativeCPU(&b, result{CPUBench: time.Second})
	require.Empty(t, b.String(), "nothing without a delivery")
}

func TestWriteCPUBoundGivesWhatTheCoresHoldAtTheCPUPerDelivery(t *testing.T) {
	var b strings.Builder
	r := result{Delivered: 1000, CPUAPI: 250 * time.Millisecond, CPUWorkers: 300 * time.Millisecond,
		CPUPostgres: 500 * time.Millisecond, CPUBench: 200 * time.Millisecond}
	writeCPUBound(&b, r, 2)
	require.Equal(t, "  cpu bound     2 cores busy all the time hold 1600.0 deliveries/s at this CPU per delivery "+
		"(bothy, postgres and the benchmark: 1.25 ms)\n", b.String())

	b.Reset()
	backlog := r
	backlog.Posting = &postingCPU{Messages: 1000, API: 200 * time.Millisecond, Postgres: 250 * time.Millisecond, Bench: 100 * time.Millisecond}
	writeCPUBound(&b, backlog, 2)
	require.Equal(t, "  cpu bound     2 cores busy all the time hold 2857.1 deliveries/s at this CPU per delivery once the messages "+
		"were posted (bothy, postgres and the benchmark: 0.70 ms)\n", b.String(), "the posting phase left out")

	b.Reset()
	rate := r
	rate.Shape.Rate = 200
	writeCPUBound(&b, rate, 2)
	require.Empty(t, b.String(), "nothing at a fixed rate, whose CPU per delivery holds the machine's cost at rest")
	writeCPUBound(&b, result{CPUAPI: time.Second}, 2)
	require.Empty(t, b.String(), "nothing without a delivery")
}

func TestWritePostingAloneGivesTheCPUPerMessageBeforeTheWorkersStarted(t *testing.T) {
	var b strings.Builder
	writePostingAlone(&b, result{Posting: &postingCPU{Messages: 2000, API: 500 * time.Millisecond,
		Postgres: 600 * time.Millisecond, Bench: 160 * time.Millisecond}}, 2)
	require.Equal(t, "  posting alone bothy api 0.25 ms, postgres 0.30 ms, the benchmark 0.08 ms of CPU per message before the "+
		"workers started: 2 cores busy all the time hold 3174.6 messages/s at this cost\n", b.String())

	b.Reset()
	writePostingAlone(&b, result{}, 2)
	require.Empty(t, b.String(), "nothing where the workers ran while the messages were posted")
	writePostingAlone(&b, result{Posting: &postingCPU{API: time.Second}}, 2)
	require.Empty(t, b.String(), "nothing without a message")
}

func TestWriteRSSGivesThePeaksOfTheApiAndTheLargestWorker(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	writeRSS(&b, result{APIRSS: 160 << 20, WorkerRSS: 176<<20 + 1<<19})
	require.Equal(t, "  api rss       peak 160.0 MiB\n  worker rss    peak 176.5 MiB\n", b.String())
}

func TestWriteStagesGivesEachStagesP50AndP99(t *testing.T) {
	t.Parallel()
	ms := func(ns ...float64) durations {
		out := make(durations, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n * float64(time.Millisecond))
		}
		return out
	}
	var b strings.Builder
	writeStages(&b, result{Stages: &stages{ToEvent: ms(1, 1.2, 3), ToRow: ms(2, 2, 9), ToReceipt: ms(3, 4, 20)}})
	require.Equal(t, "  stages        p50 / p99 of each delivery's way: post to its event 1.2ms / 3ms (the api), "+
		"event to its delivery row 2ms / 9ms (the post's commit, the wake-up, the round's reads), "+
		"row to receipt 4ms / 20ms (the round's commit, the run's lock, claim and commit, the request)\n", b.String())

	b.Reset()
	writeStages(&b, result{})
	require.Empty(t, b.String(), "nothing without the rows")
	writeStages(&b, result{Stages: &stages{}})
	require.Empty(t, b.String(), "nothing without a delivery")
}

func TestWriteMachineGivesTheSharesOfTheCoresTime(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	writeMachine(&b, result{Machine: machineTicks{Busy: 710, Idle: 120, Steal: 170}})
	require.Equal(t, "  machine       of the cores' time over the phase: 71 % busy, 12 % idle, 17 % stolen by the hypervisor\n", b.String())

	b.Reset()
	writeMachine(&b, result{})
	require.Empty(t, b.String(), "nothing without a reading")
}

func TestWriteSummaryGivesTheHangShareAlsoAtEachRunsSpeed(t *testing.T) {
	t0 := time.Unix(1000, 0)
	res := func(name string, delivered int, benchCPU time.Duration) result {
		return result{Shape: shape{Name: name}, Posted: delivered, Expected: delivered, Delivered: delivered,
			DeliverFrom: t0, LastArrival: t0.Add(10 * time.Second), CPUBench: benchCPU}
	}
	var b strings.Builder
	fleet := res("fleet", 1000, time.Second)
	fleet.CPUAPI, fleet.CPUWorkers, fleet.CPUPostgres = 2*time.Second, 3*time.Second, 2500*time.Millisecond
	writeSummary(&b, []result{fleet, res("hang", 900, 1080*time.Millisecond)}, time.Minute)
	require.Contains(t, b.String(), "| PostgreSQL CPU ms/delivery | relative CPU |\n", "the relative CPU is the last column")
	require.Contains(t, b.String(), "| 5.00 | 2.50 | 7.50 |\n", "bothy, PostgreSQL and their multiple of the benchmark's own")
	require.Contains(t, b.String(), "| 0.00 | 0.00 | 0.00 |\n", "no CPU of the processes under test: a multiple of 0")
	require.Contains(t, b.String(), "\nhang: the subscriptions that answer at once reached 90% of the fleet's deliveries/s, "+
		"108% at the speed the machine had in each run (deliveries/s times the benchmark's own CPU per delivery)\n")

	b.Reset()
	writeSummary(&b, []result{res("fleet", 1000, 0), res("hang", 900, time.Second)}, time.Minute)
	require.Contains(t, b.String(), "\nhang: the subscriptions that answer at once reached 90% of the fleet's deliveries/s\n")
	require.Contains(t, b.String(), "| 0.00 | 0.00 | - |\n", "no multiple without the benchmark's CPU")
}

func TestWritePairsGivesEachSidesRunsAndTheRatioOfTheMedians(t *testing.T) {
	t0 := time.Unix(1000, 0)
	run := func(name, side string, pair int, rel float64, benchMS float64, p50 time.Duration) result {
		bench := time.Duration(benchMS * float64(time.Millisecond) * 1000)
		return result{Shape: shape{Name: name}, Side: side, Pair: pair, Posted: 1000, Expected: 1000, Delivered: 1000,
			DeliverFrom: t0, LastArrival: t0.Add(time.Second), CPUBench: bench,
			CPUPostgres: time.Duration(rel * float64(bench)), Latency: durations{p50, p50, p50},
			APIRSS: uint64(100+pair) << 20, WorkerRSS: uint64(150+pair) << 20,
			Machine: machineTicks{Busy: 90, Idle: 10 - uint64(pair), Steal: uint64(pair)}}
	}
	results := []result{
		run("fleet", "A", 1, 7.0, 0.20, 40*time.Millisecond), run("fleet", "B", 1, 6.3, 0.20, 80*time.Millisecond),
		run("fleet", "B", 2, 6.1, 0.10, 70*time.Millisecond), run("fleet", "A", 2, 6.8, 0.10, 30*time.Millisecond),
	}
	var b strings.Builder
	writePairs(&b, []side{{Name: "A", Bothy: "bin/bothy"}, {Name: "B", Bothy: "bin/bothy", Env: []string{"BOTHY_CONSUMER_GATHER_PAUSE=50ms"}}}, results)
	require.Equal(t, `
pairs (the order alternates: A first in odd pairs, B in even ones)
  A: bin/bothy
  B: bin/bothy BOTHY_CONSUMER_GATHER_PAUSE=50ms

| scenario | side | relative CPU | median | deliveries/s at each run's speed | p50 | stolen | peak RSS api; worker (MiB) |
|---|---|---|---|---|---|---|---|
| fleet | A | 7.00, 6.80 | 6.90 | 200.0, 100.0 | 40ms, 30ms | 1 %, 2 % | 101.0; 151.0, 102.0; 152.0 |
| fleet | B | 6.30, 6.10 | 6.20 | 200.0, 100.0 | 80ms, 70ms | 1 %, 2 % | 101.0; 151.0, 102.0; 152.0 |

fleet: B's relative CPU is 0.899 times A's (medians)
`, b.String())

	b.Reset()
	writePairs(&b, []side{{Bothy: "bin/bothy"}}, []result{run("fleet", "", 0, 7, 0.2, time.Millisecond)})
	require.Empty(t, b.String(), "nothing without pairs")
}

func TestWriteSummaryNamesTheSideAndPairOfEachRun(t *testing.T) {
	t0 := time.Unix(1000, 0)
	res := func(side string, pair int) result {
		return result{Shape: shape{Name: "fleet"}, Side: side, Pair: pair, Posted: 10, Expected: 10, Delivered: 10,
			DeliverFrom: t0, LastArrival: t0.Add(time.Second), CPUBench: time.Second}
	}
	var b strings.Builder
	writeSummary(&b, []result{res("A", 1), res("B", 1), {Shape: shape{Name: "hang"}, Side: "A", Pair: 1, Delivered: 9,
		Expected: 9, DeliverFrom: t0, LastArrival: t0.Add(time.Second), CPUBench: time.Second}}, time.Minute)
	require.Contains(t, b.String(), "| fleet (A, pair 1) |")
	require.Contains(t, b.String(), "| fleet (B, pair 1) |")
	require.NotContains(t, b.String(), "hang: the subscriptions", "no hang share across sides")
}
