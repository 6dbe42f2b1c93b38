package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/jobs"
	"bothy/server/internal/platform/otel/attr"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

// started is what a handler saw of a run started in process.
type started struct {
	args      pingArgs
	attempt   int
	final     bool
	committed int // jobs of the kind the handler's own connection saw
	ctxErr    error
}

// starter registers a pingArgs handler that reports every run on a
// channel, with what a new connection sees of the job table at its start,
// and returns what fn returns.
func starter(t *testing.T, b *bundle, rt *jobs.Runtime, fn func(ctx context.Context, job jobs.Job[pingArgs]) error) <-chan started {
	t.Helper()
	runs := make(chan started, 16)
	require.NoError(t, jobs.Register(rt, func(ctx context.Context, job jobs.Job[pingArgs]) error {
		s := started{args: job.Args, attempt: job.Attempt, final: job.Final()}
		if err := b.db.App.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'test.ping'`).Scan(&s.committed); err != nil {
			return err
		}
		var err error
		if fn != nil {
			err = fn(ctx, job)
		}
		s.ctxErr = ctx.Err()
		runs <- s
		return err
	}, jobs.HandlerOptions{MaxAttempts: 1}))
	return runs
}

// startWorker returns a started worker runtime with options o whose
// pingArgs handler is a starter with fn.
func startWorker(t *testing.T, b *bundle, o jobs.Options, fn func(ctx context.Context, job jobs.Job[pingArgs]) error) (*jobs.Runtime, <-chan started) {
	t.Helper()
	rt := b.runtime(t, o)
	runs := starter(t, b, rt, fn)
	require.NoError(t, rt.Start(context.Background()))
	return rt, runs
}

// startInProcess commits args with InsertOptions.StartInProcess.
func (b *bundle) startInProcess(t *testing.T, rt *jobs.Runtime, args pingArgs) {
	t.Helper()
	b.insert(t, rt, args, jobs.InsertOptions{StartInProcess: true})
}

// waitForStates polls the states of kind's jobs until they are want.
func (b *bundle) waitForStates(t *testing.T, kind string, want []string) {
	t.Helper()
	require.Eventually(t, func() bool {
		return slices.Equal(b.states(t, kind), want)
	}, wait, 5*time.Millisecond, "the jobs of %s never reached %v", kind, want)
}

// TestStartInProcessRunsTheJobAfterCommitAndDeletesIt: a job inserted
// with StartInProcess runs in the process that committed it, long before
// River could (its fallback is the test deadline away), sees its own
// insert committed, is no River attempt that could be final, and leaves
// no row once it returned nil.
func TestStartInProcessRunsTheJobAfterCommitAndDeletesIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var tags []string
	rt, runs := startWorker(t, b, options("worker"), func(ctx context.Context, _ jobs.Job[pingArgs]) error {
		return b.db.App.QueryRow(ctx, `SELECT tags FROM river_job WHERE kind = 'test.ping'`).Scan(&tags)
	})

	b.startInProcess(t, rt, pingArgs{N: 1})
	got := receive(t, runs)
	require.Equal(t, started{args: pingArgs{N: 1}, attempt: 1, final: false, committed: 1}, got)
	require.Equal(t, []string{jobs.TagInProcess}, tags, "the row tells a start in process from a scheduled job")
	b.waitForStates(t, "test.ping", nil)
	require.EqualValues(t, 1, b.metrics.Sum(t, jobs.MetricFinished, attr.Outcome.String(jobs.OutcomeCompleted)))
}

// TestStartInProcessRolledBackStartsNothing: a start belongs to the
// commit of its insert; a unit of work that rolls back starts nothing.
func TestStartInProcessRolledBackStartsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt, runs := startWorker(t, b, options("worker"), nil)

	errAbort := errors.New("abort")
	require.ErrorIs(t, b.uow.Do(context.Background(), func(ctx context.Context) error {
		if err := rt.Inserter().InsertTx(ctx, pingArgs{N: 1}, jobs.InsertOptions{StartInProcess: true}); err != nil {
			return err
		}
		return errAbort
	}), errAbort)
	b.startInProcess(t, rt, pingArgs{N: 2})
	require.Equal(t, 2, receive(t, runs).args.N, "the rolled-back job never ran")
	b.waitForStates(t, "test.ping", nil)
}

// TestStartInProcessFailureHandsTheJobToRiver: a start that fails is no
// attempt of River's: the job is made available at once, long before its
// fallback time, and River runs it as its first and, here, final attempt.
func TestStartInProcessFailureHandsTheJobToRiver(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt, runs := startWorker(t, b, options("worker"), func(_ context.Context, job jobs.Job[pingArgs]) error {
		if !job.Final() {
			return errors.New("POST https://hooks.example.com failed for Sam")
		}
		return nil
	})

	b.startInProcess(t, rt, pingArgs{N: 1})
	first := receive(t, runs)
	require.False(t, first.final)
	second := receive(t, runs)
	require.Equal(t, started{args: pingArgs{N: 1}, attempt: 1, final: true, committed: 1}, second,
		"River ran the job after the failed start")
	b.waitForStates(t, "test.ping", []string{"completed"})
	require.EqualValues(t, 1, b.metrics.Sum(t, jobs.MetricFinished, attr.Outcome.String(jobs.OutcomeRetried)))
	require.Len(t, b.logs.WithMessage(t, "job failed"), 1)
}

// TestStartInProcessPanicHandsTheJobToRiver: a start that panics is
// recorded like a River run's panic and hands the job to River at once.
func TestStartInProcessPanicHandsTheJobToRiver(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("worker"))
	ran := panicker(t, rt)
	require.NoError(t, rt.Start(context.Background()))

	b.startInProcess(t, rt, pingArgs{N: 1})
	receive(t, ran)
	receive(t, ran) // River's first attempt
	stop(t, rt)
	r := b.row(t, "test.ping")
	require.True(t, waitsForRetry(r.state), r.state)
	require.Equal(t, 1, r.errors, "River counts its own run only")
	require.EqualValues(t, 2, b.metrics.Sum(t, jobs.MetricFinished, attr.Outcome.String(jobs.OutcomeRetried)))
	require.Equal(t, "panic", b.logs.WithMessage(t, "job failed")[0]["error.type"])
}

// TestStartInProcessWithoutAFreeSlotIsRiversAtOnce: the in-process slots
// of a queue are its max_workers; a job that finds them all taken is
// inserted due at once, and River runs it while the starts still hold
// their slots.
func TestStartInProcessWithoutAFreeSlotIsRiversAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	release := make(chan struct{})
	// Queue default has two workers, so two slots for starts.
	rt, runs := startWorker(t, b, options("worker"), func(ctx context.Context, job jobs.Job[pingArgs]) error {
		if job.Args.N <= 2 {
			<-release
		}
		return nil
	})
	for n := 1; n <= 3; n++ {
		b.startInProcess(t, rt, pingArgs{N: n})
	}
	got := receive(t, runs)
	require.Equal(t, 3, got.args.N, "the third job ran while both slots were taken")
	b.waitForStates(t, "test.ping", []string{"scheduled", "scheduled", "completed"})
	close(release)
	receive(t, runs)
	receive(t, runs)
	b.waitForStates(t, "test.ping", []string{"completed"})
}

// TestStopWaitsForJobsStartedInProcess: Stop lets a start finish within
// jobs.shutdown_timeout, and once Stop began nothing starts in process:
// the job is River's, due at once, for whichever worker runs.
func TestStopWaitsForJobsStartedInProcess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	begun := make(chan struct{})
	release := make(chan struct{})
	rt, runs := startWorker(t, b, options("worker"), func(ctx context.Context, job jobs.Job[pingArgs]) error {
		if job.Args.N == 1 {
			close(begun)
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return nil
	})
	b.startInProcess(t, rt, pingArgs{N: 1})
	receive(t, begun)

	require.NoError(t, stopReleasing(t, rt, release))
	got := receive(t, runs)
	require.NoError(t, got.ctxErr, "the start was not cancelled")
	b.waitForStates(t, "test.ping", nil)

	b.startInProcess(t, rt, pingArgs{N: 2})
	require.Equal(t, []string{"available"}, b.states(t, "test.ping"))
}

// TestStopCancelsJobsStartedInProcessAfterShutdownTimeout: a start still
// running at the end of jobs.shutdown_timeout is cancelled, and its job
// is River's at once, for whichever process works its queue.
func TestStopCancelsJobsStartedInProcessAfterShutdownTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	o := options("worker")
	o.ShutdownTimeout = 10 * time.Millisecond
	begun := make(chan struct{})
	rt, runs := startWorker(t, b, o, func(ctx context.Context, _ jobs.Job[pingArgs]) error {
		close(begun)
		<-ctx.Done() // only a cancellation ends this start
		return ctx.Err()
	})
	b.startInProcess(t, rt, pingArgs{N: 1})
	receive(t, begun)

	stop(t, rt)
	require.ErrorIs(t, receive(t, runs).ctxErr, context.Canceled)
	require.Equal(t, row{state: "available", attempt: 0, errors: 0}, b.row(t, "test.ping"))
}

// TestStartInProcessInRoleAPIIsRiversAtOnce: role api works no queue, so
// its jobs are due at once for the workers, as without StartInProcess.
func TestStartInProcessInRoleAPIIsRiversAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	api := b.runtime(t, options("api"))
	_ = recorder(t, api, jobs.HandlerOptions{}, nil)
	require.NoError(t, api.Start(context.Background()))
	b.startInProcess(t, api, pingArgs{N: 1})
	require.Equal(t, []string{"available"}, b.states(t, "test.ping"))
}

// TestStartInProcessThatNeverEndsIsRunByRiverAtItsFallbackTime: a start
// that never ends (a process that hangs or died after the commit) leaves
// its row, which River runs at jobs.in_process_start_fallback; when the
// hanging start fails at last, the job River completed is not run again.
func TestStartInProcessThatNeverEndsIsRunByRiverAtItsFallbackTime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	o := options("worker")
	o.InProcessStartFallback = time.Second
	hanging := make(chan struct{})
	release := make(chan struct{})
	var calls atomic.Int32
	rt, runs := startWorker(t, b, o, func(ctx context.Context, _ jobs.Job[pingArgs]) error {
		if calls.Add(1) == 1 {
			close(hanging)
			<-release
			return errors.New("the hanging start fails at last")
		}
		return nil
	})
	b.startInProcess(t, rt, pingArgs{N: 1})
	receive(t, hanging)

	got := receive(t, runs)
	require.Equal(t, started{args: pingArgs{N: 1}, attempt: 1, final: true, committed: 1}, got, "River's run, its first and last attempt")
	b.waitForStates(t, "test.ping", []string{"completed"})
	close(release)
	receive(t, runs) // the start's report
	stop(t, rt)
	require.Equal(t, []string{"completed"}, b.states(t, "test.ping"), "the completed job stays completed")
	require.EqualValues(t, 2, calls.Load())
}

// TestStartInProcessThatFindsAStopAtItsCommitIsRiversAtOnce: a job
// inserted to start in process whose unit of work commits after Stop
// began does not start; its row, waiting for its fallback time, is made
// available at once for whichever worker runs (the stopping River too,
// when the fetch it had in flight takes it).
func TestStartInProcessThatFindsAStopAtItsCommitIsRiversAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt, runs := startWorker(t, b, options("worker"), nil)

	stopped := make(chan error, 1)
	require.NoError(t, b.uow.Do(context.Background(), func(ctx context.Context) error {
		if err := rt.Inserter().InsertTx(ctx, pingArgs{N: 1}, jobs.InsertOptions{StartInProcess: true}); err != nil {
			return err
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			stopped <- rt.Stop(ctx)
		}()
		receive(t, rt.Stopping())
		return nil
	}))
	require.NoError(t, receive(t, stopped))
	requireLeftToRiver(t, b, runs)
}

// TestStartInProcessAfterTheStartContextEndedIsRiversAtOnce: a job whose
// unit of work commits after the context given to Start ended (a process
// shutting down without Stop yet) does not start in process, as after
// Stop: the commit asks the same question as the insert.
func TestStartInProcessAfterTheStartContextEndedIsRiversAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("worker"))
	runs := starter(t, b, rt, nil)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, rt.Start(ctx))

	require.NoError(t, b.uow.Do(context.Background(), func(ctx context.Context) error {
		if err := rt.Inserter().InsertTx(ctx, pingArgs{N: 1}, jobs.InsertOptions{StartInProcess: true}); err != nil {
			return err
		}
		cancel()
		return nil
	}))
	stop(t, rt) // River finishes a run it may have begun meanwhile
	requireLeftToRiver(t, b, runs)
}

// TestStartInProcessInsertTravelsWithTheCommit (ADR 0093): an insert
// whose every job starts in process is one statement that nothing later
// in the unit of work reads, so it waits for the commit (txn.AtCommit)
// and travels with it instead of taking a round trip of its own; the
// jobs still start after the commit. An insert with a job River runs at
// once notifies River in a second statement, so it goes at once, as does
// any insert in role api.
func TestStartInProcessInsertTravelsWithTheCommit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt, runs := startWorker(t, b, options("worker"), nil)
	trips := &pgtest.Trips{}
	uow := pg.NewUnitOfWork(b.db.TracedApp(t, trips, 2), 0, 0)
	ctx := context.Background()
	probe := func(ctx context.Context) error {
		tx, err := pg.RequireTx(ctx)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `SELECT 1`)
		return err
	}

	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		if err := probe(ctx); err != nil {
			return err
		}
		if err := rt.Inserter().InsertManyTx(ctx, []jobs.Args{pingArgs{N: 1}, pingArgs{N: 2}},
			jobs.InsertOptions{StartInProcess: true}); err != nil {
			return err
		}
		return probe(ctx)
	}))
	require.Equal(t, [][]string{{"begin", "SELECT 1"}, {"SELECT 1"}, {"JobInsertFastMany", "commit"}}, trips.TakeNames())
	got := []int{receive(t, runs).args.N, receive(t, runs).args.N}
	require.ElementsMatch(t, []int{1, 2}, got, "both started after the commit")
	b.waitForStates(t, "test.ping", nil)

	api := b.runtime(t, options("api"))
	_ = recorder(t, api, jobs.HandlerOptions{}, nil)
	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		if err := api.Inserter().InsertTx(ctx, pingArgs{N: 3}, jobs.InsertOptions{StartInProcess: true}); err != nil {
			return err
		}
		return probe(ctx)
	}))
	names := trips.TakeNames()
	require.Equal(t, []string{"commit"}, names[len(names)-1], "role api: River's insert at once, %v", names)
	require.Contains(t, slices.Concat(names[:len(names)-1]...), "JobInsertFastMany", "role api: River's insert at once")
}

// requireLeftToRiver asserts that the ping job did not start in process
// and is River's: available, or completed by a River run that was its
// first and final attempt (a stopping River may run the job with the
// fetch it had in flight).
func requireLeftToRiver(t *testing.T, b *bundle, runs <-chan started) {
	t.Helper()
	switch r := b.row(t, "test.ping"); r.state {
	case "completed":
		require.Equal(t, row{state: "completed", attempt: 1, errors: 0}, r)
		require.True(t, receive(t, runs).final, "River ran it, as its first and last attempt")
	default:
		require.Equal(t, row{state: "available", attempt: 0, errors: 0}, r)
	}
	require.Empty(t, runs, "nothing started in process")
}

// tracedRuntime is runtime over a pool whose statements trips records:
// River's and the runtime's own, not those of the handlers' units of work
// (b.uow), which use the untraced pool.
func (b *bundle) tracedRuntime(t *testing.T, o jobs.Options, trips *pgtest.Trips) *jobs.Runtime {
	t.Helper()
	rt, err := jobs.New(o, jobs.Deps{
		Pool:   b.db.TracedApp(t, trips, 4),
		Log:    b.logs.Logger(),
		Tracer: b.spans.Provider,
		Meter:  b.metrics.Provider,
	})
	require.NoError(t, err)
	t.Cleanup(func() { stop(t, rt) })
	return rt
}

// TestRetireStartedRowDeletesTheRowWithTheHandlersCommit (D-M2-26-87): a
// handler that retires its row in a unit of work deletes it with that
// unit's commit; the run then sends nothing for the row, neither the
// delete after a handler that returned nil nor the hand-over to River
// after one that failed, and River never runs the job.
func TestRetireStartedRowDeletesTheRowWithTheHandlersCommit(t *testing.T) {
	t.Parallel()
	for _, fails := range []bool{false, true} {
		t.Run(fmt.Sprintf("fails=%v", fails), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			trips := &pgtest.Trips{}
			rt := b.tracedRuntime(t, options("worker"), trips)
			left := -1
			runs := starter(t, b, rt, func(ctx context.Context, _ jobs.Job[pingArgs]) error {
				if err := b.uow.Do(ctx, jobs.RetireStartedRow); err != nil {
					return err
				}
				if err := b.db.App.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'test.ping'`).Scan(&left); err != nil {
					return err
				}
				if fails {
					return errors.New("POST https://hooks.example.com failed for Sam")
				}
				return nil
			})
			require.NoError(t, rt.Start(context.Background()))
			b.startInProcess(t, rt, pingArgs{N: 1})
			require.Equal(t, 1, receive(t, runs).committed)
			require.Zero(t, left, "the row went with the commit of the handler's unit of work")
			stop(t, rt)
			require.Empty(t, runs, "River never ran the job")
			require.Empty(t, b.states(t, "test.ping"))
			for _, trip := range trips.Take() {
				for _, sql := range trip {
					require.NotContains(t, sql, "WHERE id = $1 AND state <> 'running' AND set_config",
						"no delete of a retired row after the run")
					require.NotContains(t, sql, "SET state = 'available', scheduled_at = now()",
						"no hand-over of a retired row to River")
				}
			}
		})
	}
}

