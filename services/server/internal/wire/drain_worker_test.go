package wire_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/jobs"
	"bothy/server/internal/wire"
)

// drainProbe is a job kind of this test only.
type drainProbe struct {
	N int `json:"n"`
}

func (drainProbe) Kind() string { return "test.drain_probe" }

// TestSIGTERMLetsTheWorkersInFlightJobFinish: on SIGTERM a worker stops
// fetching at once, lets the running job finish (its context is not
// cancelled within jobs.shutdown_timeout) and only then returns; a job
// inserted after SIGTERM stays available for the next worker.
func TestSIGTERMLetsTheWorkersInFlightJobFinish(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// One worker in the queue: while the first job runs, River has no slot
	// to fetch the second into, so only a River that did not stop could
	// start it once the first ends.
	b := newRunBundle(t, w, wire.RoleWorker, wire.Deps{}, "BOTHY_JOBS_QUEUE_DEFAULT_MAX_WORKERS=1")
	started := make(chan int, 2)
	release := make(chan struct{})
	cancelled := make(chan bool, 2)
	require.NoError(t, jobs.Register(b.proc.Jobs(), func(ctx context.Context, j jobs.Job[drainProbe]) error {
		started <- j.Args.N
		select {
		case <-release:
			cancelled <- false
			return nil
		case <-ctx.Done():
			cancelled <- true
			return ctx.Err()
		}
	}, jobs.HandlerOptions{Queue: jobs.QueueDefault}))
	b.start(t)
	waitReady(t, b.operator)
	insert := func(n int) {
		require.NoError(t, b.proc.Modules().UnitOfWork.Do(context.Background(), func(ctx context.Context) error {
			err := b.proc.Jobs().Inserter().InsertTx(ctx, drainProbe{N: n}, jobs.InsertOptions{})
			return err
		}))
	}
	insert(1)
	require.Equal(t, 1, <-started)

	b.cancel() // SIGTERM
	waitDraining(t, b.operator)
	<-b.proc.Jobs().Stopping()
	insert(2)
	require.False(t, b.returned(), "Run waits for the in-flight job")

	close(release)
	require.NoError(t, b.wait())
	require.False(t, <-cancelled, "the in-flight job finished, it was not cancelled")
	var states []string
	rows, err := w.db.App.Query(context.Background(), `SELECT state FROM river_job WHERE kind = 'test.drain_probe' ORDER BY id`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var st string
		require.NoError(t, rows.Scan(&st))
		states = append(states, st)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"completed", "available"}, states, "the job inserted after SIGTERM was not fetched")
	require.Len(t, started, 0)
}
