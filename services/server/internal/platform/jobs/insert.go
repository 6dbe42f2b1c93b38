package jobs

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/platform/pg"
)

// InsertOptions refine one insert.
type InsertOptions struct {
	// ScheduledAt is the earliest instant the job may run; the zero time,
	// and any instant not after now, means at once (the job is available
	// and a worker is woken at commit). The job never runs before it; a job
	// due in the future is picked up when River's scheduler makes it
	// available, so it may run somewhat later.
	ScheduledAt time.Time
	// StartInProcess asks for a job due at once to start in this process
	// right after the commit of its insert, in a goroutine of its own,
	// instead of through River's notification and fetch (ADR 0092). It
	// applies where the process works the job's queue, River runs, no stop
	// began and the queue has a free in-process slot (as many as its
	// jobs.queue.<name>.max_workers, beside River's); any other job of the
	// insert is inserted as without it. A job started in process is
	// inserted due jobs.in_process_start_fallback later, so River runs it
	// then if the process stops or crashes before the start, or the start
	// fails; a start that ends it deletes its row. A job that finds no
	// slot at the commit is made available to River at once.
	StartInProcess bool
}

// TagInProcess is the River tag of a job inserted to start in process
// (InsertOptions.StartInProcess): its row, due at its fallback time, lives
// while the start runs; one that stays past that time is a start that
// never began or failed, which River runs then.
const TagInProcess = "in_process"

var (
	// ErrNoTransaction is returned by InsertTx outside a unit of work: a job
	// committed without the rows it serves, or kept after they rolled back,
	// would be a bug. It is pg.ErrNoUnitOfWork, the error of the one guard
	// pg.RequireTx.
	ErrNoTransaction = pg.ErrNoUnitOfWork
	// ErrUnknownKind is returned by InsertTx for a kind that no Register call
	// declared.
	ErrUnknownKind = errs.New(errs.CodeInternal, "job kind not registered")
)

// Inserter inserts jobs into the ambient transaction of a unit of work. Use
// cases take it (or an interface of their own over InsertTx); it is safe
// for concurrent use.
type Inserter struct {
	r *Runtime
}

// InsertTx inserts a job of args' kind into the transaction of the unit of
// work in ctx (pg.TxFrom), in the kind's queue, so that the job exists if and
// only if the transaction commits. Workers learn
// of it at commit through LISTEN/NOTIFY. It returns ErrNoTransaction outside
// a unit of work, ErrUnknownKind for an unregistered kind, and an internal
// *errs.Error when the database refuses the insert.
func (i *Inserter) InsertTx(ctx context.Context, args Args, o InsertOptions) error {
	return i.InsertManyTx(ctx, []Args{args}, o)
}

// InsertManyTx is InsertTx for several jobs, each in its kind's queue and
// all with the options o, in one statement: a caller that schedules many
// jobs in one unit of work (the consumer round of webhooks) pays one round
// trip instead of one per job. No args inserts nothing. Its errors are
// InsertTx's; with any of them no job of the call is inserted. When every
// job starts in process (InsertOptions.StartInProcess), the insert is one
// statement that nothing later in the unit of work reads: it travels with
// the COMMIT (txn.AtCommit, ADR 0093), and a refusal of the database is
// then the error of the commit.
func (i *Inserter) InsertManyTx(ctx context.Context, args []Args, o InsertOptions) error {
	tx, err := pg.RequireTx(ctx)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return nil
	}
	now := time.Now()
	// River compares ScheduledAt with the real clock, so this does too.
	due := !o.ScheduledAt.After(now)
	here := o.StartInProcess && due && i.r.startsInProcess()
	free := map[string]int{}
	queues := map[string]string{}
	startsAll := true
	params := make([]river.InsertManyParams, len(args))
	for n, a := range args {
		ho, ok := i.r.Registered(a.Kind())
		if !ok {
			return ErrUnknownKind
		}
		io := o
		started := false
		if here {
			if _, counted := free[ho.Queue]; !counted {
				free[ho.Queue] = i.r.local.free(ho.Queue)
			}
			if free[ho.Queue] > 0 {
				free[ho.Queue]--
				io.ScheduledAt = now.Add(i.r.o.InProcessStartFallback)
				queues[a.Kind()] = ho.Queue
				started = true
			}
		}
		opts := ho.insertOpts(io)
		if started {
			opts.Tags = []string{TagInProcess}
		} else {
			startsAll = false
		}
		params[n] = river.InsertManyParams{Args: a, InsertOpts: opts}
	}
	c, err := i.r.riverClient()
	if err != nil {
		return errs.Wrap(err, "job runtime unavailable")
	}
	at := o.ScheduledAt
	if at.IsZero() {
		at = now
	}
	insert := func(ctx context.Context, tx pgx.Tx) error {
		res, err := c.InsertManyTx(ctx, tx, params)
		if err != nil {
			return errs.Wrap(err, "job insert failed")
		}
		if len(queues) == 0 {
			return nil
		}
		// The jobs to start are exactly those inserted for later: every
		// other job of the insert was due at once.
		var starts []inProcessStart
		for _, r := range res {
			if r.Job.State == rivertype.JobStateScheduled {
				starts = append(starts, inProcessStart{row: r.Job, queue: queues[r.Job.Kind], at: at.UTC()})
			}
		}
		txn.AfterCommit(ctx, func() { i.r.startInProcess(starts) })
		return nil
	}
	if len(queues) > 0 && startsAll {
		// Every job starts here, so River inserts them for later and
		// notifies no one: the insert is one statement that nothing in the
		// unit of work reads, and it travels with the COMMIT (ADR 0093).
		return txn.AtCommit(ctx, func(ctx context.Context) error {
			tx, err := pg.RequireTx(ctx)
			if err != nil {
				return err
			}
			return insert(ctx, tx)
		})
	}
	return insert(ctx, tx)
}
