package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"bothy/server/cmd/internal/localrun"
	"bothy/server/internal/platform/config"
	"bothy/server/internal/wire"
)

// The people and names of the benchmark's world (white label: example.com,
// Alex, Sam and Robin).
const (
	ownerEmail = "robin@example.com"
	ownerName  = "Robin"
	eventType  = "message.created"
	// pollEvery is the pause between two looks at the receiver's counts.
	pollEvery = 20 * time.Millisecond
	// maxPostErrors ends the posting of a scenario after this many failed
	// posts: the API is broken, not slow.
	maxPostErrors = 20
)

// bench is one run of the benchmark: the cluster, the receiver and the
// options shared by every scenario.
type bench struct {
	opt    options
	pg     *cluster
	recv   *receiver
	caFile string
	// baseURL and baseMigrationURL are database.url and
	// database.migration_url of the configuration; each scenario swaps
	// the database name.
	baseURL, baseMigrationURL string
	// latencies receives every delivery's latency (-latency-file), nil
	// without the flag.
	latencies io.Writer
	// log is the event log the template starts with (-log-age).
	log agedLog
}

// post is one message the generator posted.
type post struct {
	ID      string
	Channel int
	Start   time.Time // when the request was sent
}

// result is what one scenario measured.
type result struct {
	Shape shape
	// Side and Pair name the side and the pair of a run of -pairs (D-BE-16);
	// empty and 0 without it.
	Side     string
	Pair     int
	Posted   int
	PostErrs int
	// PostStart is when the first post was sent, PostEnd when the last
	// answer came.
	PostStart, PostEnd time.Time
	// DeliverFrom is when delivery could start: the first post, or the
	// start of the workers in the backlog scenario.
	DeliverFrom time.Time
	Expected    int
	Delivered   int
	LastArrival time.Time
	Duplicates  int
	Violations  int
	HungSeen    int
	Refused     int
	Latency     durations
	// BySecond is the p99 latency of the deliveries posted in each second
	// of the scenario, sorted (secondP99s).
	BySecond durations
	TimedOut bool
	// CPU per part over the measured phase.
	CPUAPI, CPUWorkers, CPUPostgres, CPUBench time.Duration
	// CPUPostgresSessions is the part of CPUPostgres that the backends of
	// living sessions used, by the sessions' application_name
	// (sessionTicks).
	CPUPostgresSessions map[string]time.Duration
	// Stages splits the latency of each delivery at its event and its
	// row (D-BE-18); nil for a run that ended before it was read.
	Stages *stages
	// Machine is the time of the machine's cores over the measured phase.
	Machine machineTicks
	// APIRSS is the peak resident set of the api process, WorkerRSS the
	// largest of the worker processes'.
	APIRSS, WorkerRSS uint64
	Statements        []statement
	// WAL is what the cluster wrote to its WAL and flushed over the
	// measured phase.
	WAL walStats
	// Posting is the CPU of the posting phase alone, where the workers
	// start after it (the backlog scenario); nil elsewhere.
	Posting *postingCPU
}

// postingCPU is the CPU the api process, the cluster and the benchmark
// used while Messages were posted and no worker ran.
type postingCPU struct {
	Messages             int
	API, Postgres, Bench time.Duration
}

// posters are the people who post, each a member of Support with write;
// poster goroutine i posts as posters[i % len(posters)], so no single
// person's row takes every message's key share, as on a real instance.
var posters = []struct{ email, name string }{
	{"alex@example.com", "Alex"},
	{"sam@example.com", "Sam"},
}

// world is what the REST API set up for a scenario: the tokens of the
// posters (never printed) and the channel IDs.
type world struct {
	posters  []string
	channels []string
}

// runAll runs the scenarios named in opt one after another and writes
// each report; with -pairs it runs each scenario as both sides in
// interleaved pairs (pairOrder). An error of one run is reported and the
// next runs. It returns the results of the runs that ended and the first
// error.
func (b *bench) runAll(ctx context.Context) ([]result, error) {
	var results []result
	var firstErr error
	sides := b.opt.sides()
	for _, sh := range b.opt.counts.scenarios() {
		if !b.opt.wants(sh.Name) {
			continue
		}
		for pair := range max(b.opt.pairs, 1) {
			for _, s := range pairOrder(sides, pair) {
				label, p := sh.Name, 0
				if s.Name != "" {
					label, p = fmt.Sprintf("%s (side %s, pair %d)", sh.Name, s.Name, pair+1), pair+1
				}
				if ctx.Err() != nil {
					fmt.Fprintf(b.opt.out, "\nscenario %s: skipped, the run's -timeout is up\n", label)
					continue
				}
				fmt.Fprintf(b.opt.out, "\nscenario %s: %s\n", label, sh.describe())
				res, err := b.runScenario(ctx, sh, s, p)
				if err != nil {
					fmt.Fprintf(b.opt.out, "  FAILED: %v\n", err)
					if firstErr == nil {
						firstErr = fmt.Errorf("scenario %s: %w", label, err)
					}
					continue
				}
				writeResult(b.opt, res)
				results = append(results, res)
			}
		}
	}
	return results, firstErr
}

