package jobs

// Stopping is closed when Stop begins, so a test can act while a graceful
// stop is under way.
func (r *Runtime) Stopping() <-chan struct{} { return r.stopping }

// ReindexedIndexes is the list of indexes River's reindexer is configured
// with.
func ReindexedIndexes() []string { return reindexedIndexes() }
