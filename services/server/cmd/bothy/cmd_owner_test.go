package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/identity/domain"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/platform/secrets/stack"
)

// TestMain starts the PostgreSQL cluster of the operations commands' tests
// (owner, keys, the guide); tests without a database do not use it. Started
// by the guide test's bin/bothy, the binary is the bothy command instead.
func TestMain(m *testing.M) {
	if code, ok := asBothy(); ok {
		os.Exit(code)
	}
	pgtest.Main(m)
}

// testEnviron is the environment of a command run against db: the runtime
// role's URL, no password file, and a secrets directory with every
// generated secret (the signing keys master key among them).
func testEnviron(t *testing.T, db *pgtest.DB) []string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "secrets")
	_, err := stack.Init(dir, nil)
	require.NoError(t, err)
	return []string{
		"BOTHY_DATABASE_URL=" + db.AppURL,
		"BOTHY_DATABASE_PASSWORD_REF=",
		"BOTHY_SECRETS_DIR=" + dir,
		"BOTHY_IDENTITY_PASSWORD_HASH_MEMORY=8MiB",
		"BOTHY_IDENTITY_PASSWORD_HASH_ITERATIONS=1",
	}
}

func storedHash(t *testing.T, db *pgtest.DB, email string) (hash, role, name string) {
	t.Helper()
	require.NoError(t, db.Owner.QueryRow(context.Background(), `
		SELECT p.password_hash, p.role, pr.display_name FROM people p JOIN principals pr ON pr.id = p.principal_id
		WHERE p.email = $1`, email).Scan(&hash, &role, &name))
	return hash, role, name
}

func TestOwnerCreateReadsThePasswordFromAPipe(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	var out, errOut bytes.Buffer
	err := ownerCommand(context.Background(), []string{"create", "--email", "Robin@Example.com"}, testEnviron(t, db),
		strings.NewReader("correct horse battery staple\nsecond line\n"), false, &out, &errOut)
	require.NoError(t, err, errOut.String())

	hash, role, name := storedHash(t, db, "robin@example.com")
	require.Equal(t, "owner", role)
	require.Equal(t, "Robin", name, "the display name defaults to the local part")
	ok, err := domain.VerifyPassword(hash, "correct horse battery staple")
	require.NoError(t, err)
	require.True(t, ok, "the first line is the password")
	require.Contains(t, out.String(), "created owner Robin <robin@example.com>")
	require.NotContains(t, out.String(), "correct horse", "a given password is never printed")
	require.Contains(t, out.String(), "curl -sS -X POST http://127.0.0.1:8080/api/v1/sessions")
	require.Contains(t, out.String(), `{"email": "robin@example.com", "password": "<password>"}`)
}

func TestOwnerCreateOnATerminalPrintsAGeneratedPasswordOnce(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	var out bytes.Buffer
	env := append(testEnviron(t, db), "BOTHY_HTTP_LISTEN_ADDRESS=0.0.0.0:8443")
	require.NoError(t, ownerCommand(context.Background(), []string{"create", "--email", "robin@example.com", "--name", "Robin R."},
		env, strings.NewReader(""), true, &out, &bytes.Buffer{}))

	m := regexp.MustCompile(`password \(shown once, keep it now\): ([A-Za-z0-9_-]{32})\n`).FindStringSubmatch(out.String())
	require.NotNil(t, m, out.String())
	require.Equal(t, 1, strings.Count(out.String(), m[1]), "printed once")
	hash, _, name := storedHash(t, db, "robin@example.com")
	require.Equal(t, "Robin R.", name)
	ok, err := domain.VerifyPassword(hash, m[1])
	require.NoError(t, err)
	require.True(t, ok)
	require.Contains(t, out.String(), "http://127.0.0.1:8443/api/v1/sessions", "a wildcard listener is reached over the loopback address")
}

func TestOwnerCreateRefuses(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	env := testEnviron(t, db)
	ctx := context.Background()
	pipe := func(s string) *strings.Reader { return strings.NewReader(s) }

	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"no subcommand", nil, "", "a command is required"},
		{"no email", []string{"create"}, "correct horse battery staple", "--email is required"},
		{"an empty pipe", []string{"create", "--email", "robin@example.com"}, "", "no password"},
		{"a short password", []string{"create", "--email", "robin@example.com"}, "short\n", "password: too_short"},
		{"a bad address", []string{"create", "--email", "robin"}, "correct horse battery staple\n", "email: invalid_email"},
	} {
		err := ownerCommand(ctx, tc.args, env, pipe(tc.stdin), false, &bytes.Buffer{}, &bytes.Buffer{})
		require.ErrorContains(t, err, tc.want, tc.name)
		require.NotContains(t, err.Error(), "short\n", tc.name)
	}
	require.NoError(t, ownerCommand(ctx, []string{"create", "--email", "robin@example.com"}, env, pipe("correct horse battery staple\n"), false, &bytes.Buffer{}, &bytes.Buffer{}))
	err := ownerCommand(ctx, []string{"create", "--email", "ROBIN@example.com"}, env, pipe("correct horse battery staple\n"), false, &bytes.Buffer{}, &bytes.Buffer{})
	require.ErrorContains(t, err, "conflict (email_taken)")

	var out, errOut bytes.Buffer
	require.Equal(t, 2, run(ctx, []string{"owner"}, &out, &errOut), "a usage error exits 2")
}

func TestOwnerCreateFailsWithoutTheDatabase(t *testing.T) {
	t.Parallel()
	env := []string{"BOTHY_DATABASE_URL=postgres://bothy_app@127.0.0.1:1/bothy?sslmode=disable", "BOTHY_DATABASE_PASSWORD_REF=",
		"BOTHY_SECRETS_DIR=" + t.TempDir()}
	err := ownerCommand(context.Background(), []string{"create", "--email", "robin@example.com"}, env,
		strings.NewReader("correct horse battery staple\n"), false, &bytes.Buffer{}, &bytes.Buffer{})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "correct horse")
}

func TestOwnerCountTellsWhetherTheFirstOwnerExists(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	env := testEnviron(t, db)
	ctx := context.Background()
	count := func() string {
		var out, errOut bytes.Buffer
		require.NoError(t, ownerCommand(ctx, []string{"count"}, env, strings.NewReader(""), false, &out, &errOut), errOut.String())
		return out.String()
	}
	require.Equal(t, "0\n", count(), "a fresh database has no owner")
	require.NoError(t, ownerCommand(ctx, []string{"create", "--email", "robin@example.com"}, env,
		strings.NewReader("correct horse battery staple\n"), false, &bytes.Buffer{}, &bytes.Buffer{}))
	require.Equal(t, "1\n", count())
}
