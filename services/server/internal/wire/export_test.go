package wire

import (
	"github.com/jackc/pgx/v5/pgxpool"

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

// Pool is the process's pool, for the tests of its connections.
func (p *Process) Pool() *pgxpool.Pool { return p.pool }

// HotStatements is hotStatements, for the test that plans every one.
var HotStatements = hotStatements
