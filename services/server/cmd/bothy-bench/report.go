package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// writeHeader writes the machine, the date, the load and the settings of
// the run, so the figures can be put beside others.
func writeHeader(o options, b *bench) {
	w := o.out
	fmt.Fprintf(w, "bothy end-to-end benchmark, %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(w, "machine: %d cores (%s), %s memory, load average %s, %s/%s\n",
		runtime.NumCPU(), cpuModel(), memTotal(), loadAverage(), runtime.GOOS, runtime.GOARCH)
	stmts := "off (the cluster did not load it)"
	if b.pg.statements {
		stmts = "on"
	}
	fmt.Fprintf(w, "scale %g, %d posters, %d-byte texts, %s per scenario, pg_stat_statements %s\n",
		o.counts.Scale, o.posters, o.textBytes, o.scenarioTimeout, stmts)
	if o.warmWALSegments > 0 {
		fmt.Fprintf(w, "WAL: %d segments made and recycled before the first scenario\n", o.warmWALSegments)
	}
	if b.log.Events > 0 {
		fmt.Fprintf(w, "event log: %s of it before the first scenario, %d events in %d partitions, the webhooks consumer at its head\n",
			b.log.Age, b.log.Events, b.log.Partitions)
	} else {
		fmt.Fprintln(w, "event log: fresh (-log-age 0)")
	}
	answers := "at once"
	if b.recv.delay > 0 {
		answers = "after " + b.recv.delay.String()
	}
	fmt.Fprintf(w, "receiver https://%s on 127.0.0.1 (answers 204 %s, does not verify signatures)\n", b.recv.hostPort(), answers)
}

// writeResult writes the report of one scenario, with the top statements
// as o asks for.
func writeResult(o options, r result) {
	w := o.out
	ingest := r.PostEnd.Sub(r.PostStart)
	fmt.Fprintf(w, "  posted        %d messages in %s: ingest %s messages/s", r.Posted, round(ingest), perSecond(r.Posted, ingest))
	if r.PostErrs > 0 {
		fmt.Fprintf(w, " (%d posts failed)", r.PostErrs)
	}
	if r.Posted < r.Shape.Messages {
		fmt.Fprintf(w, " (%d of %d: the scenario's time was up)", r.Posted, r.Shape.Messages)
	}
	fmt.Fprintln(w)
	span := r.LastArrival.Sub(r.DeliverFrom)
	from := "the first post"
	if r.Shape.Backlog {
		from = "the start of the workers"
	}
	fmt.Fprintf(w, "  delivered     %d of %d in %s from %s: %s deliveries/s", r.Delivered, r.Expected, round(span), from, perSecond(r.Delivered, span))
	if r.TimedOut {
		fmt.Fprintf(w, "  INCOMPLETE (the scenario's time was up)")
	}
	fmt.Fprintln(w)
	l := r.Latency
	fmt.Fprintf(w, "  latency       post to receipt p50 %s, p90 %s, p99 %s, max %s\n",
		round(l.percentile(50)), round(l.percentile(90)), round(l.percentile(99)), round(l.max()))
	if r.Shape.Rate > 0 {
		writeBySecond(w, r.BySecond)
	}
	fmt.Fprintf(w, "  order         %d violations (per subscription, by the event seq); %d duplicates (same webhook-id twice)\n", r.Violations, r.Duplicates)
	if r.Shape.Hung >= 0 {
		fmt.Fprintf(w, "  hung app      %d requests held until the sender gave up\n", r.HungSeen)
	}
	if r.Refused > 0 {
		fmt.Fprintf(w, "  refused       %d requests the receiver could not read\n", r.Refused)
	}
	fmt.Fprintf(w, "  cpu/delivery  bothy api %s, worker %s, postgres %s (the benchmark itself %s)\n",
		perDelivery(r.CPUAPI, r.Delivered), perDelivery(r.CPUWorkers, r.Delivered), perDelivery(r.CPUPostgres, r.Delivered), perDelivery(r.CPUBench, r.Delivered))
	writePostgresCPU(w, r)
	writeRelativeCPU(w, r)
	writeCPUBound(w, r, runtime.NumCPU())
	writePostingAlone(w, r, runtime.NumCPU())
	fmt.Fprintf(w, "  cpu total     bothy api %s, worker %s, postgres %s, benchmark %s\n", round(r.CPUAPI), round(r.CPUWorkers), round(r.CPUPostgres), round(r.CPUBench))
	writeStages(w, r)
	writeMachine(w, r)
	writeRSS(w, r)
	writeWAL(w, r.WAL, r.Delivered)
	writeStatements(w, r.Statements, r.Delivered, o.topStatements, o.queryWidth)
}

