package pg_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

// warmPage is a statement on messages in sqlc's form: planning it opens
// every index of the table.
const warmPage = `-- name: WarmPage :one
SELECT id FROM messages WHERE channel_id = $1 ORDER BY created_at DESC LIMIT 1`

// superuserURL is a superuser's URL of db: only a superuser reads another
// backend's memory contexts, and the test reads its own connection's.
func superuserURL(t *testing.T, db *pgtest.DB) string {
	t.Helper()
	u, err := url.Parse(pgtest.AdminURL(t))
	require.NoError(t, err)
	u.Path = "/" + db.Name
	return u.String()
}

// indexLoaded reports whether the backend of a connection of pool has the
// relcache entry of index (the memory context PostgreSQL names after it).
func indexLoaded(t *testing.T, pool *pgxpool.Pool, index string) bool {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT count(*) FROM pg_backend_memory_contexts WHERE name = 'index info' AND ident = $1`, index).Scan(&n))
	return n > 0
}

// TestOpenWarmsEveryConnectionBeforeItsFirstUse: a pool opened with Warm
// plans those statements on each new connection before handing it out, so
// its first real statement finds the tables and indexes in the backend's
// caches (ADR 0096); without Warm the same first use finds them cold. With
// MinConns the pool opens its connections without being asked.
func TestOpenWarmsEveryConnectionBeforeItsFirstUse(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()

	cold, err := pg.Open(ctx, pg.Options{URL: superuserURL(t, db), MaxConns: 1})
	require.NoError(t, err)
	defer cold.Close()
	require.False(t, indexLoaded(t, cold, "messages_channel_page_idx"), "a connection without Warm has not planned on messages")

	warm, err := pg.Open(ctx, pg.Options{URL: superuserURL(t, db), MaxConns: 2, MinConns: 2, Warm: []string{warmPage}})
	require.NoError(t, err)
	defer warm.Close()
	require.Eventually(t, func() bool { return warm.Stat().TotalConns() == 2 }, 10*time.Second, 5*time.Millisecond,
		"the pool opens MinConns connections by itself")
	require.True(t, indexLoaded(t, warm, "messages_channel_page_idx"), "the new connection planned the warm statement")
	require.True(t, indexLoaded(t, warm, "messages_thread_page_idx"), "planning opened every index of the table")
}

// TestWarmNamesAStatementThatDoesNotPlan: Warm plans every statement, goes on
// after one that fails and names it in its error; the connection stays
// usable, and a pool whose warm-up fails still hands out its connections.
func TestWarmNamesAStatementThatDoesNotPlan(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()

	conn, err := db.App.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	broken := "-- name: BrokenOnPurpose :many\nSELECT nothing FROM nowhere WHERE id = $1"
	err = pg.Warm(ctx, conn.Conn(), []string{broken, warmPage})
	require.ErrorContains(t, err, "BrokenOnPurpose")
	require.ErrorContains(t, err, `relation "nowhere" does not exist`)
	require.NotContains(t, err.Error(), "WarmPage", "the statement after the broken one planned")
	var one int
	require.NoError(t, conn.QueryRow(ctx, `SELECT 1`).Scan(&one), "the connection is usable after a failed warm-up")

	pool, err := pg.Open(ctx, pg.Options{URL: db.AppURL, MaxConns: 1, Warm: []string{broken}})
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, pool.QueryRow(ctx, `SELECT 1`).Scan(&one), "a warm-up that fails does not keep a connection from use")
}

// TestFillReturnsWithEveryConnectionOpenAndWarm: Fill returns once the
// pool holds MinConns connections, none still being opened, each of which
// planned the warm statements (ADR 0096), so nothing the caller starts
// afterwards waits for a connection or shares the machine with a warm-up.
func TestFillReturnsWithEveryConnectionOpenAndWarm(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	pool, err := pg.Open(ctx, pg.Options{URL: superuserURL(t, db), MaxConns: 4, MinConns: 4, Warm: []string{warmPage}, Lazy: true})
	require.NoError(t, err)
	defer pool.Close()

	opened, err := pg.Fill(ctx, pool)
	require.NoError(t, err)
	require.Equal(t, 4, opened)
	stat := pool.Stat()
	require.Equal(t, int32(4), stat.TotalConns(), "every connection open")
	require.Zero(t, stat.ConstructingConns(), "none still being opened")
	conns := pool.AcquireAllIdle(ctx)
	require.Len(t, conns, 4, "every connection idle, ready for use")
	for _, c := range conns {
		var n int
		require.NoError(t, c.QueryRow(ctx, `SELECT count(*) FROM pg_backend_memory_contexts WHERE name = 'index info' AND ident = $1`,
			"messages_channel_page_idx").Scan(&n))
		require.Positive(t, n, "each connection planned the warm statement")
		c.Release()
	}
}

// TestFillStopsAtAConnectionTheDatabaseRefuses: when PostgreSQL refuses
// a connection (here the role's CONNECTION LIMIT of 2, SQLSTATE 53300, as
// max_connections would), Fill returns how many it held and the refusal;
// the pool keeps and serves those. The pool holds a connection before
// Fill: pgxpool opens its MinConns at once in the background as soon as
// it is made, and connections opened at once may all be refused, since
// PostgreSQL counts the backends it is refusing while another checks the
// limit (pgtest.LimitedAppURL); once those attempts are over, one opened
// alone is not.
func TestFillStopsAtAConnectionTheDatabaseRefuses(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	pool, err := pg.Open(ctx, pg.Options{URL: db.LimitedAppURL(t, 2), MaxConns: 4, MinConns: 4, Lazy: true})
	require.NoError(t, err)
	defer pool.Close()
	require.Eventually(t, func() bool {
		c, err := pool.Acquire(ctx)
		if err != nil {
			return false
		}
		c.Release()
		return true
	}, 10*time.Second, 10*time.Millisecond, "a connection within the role's limit")
	opened, err := pg.Fill(ctx, pool)
	require.True(t, opened >= 1 && opened <= 2, "the one it had and at most one more: %d, %v", opened, err)
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr, "PostgreSQL's refusal, not a cancellation: %v", err)
	require.Equal(t, "53300", pgErr.Code)
	var one int
	require.NoError(t, pool.QueryRow(ctx, `SELECT 1`).Scan(&one), "the pool serves with what it has")
}
