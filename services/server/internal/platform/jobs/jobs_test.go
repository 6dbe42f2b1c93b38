package jobs_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/jobs"
	"bothy/server/internal/platform/otel/attr"
	"bothy/server/internal/platform/otel/oteltest"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// wait is the generous deadline for anything a test waits on. It bounds a
// hung test; no assertion depends on how long anything took.
const wait = 2 * time.Minute

// pingArgs is the args type most tests use.
type pingArgs struct {
	N int `json:"n"`
}

func (pingArgs) Kind() string { return "test.ping" }

// run is what a handler saw.
type run struct {
	args        pingArgs
	at          time.Time
	attempt     int
	deadline    time.Time
	hasDeadline bool
	ctxErr      error
}

type bundle struct {
	db      *pgtest.DB
	uow     *pg.UnitOfWork
	metrics *oteltest.Metrics
	spans   *oteltest.Spans
	logs    *oteltest.Logs
}

func setup(t *testing.T) *bundle {
	t.Helper()
	db := pgtest.New(t)
	return &bundle{
		db:      db,
		uow:     pg.NewUnitOfWork(db.App, 3, 0),
		metrics: oteltest.NewMetrics(t),
		spans:   oteltest.NewSpans(t),
		logs:    oteltest.NewLogs(t, slog.LevelInfo),
	}
}

// options are the runtime options of the tests, tuned like production for
// latency: LISTEN/NOTIFY wakes the producer, the poll interval is the
// fallback.
func options(role string) jobs.Options {
	return jobs.Options{
		Role: role,
		Queues: map[string]jobs.QueueOptions{
			jobs.QueueDefault:     {MaxWorkers: 2},
			jobs.QueueDelivery:    {MaxWorkers: 2},
			jobs.QueueMaintenance: {MaxWorkers: 1},
		},
		FetchPollInterval: 200 * time.Millisecond,
		FetchCooldown:     5 * time.Millisecond,
		JobTimeout:        wait,
		ShutdownTimeout:   wait,

		InProcessStartFallback: wait,
	}
}

func (b *bundle) runtime(t *testing.T, o jobs.Options) *jobs.Runtime {
	t.Helper()
	rt, err := jobs.New(o, jobs.Deps{
		Pool:   b.db.App,
		Log:    b.logs.Logger(),
		Tracer: b.spans.Provider,
		Meter:  b.metrics.Provider,
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		require.NoError(t, rt.Stop(ctx))
	})
	return rt
}

// recorder registers a pingArgs handler that reports every run on a channel
// and returns what fn returns.
func recorder(t *testing.T, rt *jobs.Runtime, o jobs.HandlerOptions, fn func(ctx context.Context, job jobs.Job[pingArgs]) error) <-chan run {
	t.Helper()
	runs := make(chan run, 16)
	require.NoError(t, jobs.Register(rt, func(ctx context.Context, job jobs.Job[pingArgs]) error {
		r := run{args: job.Args, at: time.Now(), attempt: job.Attempt}
		r.deadline, r.hasDeadline = ctx.Deadline()
		var err error
		if fn != nil {
			err = fn(ctx, job)
		}
		r.ctxErr = ctx.Err()
		runs <- r
		return err
	}, o))
	return runs
}

func (b *bundle) insert(t *testing.T, rt *jobs.Runtime, args jobs.Args, o jobs.InsertOptions) {
	t.Helper()
	require.NoError(t, b.uow.Do(context.Background(), func(ctx context.Context) error {
		return rt.Inserter().InsertTx(ctx, args, o)
	}))
}

func (b *bundle) states(t *testing.T, kind string) []string {
	t.Helper()
	rows, err := b.db.App.Query(context.Background(), `SELECT state::text FROM river_job WHERE kind = $1 ORDER BY id`, kind)
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// row is the River row of the only job of kind.
type row struct {
	state   string
	attempt int
	errors  int
}

func (b *bundle) row(t *testing.T, kind string) row {
	t.Helper()
	var r row
	require.NoError(t, b.db.App.QueryRow(context.Background(),
		`SELECT state::text, attempt, coalesce(array_length(errors, 1), 0) FROM river_job WHERE kind = $1`, kind).
		Scan(&r.state, &r.attempt, &r.errors))
	return r
}

// waitsForRetry reports whether state is one of River's states of a job that
// failed and will run again: available when the retry is due within River's
// scheduler interval, retryable when it is later.
func waitsForRetry(state string) bool { return state == "available" || state == "retryable" }

func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		require.FailNow(t, "nothing arrived before the test deadline")
		var zero T
		return zero
	}
}