// writeStages writes the p50 and p99 of each stage of the deliveries'
// way (stages, D-BE-18); nothing without them.
func writeStages(w io.Writer, r result) {
	if r.Stages == nil || r.Stages.ToReceipt.count() == 0 {
		return
	}
	st := r.Stages
	pair := func(d durations) string {
		return round(d.percentile(50)).String() + " / " + round(d.percentile(99)).String()
	}
	fmt.Fprintf(w, "  stages        p50 / p99 of each delivery's way: post to its event %s (the api), "+
		"event to its delivery row %s (the post's commit, the wake-up, the round's reads), "+
		"row to receipt %s (the round's commit, the run's lock, claim and commit, the request)\n",
		pair(st.ToEvent), pair(st.ToRow), pair(st.ToReceipt))
}

// writeMachine writes how the time of the machine's cores over the
// measured phase split into busy, idle and stolen by the hypervisor
// (machineTicks); nothing without a reading.
func writeMachine(w io.Writer, r result) {
	if r.Machine.total() == 0 {
		return
	}
	t := float64(r.Machine.total())
	fmt.Fprintf(w, "  machine       of the cores' time over the phase: %.0f %% busy, %.0f %% idle, %s stolen by the hypervisor\n",
		float64(r.Machine.Busy)/t*100, float64(r.Machine.Idle)/t*100, stolen(r.Machine))
}

// stolen renders the share of the cores' time m the hypervisor gave to
// other guests, "-" without a reading.
func stolen(m machineTicks) string {
	if m.total() == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", float64(m.Steal)/float64(m.total())*100)
}

// writeRSS writes the peak resident set of the api process and of the
// largest worker.
func writeRSS(w io.Writer, r result) {
	fmt.Fprintf(w, "  api rss       peak %s MiB\n", mebibytes(r.APIRSS))
	fmt.Fprintf(w, "  worker rss    peak %s MiB\n", mebibytes(r.WorkerRSS))
}

// mebibytes renders n bytes in MiB with one decimal.
func mebibytes(n uint64) string {
	return fmt.Sprintf("%.1f", float64(n)/(1<<20))
}

// writeBySecond writes the median and the largest of the p99s of the
// seconds of a scenario at a fixed rate (secondP99s).
func writeBySecond(w io.Writer, p99s durations) {
	if p99s.count() == 0 {
		return
	}
	fmt.Fprintf(w, "  by second     p99 of the deliveries posted in each second: median %s, worst %s (%d seconds)\n",
		round(p99s.percentile(50)), round(p99s.max()), p99s.count())
}

// writeWAL writes what the cluster wrote to its WAL per delivery and how
// often and how long commits waited for it to reach the disk: a wait
// every transaction that commits synchronously pays, in the path of a
// delivery or beside it.
func writeWAL(w io.Writer, s walStats, delivered int) {
	if delivered == 0 {
		return
	}
	d := float64(delivered)
	fmt.Fprintf(w, "  wal           %.1f KiB and %.1f flushes per delivery", float64(s.Bytes)/1024/d, float64(s.Flushes)/d)
	switch {
	case !s.Timed:
		fmt.Fprintf(w, " (flush times need track_wal_io_timing)\n")
	case s.Flushes > 0:
		fmt.Fprintf(w, ", %.2f ms a flush (%.2f ms per delivery)\n", s.FlushMS/float64(s.Flushes), s.FlushMS/d)
	default:
		fmt.Fprintln(w)
	}
}

