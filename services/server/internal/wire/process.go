package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"bothy/server/internal/apps/adapters/deliveryjobs"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/platform/egress"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/idempotencypg"
	"bothy/server/internal/platform/jobs"
	"bothy/server/internal/platform/otel"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/secrets"
	eventsync "bothy/server/internal/sync"
	syncpg "bothy/server/internal/sync/adapters/postgres"
	syncapp "bothy/server/internal/sync/app"
)

// Role is the role of a bothy process (docs/spec/02-architecture.md 3.2).
type Role string

// The roles.
const (
	// RoleAPI serves the HTTP API and inserts jobs, but works none.
	RoleAPI Role = "api"
	// RoleWorker runs the event-log consumers and works the job queues.
	RoleWorker Role = "worker"
	// RoleAll is both in one process, for small installations and `make run`.
	RoleAll Role = "all"
)

// ParseRole returns the role named s.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleAPI, RoleWorker, RoleAll:
		return r, nil
	}
	return "", errors.New("role must be api, worker or all")
}

// works reports whether the role runs consumers and works job queues.
func (r Role) works() bool { return r == RoleWorker || r == RoleAll }

// serves reports whether the role serves the public HTTP API.
func (r Role) serves() bool { return r == RoleAPI || r == RoleAll }

// Process is one assembled bothy process: every module built once, wired to
// the configuration, ready to Run.
type Process struct {
	role  Role
	cfg   *Config
	log   *slog.Logger
	clock clock.Clock
	deps  Deps
	// ready is what /readyz answers before it asks the database
	// (lifecycle.go).
	ready readiness

	tel       *otel.Telemetry
	secrets   *secrets.Provider
	pool      *pgxpool.Pool
	uow       *pg.UnitOfWork
	jobs      *jobs.Runtime
	consumers *syncapp.Consumers
	partition *syncpg.Maintainer
	api       *httpserver.Server
	modules   *Modules

	closers []func()
}

// Deps are the outside parts a process runs with. Production passes the
// real ones; tests pass a fake clock or capture logs.
type Deps struct {
	// Log receives every log line (already filtered by otel.NewLogHandler).
	Log *slog.Logger
	// Clock is the source of now; nil means the real clock.
	Clock clock.Clock
	// TraceWriter receives spans when otel.traces_exporter is stdout.
	TraceWriter io.Writer
	// Resolver resolves webhook target hosts; nil means the system
	// resolver (the demo passes a fixed one).
	Resolver egress.Resolver
	// After is the timer of the start-up backoff, the drain delay
	// (http.drain_delay) and the check of egress.extra_ca_file; nil means
	// time.After. Tests pass a fake to step through them without waiting.
	After func(time.Duration) <-chan time.Time
}

