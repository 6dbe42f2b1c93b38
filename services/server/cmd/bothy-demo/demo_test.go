package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/config"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/platform/secrets/stack"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// demoEnviron is the environment of a demo over a pgtest database:
// database.url and secrets.dir (generated as `bothy secrets init` does), the
// cheapest argon2id parameters (the race detector makes hashing slow), and
// short shutdown timeouts.
func demoEnviron(t *testing.T) []string {
	t.Helper()
	db := pgtest.New(t)
	dir := filepath.Join(t.TempDir(), "secrets")
	require.NoError(t, os.Mkdir(dir, 0o700))
	_, err := stack.Init(dir, nil)
	require.NoError(t, err)
	set := func(key, value string) string { return config.EnvName(key) + "=" + value }
	return []string{
		set("database.url", db.AppURL),
		set("secrets.dir", dir),
		set("identity.password_hash_memory", "8MiB"),
		set("identity.password_hash_iterations", "1"),
		set("log.level", "warn"),
		set("http.shutdown_timeout", "5s"),
		set("jobs.shutdown_timeout", "5s"),
	}
}

func TestDemoVerifiesEveryDeliveryAndTheRevokedGrantEndsDead(t *testing.T) {
	t.Parallel()
	var out, serverLog bytes.Buffer
	res, err := runDemo(context.Background(), demoOptions{
		Environ: demoEnviron(t), Out: &out, ServerLog: &serverLog, Messages: 3, Timeout: 2 * time.Minute,
	})
	require.NoError(t, err, "demo log:\n%s\nserver log:\n%s", out.String(), serverLog.String())

	require.Len(t, res.Verified, 3)
	seen := map[string]bool{}
	for _, d := range res.Verified {
		require.True(t, d.V1, "v1 verified")
		require.True(t, d.V1A, "v1a verified")
		require.Equal(t, "message.created", d.Type)
		require.Equal(t, 204, d.Status)
		require.False(t, seen[d.WebhookID], "each event arrives once")
		seen[d.WebhookID] = true
	}
	require.Equal(t, "dead", res.Dead.Status)
	require.Equal(t, "not_authorized", res.Dead.LastError)
	require.Equal(t, "message.created", res.Dead.EventType)
	require.False(t, seen[res.Dead.EventID], "the event after the revocation never reached the receiver")
	require.Equal(t, 3, res.Requests)

	log := out.String()
	require.Equal(t, 3, strings.Count(log, "v1 HMAC-SHA256 ok, v1a Ed25519 ok"), log)
	require.Contains(t, log, "last_error not_authorized")
}

func TestDemoLogHoldsNoSecret(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	_, err := runDemo(context.Background(), demoOptions{
		Environ: demoEnviron(t), Out: &out, ServerLog: &bytes.Buffer{}, Messages: 1, Timeout: 2 * time.Minute,
	})
	require.NoError(t, err, out.String())
	log := out.String()
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`whsec_[A-Za-z0-9+/=]`),    // an HMAC secret
		regexp.MustCompile(`whpk_[A-Za-z0-9+/=]`),     // a public key (not secret, but not for the log)
		regexp.MustCompile(`\bbt[spa]_[A-Za-z0-9_-]`), // a session, personal or app token
		regexp.MustCompile(`(?i)bearer `),
		regexp.MustCompile(`v1a?,[A-Za-z0-9+/]{8}`), // a signature
	} {
		require.False(t, re.MatchString(log), "%s in\n%s", re, log)
	}
	// Generated passwords are 32 characters of base64url; the only long
	// words of the log are UUIDs.
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	for _, word := range regexp.MustCompile(`[A-Za-z0-9_-]{24,}`).FindAllString(log, -1) {
		require.Regexp(t, uuid, word)
	}
}

func TestDemoRefusesAMessageCountOutsideItsTexts(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, len(demoMessages)} {
		_, err := runDemo(context.Background(), demoOptions{Messages: n, Timeout: time.Second})
		require.Error(t, err, n)
	}
}