func stop(t *testing.T, rt *jobs.Runtime) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, rt.Stop(ctx))
}

// panicker registers a pingArgs handler that panics and reports each run
// on the channel it returns.
func panicker(t *testing.T, rt *jobs.Runtime) <-chan struct{} {
	t.Helper()
	ran := make(chan struct{}, 2)
	require.NoError(t, jobs.Register(rt, func(context.Context, jobs.Job[pingArgs]) error {
		ran <- struct{}{}
		panic("handler bug")
	}, jobs.HandlerOptions{}))
	return ran
}

// stopReleasing stops rt and closes release once the stop began, so a job
// that waits for release finishes during the graceful stop; it returns
// Stop's error.
func stopReleasing(t *testing.T, rt *jobs.Runtime, release chan struct{}) error {
	t.Helper()
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		stopped <- rt.Stop(ctx)
	}()
	receive(t, rt.Stopping())
	close(release)
	return receive(t, stopped)
}

// workOne starts rt, commits one pingArgs job, waits for the handler's
// report on ch and stops rt, so every effect of the run is recorded.
func workOne[T any](t *testing.T, b *bundle, rt *jobs.Runtime, ch <-chan T) T {
	t.Helper()
	require.NoError(t, rt.Start(context.Background()))
	b.insert(t, rt, pingArgs{N: 1}, jobs.InsertOptions{})
	got := receive(t, ch)
	stop(t, rt)
	return got
}

func TestInsertTxOutsideUnitOfWorkFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("api"))
	_ = recorder(t, rt, jobs.HandlerOptions{}, nil)
	err := rt.Inserter().InsertTx(context.Background(), pingArgs{N: 1}, jobs.InsertOptions{})
	require.ErrorIs(t, err, jobs.ErrNoTransaction)
	require.Empty(t, b.states(t, "test.ping"))
}

func TestInsertTxOfUnregisteredKindFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("api"))
	err := b.uow.Do(context.Background(), func(ctx context.Context) error {
		err := rt.Inserter().InsertTx(ctx, pingArgs{N: 1}, jobs.InsertOptions{})
		return err
	})
	require.ErrorIs(t, err, jobs.ErrUnknownKind)
}

func TestInsertTxRolledBackInsertsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("worker"))
	runs := recorder(t, rt, jobs.HandlerOptions{}, nil)
	require.NoError(t, rt.Start(context.Background()))

	boom := errors.New("boom")
	err := b.uow.Do(context.Background(), func(ctx context.Context) error {
		err := rt.Inserter().InsertTx(ctx, pingArgs{N: 1}, jobs.InsertOptions{})
		require.NoError(t, err)
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.Empty(t, b.states(t, "test.ping"), "the job went with the rolled-back rows")

	// A committed job after it proves the worker was listening all along.
	b.insert(t, rt, pingArgs{N: 2}, jobs.InsertOptions{})
	require.Equal(t, 2, receive(t, runs).args.N)
	stop(t, rt)
	require.Equal(t, []string{"completed"}, b.states(t, "test.ping"))
}

func TestCommittedJobIsWorkedByWorkerRole(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("worker"))
	runs := recorder(t, rt, jobs.HandlerOptions{Queue: jobs.QueueDelivery}, nil)
	got := workOne(t, b, rt, runs)
	require.Equal(t, 1, got.args.N)
	require.Equal(t, 1, got.attempt)

	var queue string
	require.NoError(t, b.db.App.QueryRow(context.Background(), `SELECT queue FROM river_job WHERE kind = 'test.ping'`).Scan(&queue))
	require.Equal(t, jobs.QueueDelivery, queue, "the kind's queue is used at insert")
	require.Equal(t, []string{"completed"}, b.states(t, "test.ping"))

	kind := attr.JobKind.String("test.ping")
	require.EqualValues(t, 1, b.metrics.Sum(t, jobs.MetricFinished, kind, attr.Outcome.String(jobs.OutcomeCompleted)))
	require.EqualValues(t, 1, b.metrics.HistogramCount(t, jobs.MetricDuration, kind))
	require.ElementsMatch(t, []attribute.Key{attr.JobKind, attr.Queue, attr.Outcome}, b.metrics.AttributeKeys(t, jobs.MetricFinished))
	require.ElementsMatch(t, []attribute.Key{attr.JobKind, attr.Outcome}, b.metrics.AttributeKeys(t, jobs.MetricDuration))

	spans := b.spans.Named(jobs.SpanWork)
	require.Len(t, spans, 1)
	a := oteltest.Attrs(spans[0])
	require.Equal(t, "test.ping", a[attr.JobKind].AsString())
	require.Equal(t, jobs.QueueDelivery, a[attr.Queue].AsString())
	require.Equal(t, jobs.OutcomeCompleted, a[attr.Outcome].AsString())
}

func TestJobContextDeadlineIsTheTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("worker"))
	const timeout = 90 * time.Second
	runs := recorder(t, rt, jobs.HandlerOptions{Timeout: timeout}, nil)
	got := workOne(t, b, rt, runs)
	require.True(t, got.hasDeadline, "a handler always runs under a deadline")
	// The deadline was set when the job started, before the handler saw the
	// time, so it can be no later than that time plus the timeout.
	require.False(t, got.deadline.After(got.at.Add(timeout)))
	require.True(t, got.deadline.After(got.at))
}

// TestScheduledJobDoesNotRunBeforeScheduledAt records the instant the job ran
// and compares it with scheduled_at; it asserts no duration.
func TestScheduledJobDoesNotRunBeforeScheduledAt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("worker"))
	runs := recorder(t, rt, jobs.HandlerOptions{Queue: jobs.QueueDelivery}, nil)
	require.NoError(t, rt.Start(context.Background()))

	at := time.Now().Add(time.Second).Truncate(time.Microsecond)
	b.insert(t, rt, pingArgs{N: 3}, jobs.InsertOptions{ScheduledAt: at})
	b.insert(t, rt, pingArgs{N: 4}, jobs.InsertOptions{})

	first := receive(t, runs)
	require.Equal(t, 4, first.args.N, "the due job runs, the scheduled one waits")
	second := receive(t, runs)
	require.Equal(t, 3, second.args.N)
	require.False(t, second.at.Before(at), "ran at %s, scheduled at %s", second.at, at)

	var stored time.Time
	require.NoError(t, b.db.App.QueryRow(context.Background(), `SELECT scheduled_at FROM river_job WHERE args->>'n' = '3'`).Scan(&stored))
	require.True(t, stored.Equal(at), "scheduled_at is stored as given")
}

// TestAPIRoleNeverWorksJobs gives the api runtime and a worker runtime
// different handlers for one kind: the job is worked exactly once, by the
// worker, although the api runtime had every chance to take it first.
func TestAPIRoleNeverWorksJobs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	api := b.runtime(t, options("api"))
	var apiRuns atomic.Int32
	require.NoError(t, jobs.Register(api, func(context.Context, jobs.Job[pingArgs]) error {
		apiRuns.Add(1)
		return nil
	}, jobs.HandlerOptions{}))
	require.NoError(t, api.Start(context.Background()), "Start is allowed and works nothing in role api")
	require.ErrorIs(t, jobs.Register(api, func(context.Context, jobs.Job[tickArgs]) error { return nil }, jobs.HandlerOptions{}),
		jobs.ErrRegistrationClosed, "Start closes registration in role api too")
	b.insert(t, api, pingArgs{N: 1}, jobs.InsertOptions{})
	require.Equal(t, []string{"available"}, b.states(t, "test.ping"))

	worker := b.runtime(t, options("worker"))
	runs := recorder(t, worker, jobs.HandlerOptions{}, nil)
	require.NoError(t, worker.Start(context.Background()))
	require.Equal(t, 1, receive(t, runs).args.N)
	// A job the api process inserts while the worker runs reaches it too.
	b.insert(t, api, pingArgs{N: 2}, jobs.InsertOptions{})
	require.Equal(t, 2, receive(t, runs).args.N)
	stop(t, worker)
	stop(t, api)

	require.Zero(t, apiRuns.Load(), "the api role worked no job")
	require.Equal(t, []string{"completed", "completed"}, b.states(t, "test.ping"))
}

