package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/platform/secrets/stack"
)

// emptyDatabase creates a database without any migration in the test
// cluster, owned by the migration owner as `bothy migrate --bootstrap`
// leaves it, and returns the owner's URL of it.
func emptyDatabase(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	admin := pgtest.AdminURL(t)
	name := fmt.Sprintf("migrate_%d", os.Getpid())
	conn, err := pgx.Connect(ctx, admin)
	require.NoError(t, err)
	defer func() { _ = conn.Close(ctx) }()
	_, err = conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s OWNER %s", name, pg.OwnerRole))
	require.NoError(t, err)
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), admin)
		if err == nil {
			_, _ = c.Exec(context.Background(), fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
			_ = c.Close(context.Background())
		}
	})
	u, err := url.Parse(admin)
	require.NoError(t, err)
	u.Path = "/" + name
	db, err := pgx.Connect(ctx, u.String())
	require.NoError(t, err)
	defer func() { _ = db.Close(ctx) }()
	_, err = db.Exec(ctx, fmt.Sprintf("ALTER SCHEMA public OWNER TO %s", pg.OwnerRole))
	require.NoError(t, err)
	u.User = url.User(pg.OwnerRole)
	return u.String()
}

func TestMigrateLogsJSONLikeTheServer(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "secrets")
	_, err := stack.Init(dir, nil)
	require.NoError(t, err)
	environ := []string{
		"BOTHY_DATABASE_MIGRATION_URL=" + emptyDatabase(t),
		"BOTHY_DATABASE_PASSWORD_REF=",
		"BOTHY_DATABASE_MIGRATION_PASSWORD_REF=",
		"BOTHY_SECRETS_DIR=" + dir,
	}
	var out, errOut bytes.Buffer
	require.NoError(t, migrateCommand(context.Background(), nil, environ, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "schema is up to date")

	lines := 0
	sc := bufio.NewScanner(&errOut)
	for sc.Scan() {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec), "every log line is a JSON record: %s", sc.Text())
		require.Contains(t, rec, "msg")
		require.Contains(t, rec, "level")
		require.Contains(t, rec, "bothy.migration.version", "the line names the migration it applied: %s", sc.Text())
		lines++
	}
	require.Positive(t, lines, "applying the migrations is logged")
}
