package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"bothy/server/internal/platform/pg"
)

// The queues of bothy (docs/spec/02-architecture.md 12.2). Every handler
// runs in one of them; roles worker and all work all three.
const (
	// QueueDefault is for jobs without a queue of their own.
	QueueDefault = "default"
	// QueueDelivery carries outgoing deliveries such as apps.webhook_deliver;
	// its own workers keep slow receivers from starving other jobs.
	QueueDelivery = "delivery"
	// QueueMaintenance carries periodic upkeep such as event log partitions
	// and key rotation.
	QueueMaintenance = "maintenance"
)

// Queues returns the names of every queue.
func Queues() []string { return []string{QueueDefault, QueueDelivery, QueueMaintenance} }

// QueueOptions configure one queue in roles worker and all.
type QueueOptions struct {
	// MaxWorkers is jobs.queue.<name>.max_workers: how many jobs of the
	// queue this process runs at once. At least 1.
	MaxWorkers int
}

// Options configure a Runtime. Durations and counts come from configuration;
// none has a default in code.
type Options struct {
	// Role is the process role of serve --role. In role api the runtime only
	// inserts jobs: it works no queue, runs no periodic job and never leads
	// River's maintenance. Roles worker and all work every queue.
	Role string
	// Queues holds jobs.queue.<name>.max_workers for every name of Queues();
	// required in roles worker and all, ignored in role api.
	Queues map[string]QueueOptions
	// FetchPollInterval is jobs.fetch_poll_interval: how often a producer
	// looks for jobs when no notification came. An inserted job normally
	// wakes a producer at once through LISTEN/NOTIFY at commit; this is the
	// fallback and so the worst case from commit to pickup. At least
	// FetchCooldown. Required in every role.
	FetchPollInterval time.Duration
	// FetchCooldown is jobs.fetch_cooldown: the least time between two
	// fetches of one queue, and between two insert notifications of one
	// queue from one process. Keep it small (milliseconds) for the webhook
	// path. At least one millisecond. Required in every role.
	FetchCooldown time.Duration
	// JobTimeout is jobs.job_timeout: the deadline of a handler's context
	// unless its HandlerOptions.Timeout says otherwise. Positive.
	JobTimeout time.Duration
	// ShutdownTimeout is jobs.shutdown_timeout: how long Stop lets running
	// jobs finish before it cancels their contexts. Positive.
	ShutdownTimeout time.Duration
	// InProcessStartFallback is jobs.in_process_start_fallback: how long
	// after its insert a job started in process (InsertOptions
	// StartInProcess) is due for River, which runs it then if the start
	// did not end it (a crash before the start, a failed start). Positive
	// in roles worker and all.
	InProcessStartFallback time.Duration
}

// Deps are the collaborators of a Runtime.
type Deps struct {
	// Pool connects as bothy_app; River's schema is already migrated by
	// pg.Migrate. Required.
	Pool *pgxpool.Pool
	// Log receives job failures and River's own messages. Required.
	Log *slog.Logger
	// Tracer makes the span job.work around every handler; nil means no
	// tracing.
	Tracer trace.TracerProvider
	// Meter makes bothy.job.finished, bothy.job.duration and
	// bothy.job.queue.depth; nil means no metrics.
	Meter metric.MeterProvider
}

// Runtime is the job system of one process: handlers registered with
// Register and RegisterPeriodic, an Inserter for use cases, and in roles
// worker and all the River client that works the queues between Start and
// Stop. Registration closes when the runtime first inserts or starts.
type Runtime struct {
	o   Options
	d   Deps
	ins *Inserter
	tel telemetry
	// depth is the gauge bothy.job.queue.depth (QueueDepth).
	depth *QueueDepth
	// local are the jobs started in process (InsertOptions.StartInProcess).
	local *inProcess

	mu       sync.RWMutex
	kinds    map[string]HandlerOptions
	starters map[string]starter // per kind, for in-process starts
	workers  *river.Workers
	periodic []*river.PeriodicJob
	client   *river.Client[pgx.Tx] // built on first use; registration closes then
	started  bool
	startCtx context.Context // its cancellation stops River like Stop does

	stopOnce sync.Once
	stopping chan struct{}
}

