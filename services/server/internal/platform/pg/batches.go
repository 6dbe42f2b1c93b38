package pg

import (
	"context"
	"errors"
)

// DeleteInBatches runs deleteBatch with limit batchSize until a batch
// deletes fewer rows than that, and returns the rows deleted in all. It is
// the loop of every retention purge (issue 13 item 3): each batch is one
// statement on the pool, outside any unit of work, so its row locks end
// with it and concurrent writers wait at most one batch. ctx ends the loop
// between batches; the rows deleted so far stay deleted and are counted.
// An error of deleteBatch ends it too, with the count so far. batchSize
// below one is a programming error and returns an error at once.
func DeleteInBatches(ctx context.Context, batchSize int, deleteBatch func(ctx context.Context, limit int) (int64, error)) (int64, error) {
	if batchSize < 1 {
		return 0, errors.New("pg: DeleteInBatches needs a batch size of at least one")
	}
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n, err := deleteBatch(ctx, batchSize)
		total += n
		if err != nil || n < int64(batchSize) {
			return total, err
		}
	}
}
