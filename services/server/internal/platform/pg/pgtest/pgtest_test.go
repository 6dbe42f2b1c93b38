package pgtest_test

import (
	"context"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestEachTestGetsItsOwnDatabase(t *testing.T) {
	t.Parallel()
	a, b := pgtest.New(t), pgtest.New(t)
	require.NotEqual(t, a.Name, b.Name)
	ctx := context.Background()
	_, err := a.Owner.Exec(ctx, `CREATE TABLE only_in_a (x int)`)
	require.NoError(t, err)
	var n int
	require.NoError(t, b.Owner.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'`).Scan(&n))
	require.Zero(t, n)
}

func TestPoolsConnectAsTheirRoles(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	var who string
	require.NoError(t, db.App.QueryRow(ctx, `SELECT current_user`).Scan(&who))
	require.Equal(t, "bothy_app", who)
	require.NoError(t, db.Owner.QueryRow(ctx, `SELECT current_user`).Scan(&who))
	require.Equal(t, "bothy_owner", who)
	var version int
	require.NoError(t, db.App.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&version))
	require.GreaterOrEqual(t, version, 180000)
}

func TestPinnedVersionMatchesScripts(t *testing.T) {
	t.Parallel()
	env, err := os.ReadFile("../../../../../../tools/pg/env.sh")
	require.NoError(t, err)
	m := regexp.MustCompile(`PG_NPM_VERSION="([^"]+)"`).FindSubmatch(env)
	require.NotNil(t, m, "tools/pg/env.sh sets PG_NPM_VERSION")
	require.Equal(t, pgtest.PostgresVersion, string(m[1]))
}
