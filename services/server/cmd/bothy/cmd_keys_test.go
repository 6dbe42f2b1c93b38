package main

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/pg/pgtest"
)

func TestKeysRotatePublishesANextKey(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	env := testEnviron(t, db)
	ctx := context.Background()

	var out bytes.Buffer
	require.NoError(t, keysCommand(ctx, []string{"rotate", "--purpose", "webhook_out"}, env, &out, &bytes.Buffer{}))
	kid := regexp.MustCompile(`^webhook_out: created_next ([0-9a-f]{32})\n`).FindStringSubmatch(out.String())
	require.NotNil(t, kid, out.String())
	require.Regexp(t, `  active   [0-9a-f]{32}\n  next     `+kid[1]+`\n`, out.String())
	require.Contains(t, out.String(), "next step due at ")

	var state string
	require.NoError(t, db.Owner.QueryRow(ctx, `SELECT state FROM server_signing_keys WHERE kid = $1`, kid[1]).Scan(&state))
	require.Equal(t, "next", state)
	var instances, active int
	require.NoError(t, db.Owner.QueryRow(ctx, `SELECT count(*) FROM instance`).Scan(&instances))
	require.NoError(t, db.Owner.QueryRow(ctx, `SELECT count(*) FROM server_signing_keys WHERE state = 'active'`).Scan(&active))
	require.Equal(t, 1, instances, "the command ensures the instance first")
	require.Equal(t, 2, active, "one active key per purpose")

	out.Reset()
	require.NoError(t, keysCommand(ctx, []string{"rotate", "--purpose", "webhook_out"}, env, &out, &bytes.Buffer{}))
	require.Contains(t, out.String(), "webhook_out: nothing to do now\n", "the next key is younger than agent.jwks_max_age")
}

func TestKeysRotateNeedsAPurpose(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"rotate"}, {"rotate", "--purpose", "email"}, {"list"}} {
		err := keysCommand(context.Background(), args, nil, &bytes.Buffer{}, &bytes.Buffer{})
		require.ErrorIs(t, err, errUsage, "%v", args)
	}
}
