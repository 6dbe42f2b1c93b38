// Command bothy-bench is `make bench-e2e`: the end-to-end benchmark of
// outgoing webhooks. It runs bothy as an operator does, one `bothy serve
// --role api` and one or more `bothy serve --role worker` processes
// against a PostgreSQL 18 cluster, an HTTPS receiver on 127.0.0.1 and a
// load generator that posts messages through the REST API, and prints per
// scenario deliveries/s, ingest/s, the latency from post to receipt, order
// violations, duplicates, the CPU per delivery of bothy and PostgreSQL and,
// with pg_stat_statements, the top statements per delivery.
//
// The cluster must run and the database `bothy` be migrated; every
// scenario runs on a copy of it (tools/bench/e2e.sh does all of that):
//
//	bothy-bench --bothy bin/bothy --config bench.yaml --admin-url-file admin_url --pg-data DIR/data
//
// It exits 0 when every scenario ran (the figures may miss their targets:
// it measures, it does not judge), 1 when one failed to run, 2 for a wrong
// invocation.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"bothy/server/internal/wire"
)

// ScaleEnv is the environment variable that scales every message count
// when -scale is not given (0.01 runs everything small).
const ScaleEnv = "BENCH_E2E_SCALE"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the parsed flags.
type options struct {
	bothy, configFile, adminURLFile, pgData, workDir string
	latencyFile                                      string
	posters, textBytes                               int
	warmWALSegments                                  int
	logAge                                           time.Duration
	receiverDelay                                    time.Duration
	logEventsPerDay                                  int
	topStatements, queryWidth                        int
	scenarioTimeout, timeout                         time.Duration
	counts                                           counts
	only                                             []string
	out                                              io.Writer
	// pairs is how many interleaved pairs of runs of each scenario compare
	// side A (bothy, envA) with side B (bothyB, envB); 0 runs each
	// scenario once, as side A without a name (D-BE-16).
	pairs      int
	bothyB     string
	envA, envB envList
	// queryNames names the listed statements by their queries (-queries);
	// nil names none.
	queryNames queryNames
}

// side is what one side of a comparison runs: a bothy binary and the
// configuration keys (BOTHY_ variables) its processes get on top of the
// run's. Name is "A" or "B", or empty without -pairs.
type side struct {
	Name  string
	Bothy string
	Env   []string
}

// sides returns the sides the scenarios run as: one without -pairs, A and
// B with it (B runs -bothy unless -bothy-b names another binary).
func (o options) sides() []side {
	if o.pairs == 0 {
		return []side{{Bothy: o.bothy}}
	}
	b := o.bothyB
	if b == "" {
		b = o.bothy
	}
	return []side{{Name: "A", Bothy: o.bothy, Env: o.envA}, {Name: "B", Bothy: b, Env: o.envB}}
}

// envList is a repeatable flag of KEY=VALUE pairs; a value may hold
// commas, as configuration lists do.
type envList []string

// String implements flag.Value.
func (l *envList) String() string { return strings.Join(*l, " ") }

// Set implements flag.Value: it accepts one BOTHY_ variable, KEY=VALUE,
// the way docs/operations/configuration.md names a key in the
// environment.
func (l *envList) Set(v string) error {
	key, _, ok := strings.Cut(v, "=")
	if !ok || !strings.HasPrefix(key, "BOTHY_") || key == "BOTHY_" {
		return fmt.Errorf("%q is not BOTHY_KEY=VALUE", v)
	}
	*l = append(*l, v)
	return nil
}

// wants reports whether scenario name runs.
func (o options) wants(name string) bool { return len(o.only) == 0 || slices.Contains(o.only, name) }