// New checks o and d and returns a runtime with no handler. It connects to
// nothing until the first insert or Start. The error names the configuration
// key at fault.
func New(o Options, d Deps) (*Runtime, error) {
	if d.Pool == nil || d.Log == nil {
		return nil, errors.New("jobs: New needs a pool and a logger")
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	if d.Tracer == nil {
		d.Tracer = tracenoop.NewTracerProvider()
	}
	if d.Meter == nil {
		d.Meter = metricnoop.NewMeterProvider()
	}
	tel, err := newTelemetry(d)
	if err != nil {
		return nil, err
	}
	depth, err := newQueueDepth(d.Pool, d.Meter)
	if err != nil {
		return nil, err
	}
	r := &Runtime{
		o:        o,
		d:        d,
		tel:      tel,
		depth:    depth,
		kinds:    map[string]HandlerOptions{},
		starters: map[string]starter{},
		local:    newInProcess(o),
		workers:  river.NewWorkers(),
		stopping: make(chan struct{}),
	}
	r.ins = &Inserter{r: r}
	return r, nil
}

func (o Options) works() bool { return o.Role == "worker" || o.Role == "all" }

func (o Options) check() error {
	switch o.Role {
	case "api", "worker", "all":
	default:
		return errors.New("jobs: role must be api, worker or all")
	}
	switch {
	case o.FetchCooldown < river.FetchCooldownMin:
		return fmt.Errorf("jobs: jobs.fetch_cooldown must be at least %s", river.FetchCooldownMin)
	case o.FetchPollInterval < o.FetchCooldown:
		return errors.New("jobs: jobs.fetch_poll_interval must be at least jobs.fetch_cooldown")
	}
	if !o.works() {
		return nil
	}
	for name := range o.Queues {
		if !slices.Contains(Queues(), name) {
			return fmt.Errorf("jobs: jobs.queue.%s is not a queue of bothy", name)
		}
	}
	for _, name := range Queues() {
		if o.Queues[name].MaxWorkers < 1 {
			return fmt.Errorf("jobs: jobs.queue.%s.max_workers must be at least 1", name)
		}
	}
	switch {
	case o.JobTimeout <= 0:
		return errors.New("jobs: jobs.job_timeout must be positive")
	case o.ShutdownTimeout <= 0:
		return errors.New("jobs: jobs.shutdown_timeout must be positive")
	case o.InProcessStartFallback <= 0:
		return errors.New("jobs: jobs.in_process_start_fallback must be positive")
	}
	return nil
}

// Registered returns the options a kind was registered with, so wiring
// tests can check kind and queue.
func (r *Runtime) Registered(kind string) (HandlerOptions, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	o, ok := r.kinds[kind]
	return o, ok
}

// Inserter returns the inserter that use cases take to schedule jobs.
func (r *Runtime) Inserter() *Inserter { return r.ins }

// riverClient returns the River client, building it on first use. From then
// on the set of kinds is fixed.
func (r *Runtime) riverClient() (*river.Client[pgx.Tx], error) {
	r.mu.RLock()
	c := r.client
	r.mu.RUnlock()
	if c != nil {
		return c, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client != nil {
		return r.client, nil
	}
	cfg := &river.Config{
		Logger:  r.d.Log,
		Workers: r.workers,
		// In every role FetchCooldown also limits how often inserts notify a
		// queue: River sends at most one notification per queue and cooldown.
		FetchCooldown:     r.o.FetchCooldown,
		FetchPollInterval: r.o.FetchPollInterval,
		// River's reindexer rebuilds its indexes by name once a day; two of
		// them are dropped by a migration (ADR 0086).
		ReindexerIndexNames: reindexedIndexes(),
	}
	if r.o.works() {
		cfg.Queues = make(map[string]river.QueueConfig, len(Queues()))
		for _, name := range Queues() {
			cfg.Queues[name] = river.QueueConfig{MaxWorkers: r.o.Queues[name].MaxWorkers}
		}
		cfg.JobTimeout = r.o.JobTimeout
		cfg.SoftStopTimeout = r.o.ShutdownTimeout
		cfg.PeriodicJobs = r.periodic
	}
	c, err := river.NewClient(riverpgxv5.New(r.d.Pool), cfg)
	if err != nil {
		return nil, fmt.Errorf("jobs: building the River client: %w", err)
	}
	r.client = c
	return c, nil
}

// reindexedIndexes returns the indexes River's reindexer rebuilds: River's
// defaults but those a migration dropped (pg.RiverDroppedIndexes), which
// River would otherwise warn about at every run.
func reindexedIndexes() []string {
	dropped := pg.RiverDroppedIndexes()
	return slices.DeleteFunc(river.ReindexerIndexNamesDefault(), func(name string) bool {
		return slices.Contains(dropped, name)
	})
}

// Start closes registration and, in roles worker and all, begins working
// the queues; in role api it works nothing. Jobs committed before Start are
// worked too. ctx bounds the start and, when cancelled, begins the same
// graceful stop as Stop.
func (r *Runtime) Start(ctx context.Context) error {
	c, err := r.riverClient()
	if err != nil {
		return err
	}
	if !r.o.works() {
		return nil
	}
	if err := c.Start(ctx); err != nil {
		return fmt.Errorf("jobs: starting River: %w", err)
	}
	r.mu.Lock()
	r.started, r.startCtx = true, ctx
	r.mu.Unlock()
	return nil
}

// Stopping returns a channel that is closed once Stop begins: from then on
// River fetches no more jobs after the fetch it may have in flight, so a
// caller (a drain test) can act while a graceful stop is under way.
func (r *Runtime) Stopping() <-chan struct{} { return r.stopping }

// isStopping reports whether Stop was called or the context of Start ended.
func (r *Runtime) isStopping() bool {
	select {
	case <-r.stopping:
		return true
	default:
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.startCtx != nil && r.startCtx.Err() != nil
}

// Stop stops fetching and starting jobs in process, lets running jobs
// (River's and those started in process) finish for up to
// jobs.shutdown_timeout, then cancels their contexts and waits for their
// handlers to return. A cancelled job is retried later by whichever process
// works its queue. ctx bounds the whole wait; when it ends first, Stop
// returns its error. Stop may be called more than once and before Start.
func (r *Runtime) Stop(ctx context.Context) error {
	r.stopOnce.Do(func() { close(r.stopping) })
	local := make(chan error, 1)
	go func() { local <- r.local.stop(ctx, r.o.ShutdownTimeout) }()
	r.mu.RLock()
	c, started := r.client, r.started
	r.mu.RUnlock()
	var err error
	if started {
		if serr := c.Stop(ctx); serr != nil {
			err = fmt.Errorf("jobs: stopping River: %w", serr)
		}
	}
	if lerr := <-local; lerr != nil && err == nil {
		err = fmt.Errorf("jobs: stopping the jobs started in process: %w", lerr)
	}
	return err
}
