package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/gopool"
	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/platform/otel"
	"bothy/server/internal/platform/otel/attr"
	"bothy/server/internal/platform/pg"
)

// inProcess holds the in-process starts of one runtime
// (InsertOptions.StartInProcess, ADR 0092): a slot per job of a queue up
// to the queue's MaxWorkers, beside River's own, the starts running, and
// the context Stop cancels after jobs.shutdown_timeout.
type inProcess struct {
	slots map[string]chan struct{}

	mu      sync.Mutex
	closed  bool // once Stop began, nothing starts any more
	running sync.WaitGroup

	ctx    context.Context
	cancel context.CancelFunc
}

// newInProcess returns the in-process starts of a runtime with options o:
// none in role api, whose runtime works no queue.
func newInProcess(o Options) *inProcess {
	ip := &inProcess{slots: map[string]chan struct{}{}}
	ip.ctx, ip.cancel = context.WithCancel(context.Background())
	if o.works() {
		for _, name := range Queues() {
			ip.slots[name] = make(chan struct{}, o.Queues[name].MaxWorkers)
		}
	}
	return ip
}

// free returns how many jobs of queue could start in process now.
func (ip *inProcess) free(queue string) int {
	s := ip.slots[queue]
	return cap(s) - len(s)
}

// begin takes a slot of queue and counts the start as running; false when
// Stop began or every slot of queue is taken.
func (ip *inProcess) begin(queue string) bool {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if ip.closed {
		return false
	}
	select {
	case ip.slots[queue] <- struct{}{}:
		ip.running.Add(1)
		return true
	default:
		return false
	}
}

// end gives back the slot of a start of queue that returned.
func (ip *inProcess) end(queue string) {
	<-ip.slots[queue]
	ip.running.Done()
}

