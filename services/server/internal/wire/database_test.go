package wire_test

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/wire"
)

// TestEveryHotStatementPlans: every statement a server process's new
// connection warms with (ADR 0096) plans as bothy_app on the migrated
// schema, once each; a statement renamed or broken in a module's list
// fails here instead of going unnoticed at every connect.
func TestEveryHotStatementPlans(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	conn, err := db.App.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()

	statements := wire.HotStatements()
	require.GreaterOrEqual(t, len(statements), 25, "a post's and a delivery's statements")
	seen := map[string]bool{}
	for _, s := range statements {
		require.False(t, seen[s], "listed twice: %.60s", s)
		seen[s] = true
	}
	require.NoError(t, pg.Warm(ctx, conn.Conn(), statements))
}

// TestServingPoolOpensAndWarmsItsConnections: a server process's pool
// warms every new connection with the hot statements (ADR 0096) and, with
// database.open_all_conns (the default), opens database.max_conns
// connections by itself; without it, it opens them on first need. The
// process connects as a superuser here, which alone may read a backend's
// memory contexts.
func TestServingPoolOpensAndWarmsItsConnections(t *testing.T) {
	t.Parallel()
	asSuperuser := func(appURL string) string {
		u, err := url.Parse(appURL)
		require.NoError(t, err)
		u.User = url.User("postgres")
		return u.String()
	}
	for _, tc := range []struct {
		env  string
		want int32
	}{
		{env: "BOTHY_DATABASE_OPEN_ALL_CONNS=true", want: 3},
		{env: "BOTHY_DATABASE_OPEN_ALL_CONNS=false", want: 0},
	} {
		cfg := testConfig(t, asSuperuser, "BOTHY_DATABASE_MAX_CONNS=3", tc.env)
		p, err := wire.NewProcess(context.Background(), cfg, wire.RoleAPI, wire.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		require.NoError(t, err)
		pool := p.Pool()
		require.Equal(t, tc.want, pool.Config().MinConns, tc.env)
		if tc.want > 0 {
			require.Eventually(t, func() bool { return pool.Stat().TotalConns() == tc.want }, 10*time.Second, 5*time.Millisecond,
				"%s: the pool never opened its %d connections", tc.env, tc.want)
		}
		var warmed bool
		require.NoError(t, pool.QueryRow(context.Background(),
			`SELECT count(*) > 0 FROM pg_backend_memory_contexts WHERE name = 'index info' AND ident = 'webhook_subscriptions_pkey'`).Scan(&warmed))
		require.True(t, warmed, "%s: the connection planned the delivery's statements before its first use", tc.env)
		pool.Close()
	}
}

// TestConnectionLifetimesAreSpread: a pool's connections live
// database.conn_max_lifetime plus a random part of
// database.conn_lifetime_jitter, so the connections a server process
// opened together at its start (database.open_all_conns) are not all
// closed and opened again in the same moment an hour later.
func TestConnectionLifetimesAreSpread(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env              []string
		lifetime, jitter time.Duration
	}{
		{lifetime: time.Hour, jitter: 10 * time.Minute},
		{env: []string{"BOTHY_DATABASE_CONN_MAX_LIFETIME=20m", "BOTHY_DATABASE_CONN_LIFETIME_JITTER=0s"}, lifetime: 20 * time.Minute},
	} {
		cfg := testConfig(t, nil, tc.env...)
		p, err := wire.NewProcess(context.Background(), cfg, wire.RoleWorker, wire.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		require.NoError(t, err)
		serving := p.Pool().Config()
		require.Equal(t, tc.lifetime, serving.MaxConnLifetime, "%v: the serving pool", tc.env)
		require.Equal(t, tc.jitter, serving.MaxConnLifetimeJitter, "%v: the serving pool", tc.env)
		p.Pool().Close()
		sp, err := wire.NewSecretsProvider(cfg)
		require.NoError(t, err)
		once, err := wire.OpenAppPool(context.Background(), cfg, sp, "bothy-test")
		require.NoError(t, err)
		require.Equal(t, tc.lifetime, once.Config().MaxConnLifetime, "%v: the pool of a command", tc.env)
		require.Equal(t, tc.jitter, once.Config().MaxConnLifetimeJitter, "%v: the pool of a command", tc.env)
		once.Close()
	}
}
