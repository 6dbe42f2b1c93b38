package jobs

// ReindexedIndexes is the list of indexes River's reindexer is configured
// with.
func ReindexedIndexes() []string { return reindexedIndexes() }