// pairOrder returns the order in which the sides run in pair i (from 0):
// as given in even pairs, reversed in odd ones, so neither side always
// runs first, on a machine whose speed drifts from run to run.
func pairOrder(sides []side, i int) []side {
	out := slices.Clone(sides)
	if i%2 == 1 {
		slices.Reverse(out)
	}
	return out
}

// runScenario runs one scenario as side s (its bothy binary and
// configuration keys) on a fresh copy of the template database and
// removes the copy again; pair is the run's pair, from 1 (0 without
// -pairs).
func (b *bench) runScenario(ctx context.Context, sh shape, s side, pair int) (res result, err error) {
	res.Shape, res.Side, res.Pair = sh, s.Name, pair
	db := "bench_" + strings.ReplaceAll(sh.Name, "-", "_")
	_ = b.pg.dropDB(ctx, db)
	if err := b.pg.createDB(ctx, db); err != nil {
		return res, err
	}
	defer func() {
		if dropErr := b.pg.dropDB(context.WithoutCancel(ctx), db); err == nil && dropErr != nil {
			err = dropErr
		}
	}()
	overrides, err := b.environ(db)
	if err != nil {
		return res, err
	}
	// exec keeps the last value of a key, wire.Load the first: the
	// scenario's own keys win over the side's, which win over the caller's.
	procEnv := slices.Concat(os.Environ(), s.Env, overrides)
	loadEnv := slices.Concat(overrides, s.Env, os.Environ())
	cfg, err := wire.Load(b.opt.configFile, loadEnv)
	if err != nil {
		return res, err
	}

	var procs []*bothyProc
	defer func() {
		b.recv.reset(-1) // hung requests go, so the workers stop at once
		for i := len(procs) - 1; i >= 0; i-- {
			if stopErr := procs[i].stop(); err == nil && stopErr != nil {
				err = stopErr
			}
		}
	}()
	apiProc, err := startBothy(ctx, s.Bothy, b.opt.configFile, b.opt.workDir, "api", procEnv)
	if err != nil {
		return res, err
	}
	procs = append(procs, apiProc)
	api := localrun.NewClient(apiProc.apiAddr, b.opt.posters+2)
	defer api.Close()
	setupStart := time.Now()
	w, err := b.setUp(ctx, cfg, api, sh)
	if err != nil {
		return res, err
	}
	fmt.Fprintf(b.opt.out, "  set-up        %d apps installed and granted, %d channels, through the REST API in %s\n",
		sh.Apps, sh.Channels, time.Since(setupStart).Round(time.Millisecond))

	b.recv.reset(sh.Hung)
	startWorkers := func() ([]*bothyProc, error) {
		var ws []*bothyProc
		for range sh.Workers {
			p, err := startBothy(ctx, s.Bothy, b.opt.configFile, b.opt.workDir, "worker", procEnv)
			if err != nil {
				return ws, err
			}
			ws = append(ws, p)
		}
		return ws, nil
	}
	var workers []*bothyProc
	if !sh.Backlog {
		ws, err := startWorkers()
		procs = append(procs, ws...)
		workers = ws
		if err != nil {
			return res, err
		}
	}

	// The measured phase starts here.
	if err := b.pg.resetStatements(ctx, db); err != nil {
		return res, err
	}
	if err := b.pg.resetWAL(ctx); err != nil {
		return res, err
	}
	cpu0 := b.snapshotCPU(procs)
	limit := b.opt.scenarioTimeout
	if sh.Rate > 0 {
		limit += time.Duration(float64(sh.Messages) / float64(sh.Rate) * float64(time.Second))
	}
	sctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	postLimit := sctx
	if sh.Backlog {
		var cancelPost context.CancelFunc
		postLimit, cancelPost = context.WithTimeout(sctx, limit/2)
		defer cancelPost()
	}
	posts, postErrs, err := b.postAll(postLimit, api, w, sh, procs)
	res.Posted, res.PostErrs = len(posts), postErrs
	if err != nil {
		return res, err
	}
	if len(posts) == 0 {
		return res, errors.New("no message was posted")
	}
	res.PostStart, res.PostEnd = posts[0].Start, time.Now()
	for _, p := range posts {
		res.PostStart = minTime(res.PostStart, p.Start)
	}
	res.DeliverFrom = res.PostStart
	if sh.Backlog {
		posted := b.snapshotCPU(procs)
		res.Posting = &postingCPU{Messages: len(posts), API: ticksToDuration(posted.procs[apiProc] - cpu0.procs[apiProc]),
			Postgres: ticksToDuration(posted.postgres - cpu0.postgres), Bench: ticksToDuration(posted.bench - cpu0.bench)}
		res.DeliverFrom = time.Now()
		ws, err := startWorkers()
		procs = append(procs, ws...)
		workers = ws
		if err != nil {
			return res, err
		}
	}
	for _, p := range posts {
		res.Expected += sh.subscribers(p.Channel)
	}
	res.TimedOut = !b.waitDelivered(sctx, res.Expected, procs)

	cpu1 := b.snapshotCPU(procs)
	res.APIRSS = apiProc.highWater()
	for _, p := range workers {
		res.WorkerRSS = max(res.WorkerRSS, p.highWater())
	}
	res.CPUAPI = ticksToDuration(cpu1.procs[apiProc] - cpu0.procs[apiProc])
	for _, p := range workers {
		res.CPUWorkers += ticksToDuration(cpu1.procs[p] - cpu0.procs[p])
	}
	res.CPUPostgres = ticksToDuration(cpu1.postgres - cpu0.postgres)
	res.CPUBench = ticksToDuration(cpu1.bench - cpu0.bench)
	res.Machine = cpu1.machine.since(cpu0.machine)
	// The processes still run, so their sessions are still open.
	names, err := b.pg.sessionNames(context.WithoutCancel(ctx))
	if err != nil {
		return res, err
	}
	res.CPUPostgresSessions = map[string]time.Duration{}
	for name, ticks := range sessionTicks(cpu0.backends, cpu1.backends, names) {
		res.CPUPostgresSessions[name] = ticksToDuration(ticks)
	}
	// The run's -timeout may have ended the wait: what arrived is still
	// measured.
	if res.Statements, err = b.pg.readStatements(context.WithoutCancel(ctx), db); err != nil {
		return res, err
	}
	for i, s := range res.Statements {
		res.Statements[i].Name = b.opt.queryNames.of(s.Query)
	}
	if res.WAL, err = b.pg.readWAL(context.WithoutCancel(ctx)); err != nil {
		return res, err
	}

	unique, dups, violations, hungSeen, refused := b.recv.counts()
	res.Delivered, res.Duplicates, res.Violations, res.HungSeen, res.Refused = unique, dups, violations, hungSeen, refused
	started := make(map[string]time.Time, len(posts))
	for _, p := range posts {
		started[p.ID] = p.Start
	}
	arrivals := b.recv.taken()
	if b.latencies != nil {
		name := sh.Name
		if s.Name != "" {
			name = fmt.Sprintf("%s-%s%d", sh.Name, s.Name, pair) // one CSV field: no comma
		}
		if err := writeLatencies(b.latencies, name, arrivals, started); err != nil {
			return res, err
		}
	}
	var lat []time.Duration
	var posted []time.Time
	for _, a := range arrivals {
		res.LastArrival = maxTime(res.LastArrival, a.At)
		if t, ok := started[a.MessageID]; ok {
			lat, posted = append(lat, a.At.Sub(t)), append(posted, t)
		}
	}
	res.Latency = summarize(lat)
	events, err := b.pg.readEventTimes(context.WithoutCancel(ctx), db)
	if err != nil {
		return res, err
	}
	st := splitStages(arrivals, started, events)
	res.Stages = &st
	res.BySecond = secondP99s(res.PostStart, posted, lat)
	return res, nil
}

