package jobs

// Stopping is closed when Stop begins, so a test can act while a graceful
// stop is under way.
func (r *Runtime) Stopping() <-chan struct{} { return r.stopping }