func TestStopLetsRunningJobFinish(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("worker"))
	started := make(chan struct{})
	release := make(chan struct{})
	runs := recorder(t, rt, jobs.HandlerOptions{}, func(ctx context.Context, _ jobs.Job[pingArgs]) error {
		close(started)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	require.NoError(t, rt.Start(context.Background()))
	b.insert(t, rt, pingArgs{N: 1}, jobs.InsertOptions{})
	receive(t, started)

	require.NoError(t, stopReleasing(t, rt, release))
	got := receive(t, runs)
	require.NoError(t, got.ctxErr, "the running job was not cancelled")
	require.Equal(t, []string{"completed"}, b.states(t, "test.ping"))

	// Once stopped, nothing is fetched any more.
	b.insert(t, rt, pingArgs{N: 2}, jobs.InsertOptions{})
	require.Equal(t, []string{"completed", "available"}, b.states(t, "test.ping"))
}

func TestStopCancelsJobsAfterShutdownTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	o := options("worker")
	o.ShutdownTimeout = 10 * time.Millisecond
	rt := b.runtime(t, o)
	started := make(chan struct{})
	runs := recorder(t, rt, jobs.HandlerOptions{}, func(ctx context.Context, _ jobs.Job[pingArgs]) error {
		close(started)
		<-ctx.Done() // only a cancellation ends this job
		return ctx.Err()
	})
	require.NoError(t, rt.Start(context.Background()))
	b.insert(t, rt, pingArgs{N: 1}, jobs.InsertOptions{})
	receive(t, started)

	stop(t, rt)
	got := receive(t, runs)
	require.ErrorIs(t, got.ctxErr, context.Canceled)
	require.Equal(t, row{state: "available", attempt: 0, errors: 0}, b.row(t, "test.ping"),
		"the interrupted job runs again without counting the attempt")
	require.EqualValues(t, 1, b.metrics.Sum(t, jobs.MetricFinished, attr.Outcome.String(jobs.OutcomeInterrupted)))
	require.Empty(t, b.logs.WithMessage(t, "job failed"), "an interruption is not a failure")
}

func TestFailedJobIsRetryableAndLogged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("worker"))
	runs := recorder(t, rt, jobs.HandlerOptions{}, func(context.Context, jobs.Job[pingArgs]) error {
		return errors.New("POST https://hooks.example.com/secret failed for Alex")
	})
	workOne(t, b, rt, runs)

	r := b.row(t, "test.ping")
	require.True(t, waitsForRetry(r.state), r.state)
	require.Equal(t, 1, r.errors, "River keeps the failure in its row")
	require.EqualValues(t, 1, b.metrics.Sum(t, jobs.MetricFinished, attr.Outcome.String(jobs.OutcomeRetried)))
	lines := b.logs.WithMessage(t, "job failed")
	require.Len(t, lines, 1)
	span := b.spans.Named(jobs.SpanWork)[0].SpanContext()
	require.Equal(t, map[string]any{
		"time": lines[0]["time"], "level": "WARN", "msg": "job failed",
		"bothy.job.kind": "test.ping", "error.type": "_OTHER",
		"trace_id": span.TraceID().String(), "span_id": span.SpanID().String(),
	}, lines[0], "a failure is logged with kind and error type only, in the job's span")
	for _, l := range b.logs.Lines(t) {
		for _, v := range l {
			require.NotContains(t, v, "hooks.example.com")
		}
	}
}

