package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQueryNamesNameTheStatementsAsPgStatStatementsKeepsThem(t *testing.T) {
	// sqlc's generated files hold each query as the server gets it, after
	// the comment that names it.
	dir := t.TempDir()
	gen := filepath.Join(dir, "apps", "adapters", "postgres", "db")
	require.NoError(t, os.MkdirAll(gen, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(gen, "deliveries.sql.gen.go"), []byte("package db\n\n"+
		"const deliveryHeads = `-- name: DeliveryHeads :many\n\n"+
		"SELECT id FROM webhook_deliveries\n"+
		"WHERE subscription_id = $1 AND status = 'pending' -- pending only\n"+
		"ORDER BY event_seq\n"+
		"LIMIT $2::int\n`\n\n"+
		"const deliveryFinish = `-- name: DeliveryFinish :exec\n"+
		"UPDATE webhook_deliveries SET status = 'succeeded', attempt = 1, note = NULL, ok = true WHERE id = $1\n`\n\n"+
		"const subscriptionsLive = `-- name: SubscriptionsLive :many\n"+
		"SELECT id FROM webhook_subscriptions WHERE state IN ('active', 'paused') AND id = $1\n`\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(gen, "models.gen.go"),
		[]byte("package db\n\nconst notAQuery = `-- name: NotAQuery :one\nSELECT 2\n`\n"), 0o644))

	names, err := readQueryNames(dir)
	require.NoError(t, err)
	// pg_stat_statements keeps a statement without its leading comment,
	// with its constants as parameters numbered after the client's.
	require.Equal(t, "DeliveryHeads", names.of(`SELECT id FROM webhook_deliveries
WHERE subscription_id = $1 AND status = $3 -- pending only
ORDER BY event_seq
LIMIT $2::int`))
	require.Equal(t, "DeliveryFinish",
		names.of("UPDATE webhook_deliveries SET status = $2, attempt = $3, note = $4, ok = $5 WHERE id = $1"))
	require.Equal(t, "SubscriptionsLive",
		names.of("SELECT id FROM webhook_subscriptions WHERE state IN ($2 /*, ... */) AND id = $1"),
		"PostgreSQL 18 keeps a list of constants as one parameter")
	require.Empty(t, names.of("SELECT 2"), "only the generated query files are read")
	require.Empty(t, names.of("SELECT id FROM webhook_deliveries WHERE id = $1"), "a statement of no query file has no name")

	_, err = readQueryNames(filepath.Join(dir, "missing"))
	require.Error(t, err)
}

func TestQueryNamesNameTheQueriesOfThisRepository(t *testing.T) {
	// The query files of the server module: every one is named, and the
	// shapes of two queries never collide.
	names, err := readQueryNames(filepath.Join("..", "..", "internal"))
	require.NoError(t, err)
	require.Greater(t, len(names), 50)
	for shape, name := range names {
		require.NotContains(t, name, " or ", "two queries of the same shape: %s", shape)
	}
	require.Equal(t, "MessageInsert", names.of(strings.TrimSpace(messageInsertAsKept)))
}

// messageInsertAsKept is chat's MessageInsert as pg_stat_statements keeps
// it (from a run of make bench-e2e).
const messageInsertAsKept = `
INSERT INTO messages (id, space_id, channel_id, thread_id, author_id, text, created_at)
SELECT unnest($1::uuid[]), unnest($2::uuid[]), unnest($3::uuid[]), unnest($4::uuid[]),
       unnest($5::uuid[]), unnest($6::text[]), unnest($7::timestamptz[])`

func TestWriteStatementsNamesAStatementByItsQuery(t *testing.T) {
	stmts := []statement{
		{Query: "SELECT id FROM webhook_deliveries WHERE id = $1", Name: "DeliveryByID", Calls: 20, TotalMS: 4},
		{Query: "INSERT INTO river_job (id) VALUES ($1)", Calls: 10, TotalMS: 2},
	}
	var b strings.Builder
	writeStatements(&b, stmts, 10, 2, 60)
	require.Contains(t, b.String(), "  DeliveryByID\n", "the name instead of the text")
	require.Contains(t, b.String(), "  INSERT INTO river_job (id) VALUES ($1)\n", "the text without a name")
}
