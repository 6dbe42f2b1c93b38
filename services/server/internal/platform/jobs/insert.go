package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"bothy/server/internal/kernel/errs"
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
}

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

// JobID names one inserted job: InsertTx returns it and DeleteTx takes it.
type JobID int64

// InsertTx inserts a job of args' kind into the transaction of the unit of
// work in ctx (pg.TxFrom), in the kind's queue, so that the job exists if and
// only if the transaction commits, and returns the job's ID. Workers learn
// of it at commit through LISTEN/NOTIFY. It returns ErrNoTransaction outside
// a unit of work, ErrUnknownKind for an unregistered kind, and an internal
// *errs.Error when the database refuses the insert.
func (i *Inserter) InsertTx(ctx context.Context, args Args, o InsertOptions) (JobID, error) {
	ids, err := i.insert(ctx, []Args{args}, o)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// InsertManyTx is InsertTx for several jobs, each in its kind's queue and
// all with the options o, in one statement: a caller that schedules many
// jobs in one unit of work (the consumer round of webhooks) pays one round
// trip instead of one per job. No args inserts nothing. Its errors are
// InsertTx's; with any of them no job of the call is inserted.
func (i *Inserter) InsertManyTx(ctx context.Context, args []Args, o InsertOptions) error {
	_, err := i.insert(ctx, args, o)
	return err
}

// insert inserts args in one statement and returns the IDs of the jobs in
// the order of args.
func (i *Inserter) insert(ctx context.Context, args []Args, o InsertOptions) ([]JobID, error) {
	tx, err := pg.RequireTx(ctx)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		return nil, nil
	}
	params := make([]river.InsertManyParams, len(args))
	for n, a := range args {
		ho, ok := i.r.Registered(a.Kind())
		if !ok {
			return nil, ErrUnknownKind
		}
		params[n] = river.InsertManyParams{Args: a, InsertOpts: ho.insertOpts(o)}
	}
	c, err := i.r.riverClient()
	if err != nil {
		return nil, errs.Wrap(err, "job runtime unavailable")
	}
	res, err := c.InsertManyTx(ctx, tx, params)
	if err != nil {
		return nil, errs.Wrap(err, "job insert failed")
	}
	out := make([]JobID, len(res))
	for n, r := range res {
		out[n] = JobID(r.Job.ID)
	}
	return out, nil
}

// DeleteTx deletes the job id in the transaction of the unit of work in
// ctx, so that it never runs if the transaction commits and stays if it
// rolls back. A job that is running, or that is gone (it ran and River
// removed it, or it was deleted before), is left alone: deleted is false
// and the error nil, because a caller that no longer needs a job has
// nothing to do about one it cannot stop. A job that ran to its end and is
// still kept (completed, discarded, cancelled) is deleted like one that
// waits. It returns ErrNoTransaction outside a unit of work and an
// internal *errs.Error when the database fails.
func (i *Inserter) DeleteTx(ctx context.Context, id JobID) (deleted bool, err error) {
	tx, err := pg.RequireTx(ctx)
	if err != nil {
		return false, err
	}
	c, err := i.r.riverClient()
	if err != nil {
		return false, errs.Wrap(err, "job runtime unavailable")
	}
	_, err = c.JobDeleteTx(ctx, tx, int64(id))
	switch {
	case errors.Is(err, rivertype.ErrJobRunning), errors.Is(err, rivertype.ErrNotFound):
		return false, nil
	case err != nil:
		return false, errs.Wrap(err, "job delete failed")
	}
	return true, nil
}
