package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/config"
)

// runCLI runs bothy with args and returns exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func TestConfigCheckAcceptsAValidFile(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "bothy.yaml", "webhook:\n  allowed_hosts: [hooks.example.com]\n  retry_backoff_base: 2s\n")
	code, out, errOut := runCLI(t, "config", "check", "--config", path)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "configuration is valid")
	require.Contains(t, out, "2 from the file")
}

func TestConfigCheckReportsKeysAndRulesButNoValues(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ file, want string }{
		"a failed cross check":  {"webhook:\n  retry_backoff_base: 17s\n  retry_backoff_cap: 13s\n", "webhook_backoff_order"},
		"an unknown key":        {"webhook:\n  retry_backof_base: 17s\n", "webhook.retry_backof_base"},
		"a value out of bounds": {"webhook:\n  max_consecutive_failures: 0\n", "webhook.max_consecutive_failures"},
	} {
		code, out, errOut := runCLI(t, "config", "check", "--config", writeFile(t, "bothy.yaml", tc.file))
		require.Equal(t, 1, code, name)
		require.Empty(t, out, name)
		require.Contains(t, errOut, tc.want, name)
		require.NotContains(t, errOut, "17s", name)
		require.NotContains(t, errOut, "13s", name)
	}
}

func TestConfigCheckNamesAMissingFile(t *testing.T) {
	t.Parallel()
	code, _, errOut := runCLI(t, "config", "check", "--config", filepath.Join(t.TempDir(), "missing.yaml"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "reading the configuration file")
}

func TestConfigReferencePrintsTheTables(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI(t, "config", "reference")
	require.Equal(t, 0, code)
	require.Contains(t, out, "| `webhook.retry_backoff_base` | duration | `5s` |")
	require.Contains(t, out, "| `webhook_retry_within_retention` |")
}

func TestConfigReferenceWritesBetweenTheMarkers(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "configuration.md", "# Configuration\n\n## 4. Reference\n\n"+config.BeginMarker+"\n"+config.EndMarker+"\n\n## 5. Secrets\n")
	code, _, errOut := runCLI(t, "config", "reference", "--write", path)
	require.Equal(t, 0, code, errOut)
	first, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(first), "| `sync.event_retention` |")
	require.True(t, strings.HasSuffix(string(first), config.EndMarker+"\n\n## 5. Secrets\n"))

	code, _, _ = runCLI(t, "config", "reference", "--write", path)
	require.Equal(t, 0, code)
	second, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(first), string(second), "regenerating changes nothing")

	code, _, errOut = runCLI(t, "config", "reference", "--write", writeFile(t, "plain.md", "# no markers\n"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "marker")
}

func TestConfigSchemaPrintsJSON(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI(t, "config", "schema")
	require.Equal(t, 0, code)
	require.True(t, json.Valid([]byte(out)))
	require.True(t, strings.Contains(out, `"BOTHY_WEBHOOK_HMAC_MASTER_KEY_REF"`), "the schema lists the key")
}

func TestConfigNeedsASubcommand(t *testing.T) {
	t.Parallel()
	code, _, errOut := runCLI(t, "config")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "check")
	code, _, _ = runCLI(t, "config", "frobnicate")
	require.Equal(t, 2, code)
	code, _, _ = runCLI(t, "config", "check", "--no-such-flag")
	require.Equal(t, 2, code)
}