// parseOptions parses args; getenv supplies BENCH_E2E_SCALE. An error
// names the flag at fault.
func parseOptions(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("bothy-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.bothy, "bothy", "bin/bothy", "the bothy `binary` to run")
	fs.StringVar(&o.configFile, "config", os.Getenv(wire.ConfigEnv), "configuration `file` of the bothy processes (database, secrets)")
	fs.StringVar(&o.adminURLFile, "admin-url-file", "", "`file` holding the superuser URL of the cluster (never printed)")
	fs.StringVar(&o.pgData, "pg-data", "", "data `directory` of the cluster (postmaster.pid: its CPU)")
	fs.StringVar(&o.workDir, "work-dir", os.TempDir(), "`directory` for the process logs and the receiver's CA file")
	fs.StringVar(&o.latencyFile, "latency-file", "", "CSV `file` with every delivery's post time and latency (none when empty)")
	fs.IntVar(&o.posters, "posters", 8, "concurrent posters of the load generator")
	fs.IntVar(&o.textBytes, "text-bytes", 1000, "bytes of each message text (the delivery body is about 1 KiB more than the envelope)")
	fs.DurationVar(&o.scenarioTimeout, "scenario-timeout", 50*time.Second, "time of one scenario for posting and delivering (the rate scenario gets its posting time on top)")
	fs.DurationVar(&o.timeout, "timeout", 9*time.Minute, "upper bound of the whole run; scenarios not started by then are skipped")
	fs.IntVar(&o.counts.Apps, "apps", 100, "apps (one subscription each) of the fleet, fan-out, rate, backlog, two-workers and hang scenarios")
	fs.IntVar(&o.counts.Fleet, "fleet-messages", 20000, "messages of the fleet scenario")
	fs.IntVar(&o.counts.FanOut, "fanout-messages", 2000, "messages of the fan-out scenario (each goes to every app)")
	fs.IntVar(&o.counts.Hot, "hot-messages", 5000, "messages of the hot scenario (one subscription)")
	fs.IntVar(&o.counts.Rate, "rate", 200, "messages per second offered in the rate scenario")
	fs.DurationVar(&o.counts.RateDuration, "rate-duration", 60*time.Second, "how long the rate scenario offers its rate")
	fs.IntVar(&o.counts.Backlog, "backlog-messages", 20000, "messages posted before the worker starts in the backlog scenario")
	fs.IntVar(&o.counts.TwoWorkers, "two-workers-messages", 20000, "messages of the two-workers scenario")
	fs.IntVar(&o.counts.Hang, "hang-messages", 20000, "messages of the hang scenario")
	fs.IntVar(&o.warmWALSegments, "warm-wal-segments", 64, "WAL `segments` the cluster makes and recycles before the first scenario, as a server that ran through checkpoints keeps them (0: none)")
	fs.DurationVar(&o.logAge, "log-age", 30*24*time.Hour, "age of the event log every scenario starts with, as a server that ran that long keeps it (at most sync.event_retention; 0: a fresh log)")
	fs.IntVar(&o.logEventsPerDay, "log-events-per-day", 10000, "events a day in the aged event log of -log-age")
	fs.DurationVar(&o.receiverDelay, "receiver-delay", 0, "how long the receiver takes to answer each delivery, as a receiver across a network that does some work first (0: at once; below webhook.delivery_timeout)")
	fs.IntVar(&o.topStatements, "top-statements", 10, "statements the report lists per scenario, by statement time (0 lists none)")
	fs.IntVar(&o.queryWidth, "query-width", 90, "characters of each listed statement's text")
	queries := fs.String("queries", "", "the server module's internal `directory`: each listed statement of a query of its sqlc-generated files is named by the query's name (default none: the text)")
	scale := fs.String("scale", "", "multiply every message count and the rate duration by this `factor` (default $"+ScaleEnv+", else 1)")
	fs.IntVar(&o.pairs, "pairs", 0, "run each scenario in this many interleaved `pairs` of side A (-bothy, -env-a) and side B (-bothy-b, -env-b), A first in odd pairs, and compare them on the relative CPU (0: each scenario once)")
	fs.StringVar(&o.bothyB, "bothy-b", "", "the bothy `binary` of side B (default -bothy)")
	fs.Var(&o.envA, "env-a", "a configuration key for side A's processes, `BOTHY_KEY=VALUE` (repeatable)")
	fs.Var(&o.envB, "env-b", "a configuration key for side B's processes, `BOTHY_KEY=VALUE` (repeatable)")
	only := fs.String("scenarios", "", "comma-separated `names` to run (default all: "+strings.Join(scenarioNames(), ",")+")")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, errors.New("no arguments expected; see -h")
	}
	rawScale := *scale
	if rawScale == "" {
		rawScale = getenv(ScaleEnv)
	}
	o.counts.Scale = 1
	if rawScale != "" {
		f, err := strconv.ParseFloat(rawScale, 64)
		if err != nil || f <= 0 || f > 100 {
			return o, fmt.Errorf("-scale (or %s) must be a number above 0 and at most 100", ScaleEnv)
		}
		o.counts.Scale = f
	}
	if *only != "" {
		for name := range strings.SplitSeq(*only, ",") {
			if !slices.Contains(scenarioNames(), name) {
				return o, fmt.Errorf("-scenarios: unknown scenario %q (known: %s)", name, strings.Join(scenarioNames(), ","))
			}
			o.only = append(o.only, name)
		}
	}
	for _, c := range []struct {
		name string
		v    int
	}{
		{"-posters", o.posters}, {"-apps", o.counts.Apps}, {"-rate", o.counts.Rate},
		{"-fleet-messages", o.counts.Fleet}, {"-fanout-messages", o.counts.FanOut}, {"-hot-messages", o.counts.Hot},
		{"-backlog-messages", o.counts.Backlog}, {"-two-workers-messages", o.counts.TwoWorkers}, {"-hang-messages", o.counts.Hang},
	} {
		if c.v < 1 {
			return o, fmt.Errorf("%s must be at least 1", c.name)
		}
	}
	if o.counts.Apps < 2 {
		return o, errors.New("-apps must be at least 2 (the hang scenario keeps one app hanging)")
	}
	if o.warmWALSegments < 0 {
		return o, errors.New("-warm-wal-segments must be at least 0")
	}
	if o.logAge < 0 || o.logEventsPerDay < 1 {
		return o, errors.New("-log-age must be at least 0 and -log-events-per-day at least 1")
	}
	if o.receiverDelay < 0 {
		return o, errors.New("-receiver-delay must be at least 0")
	}
	if o.topStatements < 0 || o.queryWidth < 20 {
		return o, errors.New("-top-statements must be at least 0 and -query-width at least 20")
	}
	if *queries != "" {
		names, err := readQueryNames(*queries)
		if err != nil {
			return o, err
		}
		o.queryNames = names
	}
	if o.textBytes < 16 || o.textBytes > 16384 {
		return o, errors.New("-text-bytes must be 16 to 16384")
	}
	if o.scenarioTimeout <= 0 || o.timeout <= 0 || o.counts.RateDuration <= 0 {
		return o, errors.New("-scenario-timeout, -timeout and -rate-duration must be above 0")
	}
	if o.pairs < 0 {
		return o, errors.New("-pairs must be at least 0")
	}
	if o.pairs == 0 && (o.bothyB != "" || len(o.envA) > 0 || len(o.envB) > 0) {
		return o, errors.New("-bothy-b, -env-a and -env-b need -pairs")
	}
	if o.adminURLFile == "" || o.pgData == "" {
		return o, errors.New("-admin-url-file and -pg-data are required")
	}
	return o, nil
}

