package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/jobs"
	"bothy/server/internal/platform/otel/attr"
)

// TestQueueDepthCountsAvailableJobsPerQueue: the gauge bothy.job.queue.depth
// shows, per queue, the jobs that are ready to run; a job scheduled for
// later is not backlog, and a queue without jobs shows 0.
func TestQueueDepthCountsAvailableJobsPerQueue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.runtime(t, options("api"))
	recorder(t, rt, jobs.HandlerOptions{Queue: jobs.QueueDelivery}, nil)
	b.insert(t, rt, pingArgs{N: 1}, jobs.InsertOptions{})
	b.insert(t, rt, pingArgs{N: 2}, jobs.InsertOptions{})
	b.insert(t, rt, pingArgs{N: 3}, jobs.InsertOptions{ScheduledAt: time.Now().Add(time.Hour)})

	require.NoError(t, rt.QueueDepth().Refresh(context.Background()))
	for queue, want := range map[string]float64{jobs.QueueDelivery: 2, jobs.QueueDefault: 0, jobs.QueueMaintenance: 0} {
		got, ok := b.metrics.Gauge(t, jobs.MetricQueueDepth, attr.Queue.String(queue))
		require.True(t, ok, "queue %s", queue)
		require.Equal(t, want, got, "queue %s", queue)
	}
}