// NewProcess assembles a process of role from cfg: telemetry, the database
// pool (as bothy_app), the unit of work, the job runtime with every job kind
// registered (in every role, because the api role inserts jobs too), the
// event-log consumers (roles worker and all), and the HTTP server. It opens
// connections but starts nothing; Run starts it. On error every opened
// resource is closed again.
func NewProcess(ctx context.Context, cfg *Config, role Role, d Deps) (_ *Process, err error) {
	if d.Clock == nil {
		d.Clock = clock.Real{}
	}
	p := &Process{role: role, cfg: cfg, log: d.Log, clock: d.Clock, deps: d}
	defer func() {
		if err != nil {
			p.close()
		}
	}()

	if p.tel, err = otel.Setup(ctx, otel.Options{
		Role:           string(role),
		TracesExporter: cfg.OTel.TracesExporter,
		OTLPEndpoint:   cfg.OTel.OTLPEndpoint,
		TraceWriter:    d.TraceWriter,
	}); err != nil {
		return nil, err
	}
	p.closers = append(p.closers, func() { _ = p.tel.Shutdown(context.WithoutCancel(ctx)) })

	if p.secrets, err = NewSecretsProvider(cfg); err != nil {
		return nil, err
	}
	// Serving: Run waits for the database (database.startup_wait) with
	// the operator listener up, so /readyz can say why the role is not
	// ready; the connections open and warm in the background (ADR 0096).
	if p.pool, err = openAppPool(ctx, cfg, p.secrets, "bothy-"+string(role), true); err != nil {
		return nil, err
	}
	p.closers = append(p.closers, p.pool.Close)
	// The job runtime comes first: the modules insert jobs through it.
	if err := p.buildJobs(); err != nil {
		return nil, err
	}
	if p.modules, err = BuildModules(cfg, ModuleDeps{
		Pool: p.pool, Secrets: p.secrets, Clock: p.clock, Meter: p.meter(), Jobs: p.jobs.Inserter(),
		Tracer: p.tracer(), Logger: p.log, Resolver: d.Resolver,
	}); err != nil {
		return nil, err
	}
	p.uow = p.modules.UnitOfWork
	// Every role registers the delivery job (the api role inserts it on
	// subscription changes and redeliveries); the worker roles also run the
	// consumer webhooks, registered before the runner starts.
	if err := deliveryjobs.RegisterWebhookDeliver(p.jobs, p.modules.Deliveries, cfg.Webhook.JobMaxAttempts); err != nil {
		return nil, err
	}

	if err := p.buildSync(); err != nil {
		return nil, err
	}
	if err := p.buildHTTP(ctx); err != nil {
		return nil, err
	}
	if err := jobs.Register(p.jobs, func(ctx context.Context, _ jobs.Job[keyRotation]) error {
		_, err := p.modules.Instance.RotateDue(ctx, p.clock.Now())
		return err
	}, jobs.HandlerOptions{Queue: jobs.QueueMaintenance}); err != nil {
		return nil, err
	}
	if err := p.jobs.RegisterPeriodic(cfg.Jobs.MaintenanceInterval, keyRotation{}); err != nil {
		return nil, err
	}
	if err := p.jobs.RegisterPeriodic(cfg.Jobs.MaintenanceInterval, partitionMaintenance{}); err != nil {
		return nil, err
	}
	if err := p.registerRetention(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Process) tracer() trace.TracerProvider { return p.tel.TracerProvider }
func (p *Process) meter() metric.MeterProvider  { return p.tel.MeterProvider }

func (p *Process) buildJobs() error {
	rt, err := jobs.New(jobs.Options{
		Role:              string(p.role),
		Queues:            p.cfg.Jobs.QueueOptions(),
		FetchPollInterval: p.cfg.Jobs.FetchPollInterval,
		FetchCooldown:     p.cfg.Jobs.FetchCooldown,
		JobTimeout:        p.cfg.Jobs.JobTimeout,
		ShutdownTimeout:   p.cfg.Jobs.ShutdownTimeout,

		InProcessStartFallback: p.cfg.Jobs.InProcessStartFallback,
	}, jobs.Deps{Pool: p.pool, Log: p.log, Tracer: p.tracer(), Meter: p.meter()})
	if err != nil {
		return err
	}
	p.jobs = rt
	return nil
}

func (p *Process) buildSync() error {
	var err error
	p.partition, err = syncpg.NewMaintainer(p.pool, syncpg.MaintainerOptions{
		PartitionInterval: p.cfg.Sync.PartitionInterval,
		PartitionAhead:    p.cfg.Sync.PartitionAhead,
		EventRetention:    p.cfg.Sync.EventRetention,
	})
	if err != nil {
		return err
	}
	if err := jobs.Register(p.jobs, func(ctx context.Context, _ jobs.Job[partitionMaintenance]) error {
		_, err := p.partition.Run(ctx, p.clock.Now())
		return err
	}, jobs.HandlerOptions{Queue: jobs.QueueMaintenance}); err != nil {
		return err
	}
	if !p.role.works() {
		return nil
	}
	sessions, err := syncpg.NewSessions(p.pool, p.clock, syncpg.SessionOptions{PollInterval: p.cfg.Consumer.PollInterval})
	if err != nil {
		return err
	}
	// A round's statements find their rows by keys and arrays of keys
	// (the cursor, the log after it, the candidates and grants of the
	// apps named, the rows by subscription); under generic plans they are
	// planned once per connection, not at every round (D-SQ-20).
	consumers, err := syncapp.NewConsumers(syncapp.Deps{
		UoW:         p.uow.GenericPlans(),
		Events:      syncpg.NewLog(p.pool),
		Cursors:     syncpg.NewCursors(p.pool, p.clock),
		Coordinator: sessions,
		Logger:      p.log,
		Meter:       p.meter(),
	}, syncapp.Options{BatchSize: p.cfg.Consumer.BatchSize, PollInterval: p.cfg.Consumer.PollInterval,
		GatherPause: p.cfg.Consumer.GatherPause, GatherMinEvents: p.cfg.Consumer.GatherMinEvents,
		RecentWindow: p.cfg.Sync.PartitionInterval})
	if err != nil {
		return err
	}
	if err := consumers.Register(eventsync.ConsumerWebhooks, p.modules.Deliveries); err != nil {
		return err
	}
	p.consumers = consumers
	return nil
}

func (p *Process) buildHTTP(ctx context.Context) error {
	store, err := idempotencypg.New(p.pool, p.uow, p.clock, idempotencypg.Options{KeyTTL: p.cfg.HTTP.IdempotencyKeyTTL, PurgeBatchSize: p.cfg.Retention.BatchSize})
	if err != nil {
		return err
	}
	if err := jobs.Register(p.jobs, func(ctx context.Context, _ jobs.Job[idempotencyPurge]) error {
		_, err := store.Purge(ctx)
		return err
	}, jobs.HandlerOptions{Queue: jobs.QueueMaintenance}); err != nil {
		return err
	}
	if err := p.jobs.RegisterPeriodic(p.cfg.Jobs.MaintenanceInterval, idempotencyPurge{}); err != nil {
		return err
	}
	p.api, err = httpserver.New(httpserver.Options{
		MaxBodyBytes:          p.cfg.HTTP.MaxBodyBytes,
		BodyLimits:            map[httpserver.BodyClass]int64{httpserver.BodyClassPublicAuth: p.cfg.HTTP.MaxBodyBytesPublicAuth},
		RequestTimeout:        p.cfg.HTTP.RequestTimeout,
		UnavailableRetryAfter: p.cfg.HTTP.UnavailableRetryAfter,
		RateLimits: map[httpserver.RateClass]httpserver.RateLimit{
			httpserver.RateClassPublicAuth: {PerMinute: p.cfg.RateLimit.PublicAuth.PerMinute, Burst: p.cfg.RateLimit.PublicAuth.Burst},
		},
	}, httpserver.Deps{Log: p.log, Clock: p.clock, Authenticator: p.modules.Identity, Idempotency: store,
		Unavailable: pg.IsUnavailable, Meter: p.meter()})
	if err != nil {
		return err
	}
	key, err := p.secrets.Resolve(ctx, p.cfg.HTTP.CursorKeyRef)
	if err != nil {
		return fmt.Errorf("http.cursor_key_ref: %w", err)
	}
	raw, err := key.HexBytes()
	if err != nil {
		return fmt.Errorf("http.cursor_key_ref: %w", err)
	}
	cursors, err := httpserver.NewCursors(raw.Reveal())
	if err != nil {
		return fmt.Errorf("http.cursor_key_ref: %w", err)
	}
	srv, err := newAPIServer(p.cfg, p.modules, cursors)
	if err != nil {
		return err
	}
	if err := mountAPI(p.api, srv); err != nil {
		return err
	}
	p.api.Handle(httpserver.Route{Operation: "livez", Method: http.MethodGet, Pattern: "/livez"}, http.HandlerFunc(p.livez))
	p.api.Handle(httpserver.Route{Operation: "readyz", Method: http.MethodGet, Pattern: "/readyz"}, http.HandlerFunc(p.readyz))
	return nil
}

// Handler returns the public HTTP handler (the API chain).
func (p *Process) Handler() http.Handler { return p.api }

// Run starts the process and blocks until ctx ends, then drains and stops
// (lifecycle.go): the operator listener comes up first, so /readyz says why
// the process is not ready while it waits for the database
// (database.startup_wait); then the job runtime, the consumers and the API
// listener start. When ctx ends, /readyz answers 503 at once, the API keeps
// serving for http.drain_delay, the listeners finish in-flight requests
// within http.shutdown_timeout, the consumers finish their round, and
// in-flight jobs get jobs.shutdown_timeout.
func (p *Process) Run(ctx context.Context) error {
	defer p.close()
	p.ready.set(notReadyStarting)
	failed := make(chan error, 2)
	servers := []*http.Server{{
		Addr:              p.cfg.HTTP.OperatorListenAddress,
		Handler:           p.operatorHandler(),
		ReadHeaderTimeout: p.cfg.HTTP.ReadHeaderTimeout,
	}}
	if err := p.serve(ctx, servers[0], failed); err != nil {
		return err
	}
	runErr := p.start(ctx, &servers, failed)
	started := runErr == nil
	switch {
	case started:
		p.ready.clear()
		go p.watchExtraCA(ctx)
		select {
		case <-ctx.Done():
		case runErr = <-failed:
		}
	case ctx.Err() != nil:
		// SIGTERM while the role was still starting (for example waiting
		// for the database) is an orderly stop, not a failure.
		runErr = nil
	}
	// A start that did not complete, or a failed listener, leaves nothing
	// to drain for http.drain_delay.
	if err := p.drain(ctx, servers, !started || runErr != nil); err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

// start runs the start-up steps, fills the pool, then starts the job
// runtime, the consumers and, in roles api and all, the API listener
// (appended to servers).
func (p *Process) start(ctx context.Context, servers *[]*http.Server, failed chan<- error) error {
	if err := p.startUp(ctx); err != nil {
		return err
	}
	if err := p.fillPool(ctx); err != nil {
		return err
	}
	if err := p.jobs.Start(ctx); err != nil {
		return err
	}
	if p.consumers != nil {
		if err := p.consumers.Start(ctx); err != nil {
			return err
		}
	}
	p.startGauges(ctx)

	if !p.role.serves() {
		return nil
	}
	p.watchChanges(ctx)
	api := &http.Server{
		Addr:              p.cfg.HTTP.ListenAddress,
		Handler:           p.api,
		ReadHeaderTimeout: p.cfg.HTTP.ReadHeaderTimeout,
	}
	if err := p.serve(ctx, api, failed); err != nil {
		return err
	}
	*servers = append(*servers, api)
	return nil
}

// watchChanges lets the caches of the modules (token owners, standings,
// channels) serve while this process hears of every change of what they
// keep (ADR 0102, ADR 0103); the watch ends with ctx and close waits for
// it. Without a cache (an empty hub) nothing listens.
func (p *Process) watchChanges(ctx context.Context) {
	if p.modules.Changes.Empty() {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		pg.WatchChanges(ctx, p.pool, p.modules.Changes, p.cfg.Database.WatchRetry, p.log)
	}()
	p.closers = append(p.closers, func() {
		cancel()
		<-done
	})
}

func (p *Process) operatorHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", p.tel.MetricsHandler)
	mux.HandleFunc("GET /livez", p.livez)
	mux.HandleFunc("GET /readyz", p.readyz)
	return mux
}

// livez answers 200 while the process runs.
func (p *Process) livez(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "ok\n")
}

