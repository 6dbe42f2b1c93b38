package wire

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/platform/jobs"
	eventsync "bothy/server/internal/sync"
)

// Runs reports whether the process runs the consumer name (roles worker and
// all run every registered consumer). Only tests ask it, so it lives in a
// test file (D-CL-16).
func (p *Process) Runs(name eventsync.ConsumerName) bool {
	if p.consumers == nil {
		return false
	}
	_, ok := p.consumers.Runner(name)
	return ok
}

// Consumers returns the consumer registry of a worker process (nil in role
// api), for the test that only worker roles consume. Only tests ask it
// (D-CL-16).
func (p *Process) Consumers() eventsync.Consumers {
	if p.consumers == nil {
		return nil
	}
	return p.consumers
}

// Jobs returns the job runtime, for the tests of the job registrations and
// of the drain. Only tests ask it (D-CL-16).
func (p *Process) Jobs() *jobs.Runtime { return p.jobs }

// MetricNames returns, sorted, the name of every metric instrument the
// process has created, so TestSignalsListEveryRegisteredMetric can hold
// docs/observability/signals.md 6.2 equal to it (D-CL-16).
func (p *Process) MetricNames() []string { return p.tel.MetricNames() }

// Pool is the process's pool, for the tests of its connections.
func (p *Process) Pool() *pgxpool.Pool { return p.pool }

// HotStatements is hotStatements, for the test that plans every one.
var HotStatements = hotStatements
