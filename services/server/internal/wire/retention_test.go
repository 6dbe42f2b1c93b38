package wire_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/jobs"
	"bothy/server/internal/wire"
)

// TestRetentionJobsRegisteredInEveryRole: every role knows the retention
// kinds (River runs periodic jobs only where queues are worked, on the
// leader), all in the maintenance queue.
func TestRetentionJobsRegisteredInEveryRole(t *testing.T) {
	t.Parallel()
	for _, role := range []wire.Role{wire.RoleAPI, wire.RoleWorker, wire.RoleAll} {
		rt := newProcess(t, role).Jobs()
		for _, kind := range []string{"apps.webhook_deliveries_purge", "identity.sessions_purge", "kernel.idempotency_purge"} {
			opts, ok := rt.Registered(kind)
			require.True(t, ok, "%s registers %s", role, kind)
			require.Equal(t, jobs.QueueMaintenance, opts.Queue, kind)
		}
	}
}