func TestFinalFailureIsDiscardedAndLogged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("worker"))
	runs := recorder(t, rt, jobs.HandlerOptions{MaxAttempts: 1}, func(context.Context, jobs.Job[pingArgs]) error {
		return context.DeadlineExceeded
	})
	workOne(t, b, rt, runs)

	require.Equal(t, []string{"discarded"}, b.states(t, "test.ping"))
	require.EqualValues(t, 1, b.metrics.Sum(t, jobs.MetricFinished, attr.Outcome.String(jobs.OutcomeDiscarded)))
	lines := b.logs.WithMessage(t, "job discarded")
	require.Len(t, lines, 1)
	require.Equal(t, "ERROR", lines[0]["level"])
	require.Equal(t, "deadline_exceeded", lines[0]["error.type"])
}

func TestPanickingJobIsCountedAndRetryable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("worker"))
	workOne(t, b, rt, panicker(t, rt))

	r := b.row(t, "test.ping")
	require.True(t, waitsForRetry(r.state), r.state)
	require.Equal(t, 1, r.errors)
	require.EqualValues(t, 1, b.metrics.Sum(t, jobs.MetricFinished, attr.Outcome.String(jobs.OutcomeRetried)))
	require.Equal(t, "panic", b.logs.WithMessage(t, "job failed")[0]["error.type"])
}

func TestSnoozeRunsTheJobAgainAndCancelEndsIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("worker"))
	var calls sync.Map
	runs := recorder(t, rt, jobs.HandlerOptions{}, func(_ context.Context, job jobs.Job[pingArgs]) error {
		n, _ := calls.LoadOrStore(job.Args.N, new(atomic.Int32))
		call := n.(*atomic.Int32).Add(1)
		switch {
		case job.Args.N == 1 && call == 1:
			return river.JobSnooze(0)
		case job.Args.N == 2:
			return river.JobCancel(errors.New("the subscription is gone"))
		}
		return nil
	})
	require.NoError(t, rt.Start(context.Background()))
	b.insert(t, rt, pingArgs{N: 1}, jobs.InsertOptions{})
	b.insert(t, rt, pingArgs{N: 2}, jobs.InsertOptions{})
	seen := map[int]int{}
	for range 3 {
		seen[receive(t, runs).args.N]++
	}
	stop(t, rt)

	require.Equal(t, map[int]int{1: 2, 2: 1}, seen, "the snoozed job ran twice, the cancelled one once")
	require.Equal(t, []string{"completed", "cancelled"}, b.states(t, "test.ping"))
	require.EqualValues(t, 1, b.metrics.Sum(t, jobs.MetricFinished, attr.Outcome.String(jobs.OutcomeSnoozed)))
	require.EqualValues(t, 1, b.metrics.Sum(t, jobs.MetricFinished, attr.Outcome.String(jobs.OutcomeCancelled)))
	require.EqualValues(t, 1, b.metrics.Sum(t, jobs.MetricFinished, attr.Outcome.String(jobs.OutcomeCompleted)))
	require.Empty(t, b.logs.WithMessage(t, "job failed"), "snooze and cancel are not failures")
}

// tickArgs is the args type of the periodic job.
type tickArgs struct{}

func (tickArgs) Kind() string { return "test.tick" }

func TestPeriodicJobRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("worker"))
	ticks := make(chan time.Time, 16)
	require.NoError(t, jobs.Register(rt, func(context.Context, jobs.Job[tickArgs]) error {
		ticks <- time.Now()
		return nil
	}, jobs.HandlerOptions{Queue: jobs.QueueMaintenance}))
	require.NoError(t, rt.RegisterPeriodic(time.Second, tickArgs{}))
	require.NoError(t, rt.Start(context.Background()))

	receive(t, ticks) // the run on start
	receive(t, ticks) // the first run of the interval
	stop(t, rt)

	var queue string
	require.NoError(t, b.db.App.QueryRow(context.Background(), `SELECT DISTINCT queue FROM river_job WHERE kind = 'test.tick'`).Scan(&queue))
	require.Equal(t, jobs.QueueMaintenance, queue)
}

