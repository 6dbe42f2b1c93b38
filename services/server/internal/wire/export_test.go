package wire

import eventsync "bothy/server/internal/sync"

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