// writeStatements writes the statement totals and the top statements per
// delivery: the first top of stmts (sorted by statement time), each with
// its time per call and its query's name, else its text cut to width
// characters.
func writeStatements(w io.Writer, stmts []statement, delivered, top, width int) {
	if stmts == nil || delivered == 0 {
		return
	}
	var calls, hit int64
	var ms, plan float64
	for _, s := range stmts {
		calls += s.Calls
		hit += s.SharedHit
		ms += s.TotalMS
		plan += s.PlanMS
	}
	d := float64(delivered)
	fmt.Fprintf(w, "  statements    %.1f per delivery, %.0f shared buffers hit, %.2f ms statement time, %.2f ms planning (posting included)\n",
		float64(calls)/d, float64(hit)/d, ms/d, plan/d)
	if top == 0 {
		return
	}
	// The time per call is the finer measure of a change to one
	// statement: the saturated machine inflates it, but a real change moves
	// it in every run of a pair (docs/benchmarks.md).
	fmt.Fprintf(w, "  top statements per delivery: calls, ms, ms a call, planning ms, buffers hit, query\n")
	for _, s := range stmts[:min(top, len(stmts))] {
		perCall := 0.0
		if s.Calls > 0 {
			perCall = s.TotalMS / float64(s.Calls)
		}
		fmt.Fprintf(w, "    %6.2f %7.3f %7.3f %7.3f %7.1f  %s\n", float64(s.Calls)/d, s.TotalMS/d, perCall, s.PlanMS/d,
			float64(s.SharedHit)/d, cmp.Or(s.Name, oneLine(s.Query, width)))
	}
}

// writeSummary writes one Markdown table row per scenario, the form of
// docs/benchmarks.md.
func writeSummary(w io.Writer, results []result, took time.Duration) {
	fmt.Fprintf(w, "\nsummary (%s in all)\n\n", round(took))
	fmt.Fprintln(w, "| scenario | messages | deliveries | ingest/s | deliveries/s | p50 | p90 | p99 | max | order violations | duplicates | bothy CPU ms/delivery | PostgreSQL CPU ms/delivery | relative CPU |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		l := r.Latency
		delivered := fmt.Sprintf("%d of %d", r.Delivered, r.Expected)
		if r.TimedOut {
			delivered += " (incomplete)"
		}
		relative := "-"
		if m, ok := relativeCPU(r); ok {
			relative = fmt.Sprintf("%.2f", m)
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %d | %d | %s | %s | %s |\n",
			r.label(), r.Posted, delivered, perSecond(r.Posted, r.PostEnd.Sub(r.PostStart)),
			perSecond(r.Delivered, r.LastArrival.Sub(r.DeliverFrom)),
			round(l.percentile(50)), round(l.percentile(90)), round(l.percentile(99)), round(l.max()),
			r.Violations, r.Duplicates,
			strings.TrimSuffix(perDelivery(r.CPUAPI+r.CPUWorkers, r.Delivered), " ms"),
			strings.TrimSuffix(perDelivery(r.CPUPostgres, r.Delivered), " ms"), relative)
	}
	paired := slices.ContainsFunc(results, func(r result) bool { return r.Side != "" })
	if share, ok := hangShares(results); ok && !paired {
		fmt.Fprintf(w, "\nhang: the subscriptions that answer at once reached %.0f%% of the fleet's deliveries/s", share.raw*100)
		if share.atSpeedKnown {
			fmt.Fprintf(w, ", %.0f%% at the speed the machine had in each run (deliveries/s times the benchmark's own CPU per delivery)", share.atSpeed*100)
		}
		fmt.Fprintln(w)
	}
}

// hangShare is what a hanging receiver costs the others: the hang
// scenario's deliveries/s as a share of the fleet's, as measured (raw)
// and at the speed the machine had in each run (atSpeed, when both runs
// know the benchmark's own CPU).
type hangShare struct {
	raw, atSpeed float64
	atSpeedKnown bool
}