// stop lets no start begin any more, lets the running ones finish for up
// to grace, then cancels their contexts and waits for them; ctx bounds the
// whole wait, and its error is returned when it ends first.
func (ip *inProcess) stop(ctx context.Context, grace time.Duration) error {
	ip.mu.Lock()
	ip.closed = true
	ip.mu.Unlock()
	done := make(chan struct{})
	go func() {
		ip.running.Wait()
		close(done)
	}()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		ip.cancel()
	case <-ctx.Done():
		ip.cancel()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// inProcessStart is a job to start in process once its insert committed:
// its row as River inserted it, due at its fallback time, the queue of its
// kind and the time it was due for.
type inProcessStart struct {
	row   *rivertype.JobRow
	queue string
	at    time.Time
}

// starter runs the handler of one kind for a job started in process, with
// the kind's timeout and telemetry.
type starter func(ctx context.Context, row *rivertype.JobRow, at time.Time) error

// startInProcess implements worker for an in-process start: the job's
// arguments decoded from its row as River decodes them, the attempt 1, and
// a failure never final, because River runs the job afterwards.
func (w *worker[A]) startInProcess(ctx context.Context, row *rivertype.JobRow, at time.Time) error {
	var args A
	if err := json.Unmarshal(row.EncodedArgs, &args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	return w.work(ctx, Job[A]{Args: args, Attempt: 1, MaxAttempts: row.MaxAttempts, ScheduledAt: at, inProcess: true})
}

// startsInProcess reports whether this process may start jobs in process
// now: it works the queues, River runs, and no stop began.
func (r *Runtime) startsInProcess() bool {
	r.mu.RLock()
	started := r.started
	r.mu.RUnlock()
	return started && !r.isStopping()
}

// startInProcess starts each of starts in a goroutine of its own, after
// their insert committed, each in a free slot of its queue. A job that
// finds no slot, or the runtime stopping (startsInProcess, the question
// its insert asked), is made available at once for River instead of
// waiting for its fallback time.
func (r *Runtime) startInProcess(starts []inProcessStart) {
	for _, s := range starts {
		if !r.startsInProcess() || !r.local.begin(s.queue) {
			r.makeAvailable(s.row)
			continue
		}
		// On a goroutine that outlives the run (ADR 0109): a run goes deep
		// and would grow a new goroutine's stack.
		gopool.Go(func() {
			defer r.local.end(s.queue)
			r.runInProcess(s)
		})
	}
}

// runInProcess runs the handler of s and deletes the job's row when the
// handler is done with it (it returned nil or cancelled the job for good),
// unless River has taken it meanwhile (its run then finds the work done).
// A failure or a panic makes the job available to River at once, which
// runs it as its first attempt and retries it with its backoff from
// there; a snooze leaves it due at its fallback time. A row the handler
// retired (RetireStartedRow) is gone, whatever the handler returned.
func (r *Runtime) runInProcess(s inProcessStart) {
	r.mu.RLock()
	start := r.starters[s.row.Kind]
	r.mu.RUnlock()
	row := &startedRow{id: s.row.ID}
	err := func() (err error) {
		defer func() {
			// run has recorded the panic; River never sees this run.
			if recover() != nil {
				err = panicked{}
			}
		}()
		return start(context.WithValue(r.local.ctx, startedRowKey{}, row), s.row, s.at)
	}()
	var cancelled *river.JobCancelError
	var snoozed *river.JobSnoozeError
	switch {
	case row.retired.Load():
		return
	case errors.As(err, &snoozed):
		return
	case err != nil && !errors.As(err, &cancelled):
		r.makeAvailable(s.row)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.o.ShutdownTimeout)
	defer cancel()
	if _, err := r.d.Pool.Exec(ctx, deleteStartedSQL, s.row.ID); err != nil {
		r.d.Log.LogAttrs(ctx, slog.LevelWarn, "job started in process stays for its fallback run",
			slog.String(string(attr.JobKind), s.row.Kind), otel.ErrorAttr(err))
	}
}

// startedRow is the row of a job started in process while its handler
// runs: its id, and whether a unit of work of the handler deleted it
// (RetireStartedRow) and committed.
type startedRow struct {
	id      int64
	retired atomic.Bool
}

// startedRowKey is the context key of the startedRow of a handler's run.
type startedRowKey struct{}

// RetireStartedRow deletes the row of the job started in process
// (InsertOptions.StartInProcess) whose handler runs in ctx, with the
// COMMIT of the unit of work of ctx (txn.AtCommit), unless River has taken
// it meanwhile. Once that unit of work committed, the run leaves the row
// alone: no delete after the handler returned, and after a failure no run
// through River. A handler calls it in a unit of work whose commit leaves
// a record of its own that carries what is left of the job's work to its
// end without the row, also after a failure or a crash (for a webhook
// delivery run, the lease wake-up of the claim it records, D-M2-26-87):
// the row's delete then takes no transaction of its own. A call in a unit
// of work that rolls back changes nothing.
//
// It does nothing, and returns nil, in a job River runs and after a unit
// of work of the same run retired the row. Outside a unit of work it
// returns ErrNoTransaction; a refusal of the database is the error of the
// unit of work's commit.
func RetireStartedRow(ctx context.Context) error {
	row, ok := ctx.Value(startedRowKey{}).(*startedRow)
	if !ok || row.retired.Load() {
		return nil
	}
	if _, err := pg.RequireTx(ctx); err != nil {
		return err
	}
	txn.AfterCommit(ctx, func() { row.retired.Store(true) })
	return txn.AtCommit(ctx, func(ctx context.Context) error {
		tx, err := pg.RequireTx(ctx)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, retireStartedSQL, row.id); err != nil {
			return errs.Wrap(err, "job row delete failed")
		}
		return nil
	})
}

// retireStartedSQL deletes the row of a job started in process in a unit
// of work of its handler (RetireStartedRow), unless River has taken it
// meanwhile. Unlike deleteStartedSQL it leaves the unit of work's commit
// as it is: the handler's record is what the commit must keep.
const retireStartedSQL = `DELETE FROM river_job WHERE id = $1 AND state <> 'running'`

// makeAvailableSQL makes the row of a job started in process available
// now while it still waits for its fallback time, and leaves it alone
// once River has taken it (River's JobRetry would run a completed job
// again).
const makeAvailableSQL = `UPDATE river_job SET state = 'available', scheduled_at = now()
WHERE id = $1 AND state = 'scheduled'`

// deleteStartedSQL deletes the row of a job a start in process ended,
// unless River has taken it meanwhile (its run then finds the work done).
// Its commit waits for no WAL flush (synchronous_commit off for this
// transaction only): a delete lost in a crash leaves a job whose run finds
// nothing to do.
const deleteStartedSQL = `DELETE FROM river_job
WHERE id = $1 AND state <> 'running' AND set_config('synchronous_commit', 'off', true) IS NOT NULL`

// makeAvailable makes the job of row, inserted for a start in process
// that cannot begin or failed, available at once, so River runs it now
// instead of at its fallback time; a row River has taken meanwhile (the
// start outlived its fallback time) stays as it is. When that fails the
// job still runs at its fallback time.
func (r *Runtime) makeAvailable(row *rivertype.JobRow) {
	ctx, cancel := context.WithTimeout(context.Background(), r.o.ShutdownTimeout)
	defer cancel()
	if _, err := r.d.Pool.Exec(ctx, makeAvailableSQL, row.ID); err != nil {
		r.d.Log.LogAttrs(ctx, slog.LevelWarn, "job started in process stays for its fallback run",
			slog.String(string(attr.JobKind), row.Kind), otel.ErrorAttr(err))
	}
}
