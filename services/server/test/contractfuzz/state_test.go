package contractfuzz_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// tableState is the row count and a hash of the rows of one table.
type tableState struct {
	Rows int64
	Hash string
}

// snapshot returns the state of every table of the database (every schema
// but the catalogues, partitions included), read as the migration owner so
// no table is hidden from it. Rows hash in their text form, sorted, so the
// same rows give the same hash.
func (e *edge) snapshot(t testing.TB) map[string]tableState {
	t.Helper()
	ctx := context.Background()
	pool := e.w.Services.DB.Owner
	rows, err := pool.Query(ctx, `SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
		ORDER BY 1`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.NotEmpty(t, tables)
	out := make(map[string]tableState, len(tables))
	for _, table := range tables {
		var s tableState
		q := fmt.Sprintf(`SELECT count(*), coalesce(md5(string_agg(t::text, E'\n' ORDER BY t::text)), '') FROM %s t`, table)
		require.NoError(t, pool.QueryRow(ctx, q).Scan(&s.Rows, &s.Hash), table)
		out[table] = s
	}
	return out
}

// one returns the ID of the first row of a query of the test world, as
// text, failing when there is none.
func (e *edge) one(t testing.TB, query string) string {
	t.Helper()
	var id string
	require.NoError(t, e.w.Services.DB.Owner.QueryRow(context.Background(), query).Scan(&id), query)
	return id
}

// subscriptionID is the ID of Tracker's webhook subscription.
func (e *edge) subscriptionID(t testing.TB) string {
	return e.one(t, `SELECT id::text FROM webhook_subscriptions ORDER BY id LIMIT 1`)
}