// hangShares returns the hang scenario's share of the fleet's deliveries/s
// when both ran. The share at each run's speed multiplies each run's
// deliveries/s by the benchmark's own CPU per delivery, whose work per
// delivery is fixed (one post, one receipt), so a machine that ran one
// scenario slower than the other (the same build's fleet varies by a
// fifth from one run to the next on this machine, docs/benchmarks.md)
// leaves it as it is (D-BE-14).
func hangShares(results []result) (hangShare, bool) {
	byName := map[string]result{}
	for _, r := range results {
		byName[r.Shape.Name] = r
	}
	fleet, fok := deliveryRate(byName["fleet"])
	hang, hok := deliveryRate(byName["hang"])
	if !fok || !hok {
		return hangShare{}, false
	}
	share := hangShare{raw: hang / fleet}
	fs, fsok := atSpeed(byName["fleet"])
	hs, hsok := atSpeed(byName["hang"])
	if fsok && hsok {
		share.atSpeed, share.atSpeedKnown = hs/fs, true
	}
	return share, true
}

// deliveryRate returns r's deliveries/s over its delivery phase, and
// false without a delivery or a phase.
func deliveryRate(r result) (float64, bool) {
	span := r.LastArrival.Sub(r.DeliverFrom)
	if span <= 0 || r.Delivered == 0 {
		return 0, false
	}
	return float64(r.Delivered) / span.Seconds(), true
}

// atSpeed returns r's deliveries/s at the speed the machine had in its
// run: deliveries/s times the benchmark's own CPU per delivery in
// milliseconds, whose work per delivery is fixed (D-BE-14); false without
// a delivery rate or without the benchmark's CPU.
func atSpeed(r result) (float64, bool) {
	rate, ok := deliveryRate(r)
	if !ok || r.CPUBench <= 0 {
		return 0, false
	}
	return rate * float64(r.CPUBench) / float64(time.Millisecond) / float64(r.Delivered), true
}

// label names a run in the summary: the scenario, with its side and pair
// under -pairs.
func (r result) label() string {
	if r.Side == "" {
		return r.Shape.Name
	}
	return fmt.Sprintf("%s (%s, pair %d)", r.Shape.Name, r.Side, r.Pair)
}