// TestRetireStartedRowInAUnitOfWorkThatRollsBackKeepsTheRow: a
// retirement belongs to the commit of its unit of work; after one that
// rolled back, a failed run hands the job to River as any start does.
func TestRetireStartedRowInAUnitOfWorkThatRollsBackKeepsTheRow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	errAbort := errors.New("abort")
	rt, runs := startWorker(t, b, options("worker"), func(ctx context.Context, job jobs.Job[pingArgs]) error {
		if job.Final() {
			return nil
		}
		err := b.uow.Do(ctx, func(ctx context.Context) error {
			if err := jobs.RetireStartedRow(ctx); err != nil {
				return err
			}
			return errAbort
		})
		return err
	})
	b.startInProcess(t, rt, pingArgs{N: 1})
	require.False(t, receive(t, runs).final)
	require.True(t, receive(t, runs).final, "River ran the job after the failed start")
	b.waitForStates(t, "test.ping", []string{"completed"})
}

// TestRetireStartedRowInAJobRiverRunsDoesNothing: River's own run of a
// job keeps its row, which River completes.
func TestRetireStartedRowInAJobRiverRunsDoesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt, runs := startWorker(t, b, options("worker"), func(ctx context.Context, _ jobs.Job[pingArgs]) error {
		return b.uow.Do(ctx, jobs.RetireStartedRow)
	})
	b.insert(t, rt, pingArgs{N: 1}, jobs.InsertOptions{})
	receive(t, runs)
	b.waitForStates(t, "test.ping", []string{"completed"})
}