// environ returns the configuration keys a scenario's processes get on top
// of the file and the caller's BOTHY_ variables: the scenario's database
// and the receiver's host and CA.
func (b *bench) environ(db string) ([]string, error) {
	swap := func(raw string) (string, error) {
		u, err := url.Parse(raw)
		if err != nil {
			return "", errors.New("database.url or database.migration_url does not parse")
		}
		u.Path = "/" + db
		return u.String(), nil
	}
	appURL, err := swap(b.baseURL)
	if err != nil {
		return nil, err
	}
	ownerURL, err := swap(b.baseMigrationURL)
	if err != nil {
		return nil, err
	}
	return []string{
		config.EnvName("database.url") + "=" + appURL,
		config.EnvName("database.migration_url") + "=" + ownerURL,
		config.EnvName("webhook.allowed_hosts") + "=" + b.recv.hostPort(),
		config.EnvName("egress.allowed_hosts") + "=" + b.recv.hostPort() + ";allow_private",
		config.EnvName("egress.extra_ca_file") + "=" + b.caFile,
	}, nil
}

// setUp builds the scenario's world through the REST API, as an owner
// would: Robin (the first owner, from the identity bootstrap) creates the
// space Support, the posters (Alex and Sam) as its members with write and
// sh.Channels channels, then registers, installs and grants sh.Apps apps,
// each with the subscription its manifest gives it; the posters sign in to
// post.
func (b *bench) setUp(ctx context.Context, cfg *wire.Config, api *localrun.Client, sh shape) (world, error) {
	var w world
	password, err := localrun.CreateOwner(ctx, cfg, "bothy-bench", ownerEmail, ownerName)
	if err != nil {
		return w, err
	}
	robin, err := api.SignIn(ctx, ownerEmail, password)
	if err != nil {
		return w, err
	}
	var space idOnly
	if err := api.Call(ctx, "createSpace", robin, http.MethodPost, "/spaces", map[string]any{"name": "Support"}, &space, http.StatusCreated); err != nil {
		return w, err
	}
	passwords := make([]string, len(posters))
	for i, p := range posters {
		passwords[i] = localrun.GeneratePassword()
		var person idOnly
		if err := api.Call(ctx, "createPerson", robin, http.MethodPost, "/people",
			map[string]any{"email": p.email, "display_name": p.name, "password": passwords[i], "role": "member"}, &person, http.StatusCreated); err != nil {
			return w, err
		}
		if err := api.Call(ctx, "addSpaceMember", robin, http.MethodPost, "/spaces/"+space.ID+"/members",
			map[string]any{"person_id": person.ID, "level": "write"}, nil, http.StatusCreated); err != nil {
			return w, err
		}
	}
	for i := range sh.Channels {
		var ch idOnly
		if err := api.Call(ctx, "createChannel", robin, http.MethodPost, "/spaces/"+space.ID+"/channels",
			map[string]any{"name": fmt.Sprintf("Eskalation %03d", i)}, &ch, http.StatusCreated); err != nil {
			return w, err
		}
		w.channels = append(w.channels, ch.ID)
	}
	for i := range sh.Apps {
		if err := b.installApp(ctx, api, robin, space.ID, w.channels[i%sh.Channels], i); err != nil {
			return w, err
		}
	}
	for i, p := range posters {
		token, err := api.SignIn(ctx, p.email, passwords[i])
		if err != nil {
			return w, err
		}
		w.posters = append(w.posters, token)
	}
	return w, nil
}