// writePairs writes the comparison of -pairs (D-BE-16): per scenario and
// side, the relative CPU of each run in pair order and their median, the
// deliveries/s at each run's speed (deliveries/s times the benchmark's
// own CPU per delivery, D-BE-14), the p50s, the share of the cores' time
// the hypervisor stole (D-BE-17) and the peak resident sets of the api
// process and the largest worker, then B's median relative
// CPU as a multiple of A's. It writes nothing unless there are two sides.
func writePairs(w io.Writer, sides []side, results []result) {
	if len(sides) != 2 {
		return
	}
	first, second := sides[0], sides[1]
	fmt.Fprintf(w, "\npairs (the order alternates: %s first in odd pairs, %s in even ones)\n", first.Name, second.Name)
	for _, s := range sides {
		fmt.Fprintf(w, "  %s: %s\n", s.Name, strings.Join(append([]string{s.Bothy}, s.Env...), " "))
	}
	fmt.Fprintln(w, "\n| scenario | side | relative CPU | median | deliveries/s at each run's speed | p50 | stolen | peak RSS api; worker (MiB) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	var scenarios []string
	for _, r := range results {
		if !slices.Contains(scenarios, r.Shape.Name) {
			scenarios = append(scenarios, r.Shape.Name)
		}
	}
	medians := map[string]map[string]float64{}
	for _, name := range scenarios {
		medians[name] = map[string]float64{}
		for _, s := range sides {
			var runs []result
			for _, r := range results {
				if r.Shape.Name == name && r.Side == s.Name {
					runs = append(runs, r)
				}
			}
			slices.SortStableFunc(runs, func(a, b result) int { return a.Pair - b.Pair })
			var rel []float64
			var relText, speedText, p50Text, stolenText, rssText []string
			for _, r := range runs {
				m, ok := relativeCPU(r)
				if ok {
					rel = append(rel, m)
					relText = append(relText, fmt.Sprintf("%.2f", m))
				} else {
					relText = append(relText, "-")
				}
				speed := "-"
				if v, ok := atSpeed(r); ok {
					speed = fmt.Sprintf("%.1f", v)
				}
				speedText = append(speedText, speed)
				p50Text = append(p50Text, round(r.Latency.percentile(50)).String())
				stolenText = append(stolenText, stolen(r.Machine))
				rssText = append(rssText, mebibytes(r.APIRSS)+"; "+mebibytes(r.WorkerRSS))
			}
			median := "-"
			if len(rel) > 0 {
				medians[name][s.Name] = medianOf(rel)
				median = fmt.Sprintf("%.2f", medians[name][s.Name])
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", name, s.Name, strings.Join(relText, ", "), median,
				strings.Join(speedText, ", "), strings.Join(p50Text, ", "), strings.Join(stolenText, ", "), strings.Join(rssText, ", "))
		}
	}
	fmt.Fprintln(w)
	for _, name := range scenarios {
		a, aok := medians[name][first.Name]
		b, bok := medians[name][second.Name]
		if aok && bok && a > 0 {
			fmt.Fprintf(w, "%s: %s's relative CPU is %.3f times %s's (medians)\n", name, second.Name, b/a, first.Name)
		}
	}
}

// medianOf returns the median of v, the mean of the middle two for an
// even count; v is not empty.
func medianOf(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// perSecond renders n per d as a rate; "-" when d is not positive.
func perSecond(n int, d time.Duration) string {
	if d <= 0 || n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(n)/d.Seconds())
}

// writePostgresCPU writes how PostgreSQL's CPU per delivery splits
// between the sessions of the api process and those of the workers (by
// their application_name), and the rest: the background processes, the
// sessions of other clients and those closed during the phase, whose
// backends' time the postmaster took over. It writes nothing without a
// delivery or without the split (a result the phase did not reach).
func writePostgresCPU(w io.Writer, r result) {
	if r.Delivered == 0 || r.CPUPostgresSessions == nil {
		return
	}
	api, workers := r.CPUPostgresSessions[apiSessions], r.CPUPostgresSessions[workerSessions]
	rest := max(r.CPUPostgres-api-workers, 0)
	fmt.Fprintf(w, "  postgres cpu  per delivery: the api's sessions %s, the workers' sessions %s, the rest %s (background processes, other and closed sessions)\n",
		perDelivery(api, r.Delivered), perDelivery(workers, r.Delivered), perDelivery(rest, r.Delivered))
}

// writeRelativeCPU writes the CPU of bothy and PostgreSQL per delivery
// as a multiple of the benchmark's own (its load generator and receiver).
// The benchmark does the same work per delivery in every run of a
// scenario (one post, or a share of one, and one receipt), so its CPU per
// delivery moves with the machine's speed, and the multiple keeps what
// the processes under test cost with the machine's speed left out: two
// builds compare on it in fewer runs than on deliveries/s (D-BE-14). It
// writes nothing without a delivery or without the benchmark's CPU.
func writeRelativeCPU(w io.Writer, r result) {
	if m, ok := relativeCPU(r); ok {
		fmt.Fprintf(w, "  relative cpu  bothy and postgres %.2f times the benchmark's own CPU per delivery (its work per delivery is fixed, so the machine's speed drops out)\n", m)
	}
}

// relativeCPU returns the CPU of bothy (api and workers) and PostgreSQL
// over the phase divided by the benchmark's own (writeRelativeCPU), and
// false without a delivery or without the benchmark's CPU.
func relativeCPU(r result) (float64, bool) {
	if r.Delivered == 0 || r.CPUBench <= 0 {
		return 0, false
	}
	return float64(r.CPUAPI+r.CPUWorkers+r.CPUPostgres) / float64(r.CPUBench), true
}

// writeCPUBound writes how many deliveries a second the machine's cores
// would hold at the scenario's CPU per delivery of bothy, PostgreSQL and
// the benchmark together, were they all busy all the time: the most this
// machine, which also runs the load generator and the receiver, gets out
// of an engine that costs as much per delivery (D-BE-15). Where the
// workers started after the posts (result.Posting), it is the CPU of the
// delivery phase alone, as that scenario's deliveries/s is. It writes
// nothing without a delivery, and nothing for a scenario at a fixed rate,
// whose CPU per delivery holds the machine's cost at rest and misses what
// batching flat out saves.
func writeCPUBound(w io.Writer, r result, cores int) {
	if r.Delivered == 0 || r.Shape.Rate > 0 {
		return
	}
	cpu, phase := r.CPUAPI+r.CPUWorkers+r.CPUPostgres+r.CPUBench, ""
	if p := r.Posting; p != nil {
		cpu -= p.API + p.Postgres + p.Bench
		phase = " once the messages were posted"
	}
	ms, held, ok := coresHold(cores, cpu, r.Delivered)
	if !ok {
		return
	}
	fmt.Fprintf(w, "  cpu bound     %d cores busy all the time hold %.1f deliveries/s at this CPU per delivery%s (bothy, postgres and the benchmark: %.2f ms)\n",
		cores, held, phase, ms)
}

// coresHold returns the CPU per unit of cpu spent on n units, in
// milliseconds, and how many units a second cores hold at that cost, busy
// all the time; false without a unit or without CPU.
func coresHold(cores int, cpu time.Duration, n int) (ms, perSecond float64, ok bool) {
	if n <= 0 || cpu <= 0 {
		return 0, 0, false
	}
	per := float64(cpu) / float64(n)
	return per / float64(time.Millisecond), float64(cores) * float64(time.Second) / per, true
}

// writePostingAlone writes the CPU per message of a posting phase in
// which no worker ran (result.Posting, the backlog scenario) and how many
// messages a second the machine's cores would hold at that cost, busy all
// the time: a scenario that posts and delivers at once delivers no faster
// than the machine ingests with nothing else to do (D-BE-15). It writes
// nothing without such a phase or without a message.
func writePostingAlone(w io.Writer, r result, cores int) {
	p := r.Posting
	if p == nil {
		return
	}
	_, held, ok := coresHold(cores, p.API+p.Postgres+p.Bench, p.Messages)
	if !ok {
		return
	}
	fmt.Fprintf(w, "  posting alone bothy api %s, postgres %s, the benchmark %s of CPU per message before the workers started: %d cores busy all the time hold %.1f messages/s at this cost\n",
		perDelivery(p.API, p.Messages), perDelivery(p.Postgres, p.Messages), perDelivery(p.Bench, p.Messages), cores, held)
}

// apiSessions and workerSessions are the application_name of the
// sessions of the api and worker processes (wire.Process names its pool
// "bothy-" and its role).
const (
	apiSessions    = "bothy-api"
	workerSessions = "bothy-worker"
)

// perDelivery renders cpu divided by n deliveries in milliseconds.
func perDelivery(cpu time.Duration, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f ms", float64(cpu)/float64(time.Millisecond)/float64(n))
}

// round shortens a duration for the report: to 0.1 ms below a second, to
// 10 ms above.
func round(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(10 * time.Millisecond)
}

// oneLine collapses the white space of a statement and cuts it to width.
func oneLine(q string, width int) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > width {
		return q[:width-3] + "..."
	}
	return q
}

