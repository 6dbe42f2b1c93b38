package pgtest_test

import (
	"context"
	"os"
	"regexp"
	"testing"
	"time"

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

func TestLockWaitsCountsTheWaitsOfItsDatabase(t *testing.T) {
	t.Parallel()
	db, other := pgtest.New(t), pgtest.New(t)
	ctx := context.Background()
	tx, err := db.Owner.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, "LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)
	require.Zero(t, db.LockWaits(t, ""))

	go func() { _, _ = db.App.Exec(ctx, "SELECT count(*) FROM messages") }()
	require.Eventually(t, func() bool { return db.LockWaits(t, "messages") == 1 }, 3*time.Second, time.Millisecond)
	require.Equal(t, 1, db.LockWaits(t, ""))
	require.Zero(t, db.LockWaits(t, "channels"))
	require.Zero(t, other.LockWaits(t, "messages"), "another test's database")
}
