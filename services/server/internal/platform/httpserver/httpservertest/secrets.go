package httpservertest

import (
	"context"
	"encoding/hex"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// SecretPiece is the length of the pieces RequireSecretAbsent looks for.
const SecretPiece = 8

// RequireSecretAbsent asserts with SQL that no row of the given tables holds
// any piece of secret: every run of SecretPiece bytes of it, as text and as
// the hex that row_to_json prints for bytea columns. Use it for one-time
// secrets (R-API-26, SEC-SEC-3): idempotency_keys, audit_events and the
// tables of the feature.
func RequireSecretAbsent(t testing.TB, pool *pgxpool.Pool, secret string, tables ...string) {
	t.Helper()
	require.GreaterOrEqual(t, len(secret), SecretPiece, "the secret is shorter than one piece")
	var pieces []string
	for i := 0; i+SecretPiece <= len(secret); i++ {
		p := secret[i : i+SecretPiece]
		pieces = append(pieces, p, hex.EncodeToString([]byte(p)))
	}
	for _, table := range tables {
		// The pieces found and the rows around them, so that a failure
		// tells what matched where (a test secret, safe to print).
		var found []string
		err := pool.QueryRow(context.Background(), `
			SELECT coalesce(array_agg(piece || ' in ' || left(row_to_json(k)::text, 2000)), '{}')
			FROM `+pgx.Identifier{table}.Sanitize()+` AS k, unnest($1::text[]) AS piece
			WHERE strpos(row_to_json(k)::text, piece) > 0`, pieces).Scan(&found)
		require.NoError(t, err, table)
		require.Empty(t, found, "a piece of the secret is in %s", table)
	}
}