// run parses the flags, runs the benchmark and returns the exit status.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "bothy-bench: %v\n", err)
		return 2
	}
	o.out = stdout
	if err := benchmark(ctx, o); err != nil {
		fmt.Fprintf(stdout, "FAIL: %v\n", err)
		return 1
	}
	return 0
}

// benchmark prepares the cluster and the receiver, runs the scenarios and
// writes the summary.
func benchmark(ctx context.Context, o options) error {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	rawURL, err := os.ReadFile(o.adminURLFile)
	if err != nil {
		return fmt.Errorf("reading -admin-url-file: %w", err)
	}
	base, err := wire.Load(o.configFile, os.Environ())
	if err != nil {
		return err
	}
	b := &bench{opt: o, baseURL: base.Database.URL, baseMigrationURL: base.Database.MigrationURL,
		pg: &cluster{adminURL: strings.TrimSpace(string(rawURL)), dataDir: o.pgData}}
	if err := b.pg.prepare(ctx); err != nil {
		return err
	}
	if err := b.pg.warmWAL(ctx, o.warmWALSegments); err != nil {
		return err
	}
	if b.log, err = b.pg.ageLog(ctx, templateDB, o.logAge, o.logEventsPerDay, logShape{
		Interval: base.Sync.PartitionInterval, Ahead: base.Sync.PartitionAhead, Retention: base.Sync.EventRetention,
	}); err != nil {
		return err
	}
	if o.latencyFile != "" {
		f, err := os.Create(o.latencyFile)
		if err != nil {
			return fmt.Errorf("creating -latency-file: %w", err)
		}
		defer func() { _ = f.Close() }()
		if _, err := io.WriteString(f, latencyHeader); err != nil {
			return fmt.Errorf("writing -latency-file: %w", err)
		}
		b.latencies = f
	}
	if o.receiverDelay >= base.Webhook.DeliveryTimeout {
		return fmt.Errorf("-receiver-delay %s must be below webhook.delivery_timeout (%s), or every attempt times out", o.receiverDelay, base.Webhook.DeliveryTimeout)
	}
	if b.recv, err = newReceiver(o.receiverDelay); err != nil {
		return err
	}
	b.recv.Start()
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		b.recv.stop(stopCtx)
	}()
	b.caFile = filepath.Join(o.workDir, "receiver-ca.pem")
	if err := os.WriteFile(b.caFile, b.recv.CAPEM, 0o600); err != nil {
		return fmt.Errorf("writing the receiver's CA certificate: %w", err)
	}
	writeHeader(o, b)
	start := time.Now()
	results, err := b.runAll(ctx)
	writeSummary(o.out, results, time.Since(start))
	writePairs(o.out, o.sides(), results)
	return err
}
