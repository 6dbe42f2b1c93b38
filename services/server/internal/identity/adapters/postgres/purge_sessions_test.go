package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/identity/adapters/postgres"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// TestDeleteExpiredSessionsInBatches: with a batch size of 2, five expired
// sessions (one of them revoked) go in three batches; a live session and a
// revoked one that has not expired yet stay.
func TestDeleteExpiredSessionsInBatches(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	robin := ids.New()
	_, err := db.App.Exec(ctx, `INSERT INTO principals (id, kind, display_name, created_at) VALUES ($1, 'person', 'Robin', $2)`, robin, t0)
	require.NoError(t, err)
	_, err = db.App.Exec(ctx, `INSERT INTO people (principal_id, email, password_hash, role, created_at, updated_at)
		VALUES ($1, 'robin@example.com', 'x', 'owner', $2, $2)`, robin, t0)
	require.NoError(t, err)
	session := func(expires time.Time, revoked bool) ids.ID {
		id := ids.New()
		var revokedAt *time.Time
		if revoked {
			revokedAt = &t0
		}
		_, err := db.App.Exec(ctx, `INSERT INTO sessions (id, person_id, token_hash, created_at, expires_at, revoked_at)
			VALUES ($1, $2, sha256(convert_to($6, 'UTF8')), $3, $4, $5)`, id, robin, t0.Add(-48*time.Hour), expires, revokedAt, id.String())
		require.NoError(t, err)
		return id
	}
	for i := range 5 {
		session(t0.Add(-time.Duration(i)*time.Hour), i == 2)
	}
	live := session(t0.Add(time.Second), false)
	revokedLive := session(t0.Add(time.Hour), true)

	n, err := postgres.New(db.App).DeleteExpiredSessions(ctx, t0, 2)
	require.NoError(t, err)
	require.Equal(t, int64(5), n)
	rows, err := db.App.Query(ctx, `SELECT id FROM sessions ORDER BY expires_at`)
	require.NoError(t, err)
	var left []ids.ID
	for rows.Next() {
		var id ids.ID
		require.NoError(t, rows.Scan(&id))
		left = append(left, id)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []ids.ID{live, revokedLive}, left)

	_, err = postgres.New(db.App).DeleteExpiredSessions(ctx, t0, 0)
	require.Error(t, err, "a batch size below one is refused")
}