type idOnly struct {
	ID string `json:"id"`
}

// installApp registers app i (webhook delivery to the receiver's path of
// i), installs it, which creates the manifest's subscription, and grants
// it read on the channel.
func (b *bench) installApp(ctx context.Context, api *localrun.Client, robin, space, channel string, i int) error {
	scopes := []string{"events:subscribe", "messages:read"}
	manifest := map[string]any{
		"name":        fmt.Sprintf("Tracker %03d", i),
		"description": "Turns escalations into tickets.",
		"scopes":      scopes,
		"events":      []string{eventType},
		"delivery":    map[string]any{"mode": "webhook", "events_url": b.recv.url(i)},
	}
	var app idOnly
	if err := api.Call(ctx, "createApp", robin, http.MethodPost, "/apps", map[string]any{"manifest": manifest}, &app, http.StatusCreated); err != nil {
		return err
	}
	// The app token of the answer is a one-time secret the benchmark does
	// not need: the apps only receive.
	if err := api.Call(ctx, "installApp", robin, http.MethodPost, "/apps/"+app.ID+"/installation",
		map[string]any{"scopes": scopes, "event_subscriptions": []string{eventType}}, nil, http.StatusCreated); err != nil {
		return err
	}
	return api.Call(ctx, "createAppGrant", robin, http.MethodPost, "/apps/"+app.ID+"/grants",
		map[string]any{"space_id": space, "channel_id": channel, "level": "read"}, nil, http.StatusCreated)
}

