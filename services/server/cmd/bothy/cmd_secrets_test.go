package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/secrets/stack"
)

func TestSecretsInitCreatesThenKeeps(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "secrets")
	code, out, errOut := runCLI(t, "secrets", "init", "--dir", dir)
	require.Equal(t, 0, code, errOut)
	for _, e := range stack.Catalogue() {
		require.Contains(t, out, "created "+e.Name+"\n")
		v, err := os.ReadFile(filepath.Join(dir, e.Name))
		require.NoError(t, err)
		require.NotContains(t, out, strings.TrimSpace(string(v)), "a value is never printed")
		st, err := os.Stat(filepath.Join(dir, e.Name))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	}

	code, out, _ = runCLI(t, "secrets", "init", "--dir", dir)
	require.Equal(t, 0, code)
	require.NotContains(t, out, "created ")
	for _, e := range stack.Catalogue() {
		require.Contains(t, out, "kept "+e.Name+"\n")
	}
}

func TestSecretsInitTakesTheDirectoryFromTheConfiguration(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state", "secrets")
	cfg := writeFile(t, "bothy.yaml", "secrets:\n  dir: "+dir+"\n")
	code, out, errOut := runCLI(t, "secrets", "init", "--config", cfg)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, dir)
	_, err := os.Stat(filepath.Join(dir, "webhook_hmac_master_key"))
	require.NoError(t, err)
}

func TestSecretsInitRefusesAnOpenDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	code, _, errOut := runCLI(t, "secrets", "init", "--dir", dir)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "secrets.dir")
}

func TestSecretsNeedsInit(t *testing.T) {
	t.Parallel()
	code, _, errOut := runCLI(t, "secrets")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "init")
}
