package postgres

import (
	"context"
	"fmt"
	"math"
	"time"

	"bothy/server/internal/identity/adapters/postgres/db"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/pg"
)

// DeleteExpiredSessions deletes the sessions whose expires_at is at or
// before now (a revoked session goes too once it has expired, at the latest
// identity.session_ttl after sign-in), in batches of batchSize rows, each
// one statement on the pool (query SessionDeleteExpired) over
// sessions_expires_at_idx, and returns how many it deleted. An expired
// session authenticates nothing, so deleting it changes no answer. Rows a sign-out or step-up holds are skipped and go
// with the next run. The periodic job identity.sessions_purge calls it
// (retention.purge_interval, retention.batch_size); errors are *errs.Error
// values of code internal.
func (s *Store) DeleteExpiredSessions(ctx context.Context, now time.Time, batchSize int) (int64, error) {
	q := db.New(s.pool)
	n, err := pg.DeleteInBatches(ctx, batchSize, func(ctx context.Context, limit int) (int64, error) {
		return q.SessionDeleteExpired(ctx, db.SessionDeleteExpiredParams{Before: now, Batch: int32(min(limit, math.MaxInt32))})
	})
	if err != nil {
		return n, errs.Wrap(fmt.Errorf("identity: deleting expired sessions: %w", err), "identity: purging sessions failed")
	}
	return n, nil
}