func TestRegisterRejectsMistakes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("worker"))
	noop := func(context.Context, jobs.Job[pingArgs]) error { return nil }

	require.ErrorContains(t, jobs.Register(rt, noop, jobs.HandlerOptions{Queue: "urgent"}), "queue")
	require.ErrorContains(t, jobs.Register(rt, noop, jobs.HandlerOptions{Timeout: -time.Second}), "timeout")
	require.ErrorContains(t, jobs.Register(rt, noop, jobs.HandlerOptions{MaxAttempts: -1}), "attempts")
	require.ErrorContains(t, jobs.Register(rt, func(context.Context, jobs.Job[badKindArgs]) error { return nil }, jobs.HandlerOptions{}), "kind")
	require.ErrorContains(t, jobs.Register(rt, func(context.Context, jobs.Job[hiddenFieldArgs]) error { return nil }, jobs.HandlerOptions{}), "secret")

	require.NoError(t, jobs.Register(rt, noop, jobs.HandlerOptions{Queue: jobs.QueueDelivery}))
	require.ErrorContains(t, jobs.Register(rt, noop, jobs.HandlerOptions{}), "twice")
	o, ok := rt.Registered("test.ping")
	require.True(t, ok)
	require.Equal(t, jobs.QueueDelivery, o.Queue)
	_, ok = rt.Registered("test.other")
	require.False(t, ok)

	require.ErrorContains(t, rt.RegisterPeriodic(time.Second, tickArgs{}), "not registered")
	require.ErrorContains(t, rt.RegisterPeriodic(time.Millisecond, pingArgs{}), "interval")

	require.NoError(t, rt.Start(context.Background()))
	require.ErrorIs(t, jobs.Register(rt, func(context.Context, jobs.Job[tickArgs]) error { return nil }, jobs.HandlerOptions{}), jobs.ErrRegistrationClosed)
	require.ErrorIs(t, rt.RegisterPeriodic(time.Minute, pingArgs{}), jobs.ErrRegistrationClosed)
}

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	deps := jobs.Deps{Pool: db.App, Log: slog.New(slog.DiscardHandler)}
	tests := []struct {
		name string
		edit func(*jobs.Options)
		key  string
	}{
		{"an unknown role", func(o *jobs.Options) { o.Role = "scheduler" }, "role"},
		{"a worker role without workers for a queue", func(o *jobs.Options) { delete(o.Queues, jobs.QueueDelivery) }, "jobs.queue.delivery.max_workers"},
		{"a queue of unknown name", func(o *jobs.Options) { o.Queues["urgent"] = jobs.QueueOptions{MaxWorkers: 1} }, "jobs.queue.urgent"},
		{"a poll interval shorter than the cooldown", func(o *jobs.Options) { o.FetchPollInterval = time.Millisecond }, "jobs.fetch_poll_interval"},
		{"no cooldown", func(o *jobs.Options) { o.FetchCooldown = 0 }, "jobs.fetch_cooldown"},
		{"no job timeout", func(o *jobs.Options) { o.JobTimeout = 0 }, "jobs.job_timeout"},
		{"no shutdown timeout", func(o *jobs.Options) { o.ShutdownTimeout = 0 }, "jobs.shutdown_timeout"},
		{"role api without a cooldown", func(o *jobs.Options) { o.Role = "api"; o.FetchCooldown = 0 }, "jobs.fetch_cooldown"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := options("worker")
			tc.edit(&o)
			_, err := jobs.New(o, deps)
			require.ErrorContains(t, err, tc.key)
		})
	}

	apiOpts := options("api")
	apiOpts.Queues, apiOpts.JobTimeout, apiOpts.ShutdownTimeout = nil, 0, 0
	_, err := jobs.New(apiOpts, deps)
	require.NoError(t, err, "role api needs no queue settings and no timeouts")
	_, err = jobs.New(options("worker"), jobs.Deps{Log: deps.Log})
	require.ErrorContains(t, err, "pool")
}

type badKindArgs struct{}

func (badKindArgs) Kind() string { return "NoDots" }

type hiddenFieldArgs struct {
	ID     ids.ID `json:"id"`
	secret string
}

