package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/instance"
	"bothy/server/internal/instance/adapters/postgres"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func TestInstanceHasAtMostOneRow(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := postgres.New(db.App)
	ctx := context.Background()
	first := instance.Record{ID: ids.New(), Name: "bothy", SyncEpoch: ids.New()}
	inserted, err := s.CreateInstance(ctx, first, t0)
	require.NoError(t, err)
	require.True(t, inserted)
	inserted, err = s.CreateInstance(ctx, instance.Record{ID: ids.New(), Name: "other", SyncEpoch: ids.New()}, t0)
	require.NoError(t, err)
	require.False(t, inserted, "a second row is never inserted")
	got, ok, err := s.LoadInstance(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, first, got)
}

// TestSigningKeyTableRules: the checks and partial unique indexes of
// server_signing_keys hold whatever the application does.
func TestSigningKeyTableRules(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	insert := func(kid, purpose, state string, activated, notAfter, retired *time.Time, sealed []byte) error {
		_, err := db.App.Exec(ctx, `
			INSERT INTO server_signing_keys (kid, purpose, alg, state, public_key, private_key_enc, created_at, activated_at, not_after, retired_at)
			VALUES ($1, $2, 'EdDSA', $3, $4, $5, $6, $7, $8, $9)`,
			kid, purpose, state, make([]byte, 32), sealed, t0, activated, notAfter, retired)
		return err
	}
	kid := func(c byte) string {
		b := make([]byte, 32)
		for i := range b {
			b[i] = c
		}
		return string(b)
	}
	at := t0
	sealed := []byte{1}
	require.NoError(t, insert(kid('a'), "webhook_out", "active", &at, nil, nil, sealed))
	require.NoError(t, insert(kid('b'), "webhook_out", "next", nil, nil, nil, sealed))
	require.NoError(t, insert(kid('c'), "agent_token", "active", &at, nil, nil, sealed), "one active key per purpose")
	require.NoError(t, insert(kid('d'), "webhook_out", "retiring", &at, &at, nil, sealed))
	require.NoError(t, insert(kid('e'), "webhook_out", "retired", &at, &at, &at, []byte{}))

	for _, tc := range []struct {
		name  string
		err   error
		state string
	}{
		{"a second active key of a purpose", insert(kid('f'), "webhook_out", "active", &at, nil, nil, sealed), "23505"},
		{"a second next key of a purpose", insert(kid('f'), "webhook_out", "next", nil, nil, nil, sealed), "23505"},
		{"an unknown purpose", insert(kid('f'), "email", "next", nil, nil, nil, sealed), "23514"},
		{"a retiring key without activated_at", insert(kid('f'), "agent_token", "retiring", nil, &at, nil, sealed), "23514"},
		{"a retiring key without not_after", insert(kid('f'), "agent_token", "retiring", &at, nil, nil, sealed), "23514"},
		{"a retired key that keeps its private key", insert(kid('f'), "agent_token", "retired", &at, &at, &at, sealed), "23514"},
		{"a live key without private key", insert(kid('f'), "agent_token", "next", nil, nil, nil, []byte{}), "23514"},
		{"a kid that is not lower-case hex", insert("KID", "agent_token", "next", nil, nil, nil, sealed), "23514"},
	} {
		var pgErr *pgconn.PgError
		require.ErrorAs(t, tc.err, &pgErr, tc.name)
		require.Equal(t, tc.state, pgErr.Code, tc.name)
	}
	_, err := db.App.Exec(ctx, `UPDATE server_signing_keys SET alg = 'RS256' WHERE kid = $1`, kid('a'))
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	require.Equal(t, "23514", pgErr.Code, "alg is EdDSA only")
}

func TestLockKeysNeedsAUnitOfWork(t *testing.T) {
	t.Parallel()
	require.ErrorIs(t, postgres.New(pgtest.New(t).App).LockKeys(context.Background()), postgres.ErrNoUnitOfWork)
}
