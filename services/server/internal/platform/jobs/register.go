package jobs

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/riverqueue/river"
)

// Args are the arguments of a job kind: a struct stored as JSON in the job
// row, whose Kind names the handler. Kinds are dotted, module first, such as
// apps.webhook_deliver; ValidateArgsType states every rule.
type Args interface {
	// Kind returns the constant kind of the args type.
	Kind() string
}

// Job is what a handler receives.
type Job[A Args] struct {
	// Args are the decoded arguments.
	Args A
	// Attempt counts the runs of this job, 1 for the first; a snooze does
	// not count.
	Attempt int
	// MaxAttempts is the attempt after which a failure discards the job.
	MaxAttempts int
	// ScheduledAt is when the job was due: the time it was inserted for,
	// or its insert time when it was due at once.
	ScheduledAt time.Time
	// inProcess marks a run started in process (InsertOptions
	// StartInProcess), which River's runs follow when it fails.
	inProcess bool
}

// Final reports whether a failure of this run discards the job: its
// attempt is the last River allows, and it is not a start in process
// (InsertOptions.StartInProcess), after whose failure River runs the job
// as usual. A handler that gives up on its last run checks it.
func (j Job[A]) Final() bool { return !j.inProcess && j.Attempt >= j.MaxAttempts }

// Handler works one job. Its context carries the deadline of the kind's
// timeout and is cancelled when the runtime stops for good. Return nil when
// done, an error to have River retry the job with its backoff (the error's
// text is kept in River's row only, never logged), Snooze to run it again
// later without counting an attempt, or Cancel to end it for good.
type Handler[A Args] func(ctx context.Context, job Job[A]) error

// HandlerOptions configure a kind.
type HandlerOptions struct {
	// Queue is one of Queues(); "" means QueueDefault.
	Queue string
	// Timeout bounds one run of the handler; 0 means Options.JobTimeout
	// (jobs.job_timeout).
	Timeout time.Duration
	// MaxAttempts is how many runs a failing job gets before it is
	// discarded; 0 means River's default (river.MaxAttemptsDefault).
	MaxAttempts int
}

// ErrRegistrationClosed is returned by Register and RegisterPeriodic once the
// runtime has inserted a job or started: the set of kinds is fixed by then.
var ErrRegistrationClosed = errors.New("jobs: registration is closed once the runtime inserts or starts")

// Register makes h the handler of the kind of A in r, in every role: role
// api needs the kind to insert it, roles worker and all to work it. A must be
// a struct type that passes ValidateArgsType with its zero value. A kind is
// registered once.
func Register[A Args](r *Runtime, h Handler[A], o HandlerOptions) error {
	var zero A
	if reflect.TypeFor[A]().Kind() != reflect.Struct {
		return errors.New("jobs: an args type must be a struct")
	}
	if err := ValidateArgsType(zero); err != nil {
		return err
	}
	if h == nil {
		return errors.New("jobs: Register needs a handler")
	}
	if o.Queue == "" {
		o.Queue = QueueDefault
	}
	switch {
	case !slices.Contains(Queues(), o.Queue):
		return fmt.Errorf("jobs: kind %s names an unknown queue", zero.Kind())
	case o.Timeout < 0:
		return fmt.Errorf("jobs: kind %s has a negative timeout", zero.Kind())
	case o.MaxAttempts < 0:
		return fmt.Errorf("jobs: kind %s has negative max attempts", zero.Kind())
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = r.o.JobTimeout
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client != nil {
		return ErrRegistrationClosed
	}
	kind := zero.Kind()
	if _, ok := r.kinds[kind]; ok {
		return fmt.Errorf("jobs: kind %s registered twice", kind)
	}
	w := &worker[A]{r: r, h: h, kind: kind, queue: o.Queue, timeout: timeout}
	if err := river.AddWorkerSafely(r.workers, w); err != nil {
		return fmt.Errorf("jobs: registering kind %s: %w", kind, err)
	}
	r.kinds[kind] = o
	r.starters[kind] = w.startInProcess
	return nil
}

// RegisterPeriodic inserts args every interval, in the queue and with the
// options of its kind, which must be registered first. The first run comes
// when the process becomes River's leader, because River's scheduler keeps
// its state in memory: without it a job of a long interval might never run
// when processes restart more often than that. Only one process of the
// cluster (the leader, in role worker or all) inserts periodic jobs; role
// api registers them too so that wiring is the same in every role.
//
// interval is at least one second (River's floor); maintenance jobs choose
// theirs from configuration.
func (r *Runtime) RegisterPeriodic(interval time.Duration, args Args) error {
	if interval < time.Second {
		return errors.New("jobs: a periodic interval is at least one second")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client != nil {
		return ErrRegistrationClosed
	}
	o, ok := r.kinds[args.Kind()]
	if !ok {
		return fmt.Errorf("jobs: periodic kind %s is not registered", args.Kind())
	}
	opts := o.insertOpts(InsertOptions{})
	r.periodic = append(r.periodic, river.NewPeriodicJob(
		river.PeriodicInterval(interval),
		func() (river.JobArgs, *river.InsertOpts) { return args, opts },
		&river.PeriodicJobOpts{RunOnStart: true},
	))
	return nil
}

// insertOpts are River's insert options for a job of a kind registered with o.
func (o HandlerOptions) insertOpts(io InsertOptions) *river.InsertOpts {
	at := io.ScheduledAt
	// River inserts any job with a ScheduledAt in state scheduled, and only
	// its periodic scheduler makes it available: a job due now would wait
	// for that period. A due job is therefore inserted without one, which
	// makes it available at once and wakes a worker through the insert
	// notification. River compares with the real clock, so this does too.
	if !at.After(time.Now()) {
		at = time.Time{}
	}
	return &river.InsertOpts{Queue: o.Queue, MaxAttempts: o.MaxAttempts, ScheduledAt: at}
}

// worker adapts a Handler to River.
type worker[A Args] struct {
	river.WorkerDefaults[A]
	r       *Runtime
	h       Handler[A]
	kind    string
	queue   string
	timeout time.Duration
}

func (w *worker[A]) Timeout(*river.Job[A]) time.Duration { return w.timeout }

func (w *worker[A]) Work(ctx context.Context, j *river.Job[A]) error {
	return w.work(ctx, Job[A]{Args: j.Args, Attempt: j.Attempt, MaxAttempts: j.MaxAttempts, ScheduledAt: j.ScheduledAt.UTC()})
}

// work runs the handler for job, River's run or a start in process, in the
// span and metrics of run; job.Final() tells run whether a failure
// discards the job.
func (w *worker[A]) work(ctx context.Context, job Job[A]) error {
	return w.r.run(ctx, w.kind, w.queue, job.Final(), func(ctx context.Context) error { return w.h(ctx, job) })
}