func (hiddenFieldArgs) Kind() string { return "test.hidden" }

// TestDueJobIsAvailableAtOnce: a job scheduled for now or the past is
// inserted available, so a worker picks it up on the insert notification;
// only a job due in the future waits in state scheduled for River's
// scheduler (whose period would otherwise delay every "now" by seconds).
func TestDueJobIsAvailableAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("api"))
	recorder(t, rt, jobs.HandlerOptions{}, nil)
	now := time.Now()
	b.insert(t, rt, pingArgs{N: 1}, jobs.InsertOptions{ScheduledAt: now})
	b.insert(t, rt, pingArgs{N: 2}, jobs.InsertOptions{ScheduledAt: now.Add(-time.Minute)})
	b.insert(t, rt, pingArgs{N: 3}, jobs.InsertOptions{ScheduledAt: now.Add(time.Hour)})
	require.ElementsMatch(t, []string{"available", "available", "scheduled"}, b.states(t, "test.ping"))
}

// TestInsertManyTxInsertsEveryJobWithTheRows inserts three jobs in one
// call: all of them run once the unit of work commits (a rollback takes
// them along as it does InsertTx's, which is its one-job case:
// TestInsertTxRolledBackInsertsNothing). The consumer round of webhooks schedules every
// subscription it served this way, one insert per round.
func TestInsertManyTxInsertsEveryJobWithTheRows(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("worker"))
	runs := recorder(t, rt, jobs.HandlerOptions{}, nil)
	require.NoError(t, rt.Start(context.Background()))
	require.NoError(t, b.uow.Do(context.Background(), func(ctx context.Context) error {
		return rt.Inserter().InsertManyTx(ctx, []jobs.Args{pingArgs{N: 3}, pingArgs{N: 4}, pingArgs{N: 5}}, jobs.InsertOptions{})
	}))
	var got []int
	for range 3 {
		got = append(got, receive(t, runs).args.N)
	}
	require.ElementsMatch(t, []int{3, 4, 5}, got)
	stop(t, rt)
	require.Equal(t, []string{"completed", "completed", "completed"}, b.states(t, "test.ping"))
}

// TestInsertManyTxRefusesWhatInsertTxRefuses: outside a unit of work, and
// with a kind no Register call declared, nothing is inserted; no jobs at
// all is no insert and no error.
func TestInsertManyTxRefusesWhatInsertTxRefuses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("api"))
	_ = recorder(t, rt, jobs.HandlerOptions{}, nil)
	err := rt.Inserter().InsertManyTx(context.Background(), []jobs.Args{pingArgs{N: 1}}, jobs.InsertOptions{})
	require.ErrorIs(t, err, jobs.ErrNoTransaction)
	err = b.uow.Do(context.Background(), func(ctx context.Context) error {
		return rt.Inserter().InsertManyTx(ctx, []jobs.Args{pingArgs{N: 1}, unregisteredArgs{}}, jobs.InsertOptions{})
	})
	require.ErrorIs(t, err, jobs.ErrUnknownKind)
	require.NoError(t, b.uow.Do(context.Background(), func(ctx context.Context) error {
		return rt.Inserter().InsertManyTx(ctx, nil, jobs.InsertOptions{})
	}))
	require.Empty(t, b.states(t, "test.ping"))
}

// unregisteredArgs is a kind no test registers.
type unregisteredArgs struct{}

func (unregisteredArgs) Kind() string { return "test.unregistered" }

// TestReindexerRebuildsEveryIndexRiversJobTableHas: River's reindexer is
// configured with exactly the indexes river_job has after every migration,
// so it neither warns about the GIN indexes migration 00058 dropped (ADR
// 0086) nor misses one that a River upgrade adds.
func TestReindexerRebuildsEveryIndexRiversJobTableHas(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rows, err := b.db.App.Query(context.Background(),
		`SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'river_job'`)
	require.NoError(t, err)
	existing, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.ElementsMatch(t, existing, jobs.ReindexedIndexes())
	for _, dropped := range pg.RiverDroppedIndexes() {
		require.NotContains(t, existing, dropped)
	}
}