// readyz answers 200 only when the process has started and is not
// draining, the database answers and every migration of this build is
// applied, so a load balancer never routes to a process that runs against
// an old schema or is about to stop. A 503 names the reason in one line.
func (p *Process) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if reason, ok := p.ready.notReady(); ok {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, reason+"\n")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), p.cfg.HTTP.ReadinessTimeout)
	defer cancel()
	st, err := pg.Status(ctx, p.pool)
	switch {
	case err != nil:
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "database unavailable\n")
	case !st.Current():
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "migrations pending\n")
	default:
		_, _ = io.WriteString(w, "ready\n")
	}
}

func (p *Process) close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
	p.closers = nil
}

// partitionMaintenance is the periodic job that keeps event-log partitions
// ahead of now and drops expired ones (sync.event_retention).
type partitionMaintenance struct{}

// Kind implements jobs.Args.
func (partitionMaintenance) Kind() string { return "sync.partition_maintenance" }

// idempotencyPurge is the periodic job that deletes expired Idempotency-Key
// rows (idempotency.key_ttl). It lives here because the idempotency store is
// a kernel port, which may not depend on the job platform.
type idempotencyPurge struct{}

// Kind implements jobs.Args.
func (idempotencyPurge) Kind() string { return "kernel.idempotency_purge" }

// keyRotation is the periodic job that runs the due steps of signing key
// rotation (instance.signing_key_max_age, agent.jwks_max_age).
type keyRotation struct{}

// Kind implements jobs.Args.
func (keyRotation) Kind() string { return "instance.key_rotation" }

// Modules returns the process's composed modules, so tests that run a whole
// process (test/harness, test/ratelimit, test/receiverlibs and this
// package's) can create state such as the owner through the same services
// the process serves with, without a request through the API.
func (p *Process) Modules() *Modules { return p.modules }
