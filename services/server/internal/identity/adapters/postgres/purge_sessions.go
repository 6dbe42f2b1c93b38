package postgres

import (
	"context"
	"fmt"
	"time"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/pg"
)

// DeleteExpiredSessions deletes the sessions whose expires_at is at or
// before now (a revoked session goes too once it has expired, at the latest
// identity.session_ttl after sign-in), in batches of batchSize rows, each
// one statement on the pool over sessions_expires_at_idx, and returns how
// many it deleted. An expired session authenticates nothing, so deleting it
// changes no answer. Rows a sign-out or step-up holds are skipped and go
// with the next run. The periodic job identity.sessions_purge calls it
// (retention.purge_interval, retention.batch_size); errors are *errs.Error
// values of code internal.
func (s *Store) DeleteExpiredSessions(ctx context.Context, now time.Time, batchSize int) (int64, error) {
	n, err := pg.DeleteInBatches(ctx, batchSize, func(ctx context.Context, limit int) (int64, error) {
		tag, err := s.pool.Exec(ctx, `
			DELETE FROM sessions WHERE id IN (
				SELECT id FROM sessions WHERE expires_at <= $1
				ORDER BY expires_at LIMIT $2
				FOR UPDATE SKIP LOCKED)`, now, limit)
		return tag.RowsAffected(), err
	})
	if err != nil {
		return n, errs.Wrap(fmt.Errorf("identity: deleting expired sessions: %w", err), "identity: purging sessions failed")
	}
	return n, nil
}