// postAll posts sh.Messages messages as Alex, message j in channel j mod
// sh.Channels, with b.opt.posters concurrent posters: flat out, or each at
// its slot of sh.Rate per second (then a post's Start is its slot, not
// the moment a poster got to it). It stops early when ctx ends (the
// scenario's time), a process ends, or too many posts fail; the posts
// that succeeded are returned in no particular order.
func (b *bench) postAll(ctx context.Context, api *localrun.Client, w world, sh shape, procs []*bothyProc) ([]post, int, error) {
	text := messageText(b.opt.textBytes)
	// A job is message j with the time it is due: at the offered rate its
	// slot, flat out zero (the send time counts).
	type job struct {
		j   int
		due time.Time
	}
	jobs := make(chan job)
	go func() {
		defer close(jobs)
		start := time.Now()
		for j := range sh.Messages {
			var due time.Time
			if sh.Rate > 0 {
				due = start.Add(time.Duration(j) * time.Second / time.Duration(sh.Rate))
				if d := time.Until(due); d > 0 {
					select {
					case <-ctx.Done():
						return
					case <-time.After(d):
					}
				}
			}
			select {
			case <-ctx.Done():
				return
			case jobs <- job{j: j, due: due}:
			}
		}
	}()
	var (
		mu     sync.Mutex
		posts  = make([]post, 0, sh.Messages)
		failed atomic.Int64
		first  error
		wg     sync.WaitGroup
	)
	for i := range b.opt.posters {
		token := w.posters[i%len(w.posters)]
		wg.Go(func() {
			for jb := range jobs {
				if failed.Load() >= maxPostErrors {
					continue
				}
				c := jb.j % sh.Channels
				start := time.Now()
				if !jb.due.IsZero() {
					// At a fixed rate the latency counts from the slot, so
					// a post that waited for a free poster shows its wait
					// (no coordinated omission).
					start = jb.due
				}
				var msg idOnly
				err := api.Call(ctx, "postMessage", token, http.MethodPost, "/channels/"+w.channels[c]+"/messages",
					map[string]any{"text": text}, &msg, http.StatusCreated)
				mu.Lock()
				if err != nil {
					if ctx.Err() == nil {
						failed.Add(1)
						if first == nil {
							first = err
						}
					}
				} else {
					posts = append(posts, post{ID: msg.ID, Channel: c, Start: start})
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, p := range procs {
		if err := p.alive(); err != nil {
			return posts, int(failed.Load()), err
		}
	}
	if failed.Load() >= maxPostErrors {
		return posts, int(failed.Load()), fmt.Errorf("%d posts failed, the first: %w", failed.Load(), first)
	}
	return posts, int(failed.Load()), nil
}

// messageText returns a message text of n bytes (at least 16): the body of
// one delivery is then about n bytes plus the envelope.
func messageText(n int) string {
	const sentence = "The printer on floor 2 is down again, Sam is on it. "
	var sb strings.Builder
	for sb.Len() < max(n, 16) {
		sb.WriteString(sentence)
	}
	return sb.String()[:max(n, 16)]
}

// waitDelivered waits until the receiver has counted expected distinct
// deliveries, and reports whether they all came before ctx ended (the
// scenario's time). A process that ends early ends the wait too.
func (b *bench) waitDelivered(ctx context.Context, expected int, procs []*bothyProc) bool {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if unique, _, _, _, _ := b.recv.counts(); unique >= expected {
			return true
		}
		for _, p := range procs {
			if p.alive() != nil {
				return false
			}
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// cpuSnapshot holds the CPU ticks of every part at one moment.
type cpuSnapshot struct {
	procs    map[*bothyProc]uint64
	postgres uint64
	// backends is each living child's of the postmaster, by PID.
	backends map[int]uint64
	bench    uint64
	// machine is the time of all the machine's cores (zero when
	// /proc/stat could not be read).
	machine machineTicks
}

// snapshotCPU reads the CPU ticks of the bothy processes, the cluster and
// the benchmark itself (its load generator and receiver).
func (b *bench) snapshotCPU(procs []*bothyProc) cpuSnapshot {
	s := cpuSnapshot{procs: map[*bothyProc]uint64{}}
	for _, p := range procs {
		s.procs[p] = p.cpu()
	}
	s.postgres, s.backends, _ = b.pg.cpu()
	if self, err := readStat(os.Getpid()); err == nil {
		s.bench = self.Self
	}
	s.machine, _ = readMachine()
	return s
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