// cpuModel returns the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	raw, _ := os.ReadFile("/proc/cpuinfo")
	for line := range strings.Lines(string(raw)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// memTotal returns MemTotal of /proc/meminfo in GiB.
func memTotal() string {
	raw, _ := os.ReadFile("/proc/meminfo")
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%f kB", &kb); err == nil {
				return fmt.Sprintf("%.1f GiB", kb/(1<<20))
			}
		}
	}
	return "unknown"
}

// loadAverage returns the three load averages of /proc/loadavg.
func loadAverage() string {
	raw, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// latencyHeader is the first line of the -latency-file.
const latencyHeader = "scenario,posted_unix_us,latency_us,app\n"

// writeLatencies writes one CSV line per arrival of scenario whose message
// started has (the hung app's and early arrivals' are all there): the
// scenario, when the message was posted (its slot at a fixed rate) in
// microseconds since the epoch, the latency from then to the receipt in
// microseconds and the app's index. It is for reading a tail by time:
// whether the slow deliveries cluster (a stall) or spread (load).
func writeLatencies(w io.Writer, scenario string, arrivals []arrival, started map[string]time.Time) error {
	var sb strings.Builder
	for _, a := range arrivals {
		if t, ok := started[a.MessageID]; ok {
			fmt.Fprintf(&sb, "%s,%d,%d,%d\n", scenario, t.UnixMicro(), a.At.Sub(t).Microseconds(), a.Sub)
		}
	}
	if _, err := io.WriteString(w, sb.String()); err != nil {
		return fmt.Errorf("writing -latency-file: %w", err)
	}
	return nil
}
