package hmackey_test

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/adapters/hmackey"
	"bothy/server/internal/platform/secrets"
)

func provider(t *testing.T) *secrets.Provider {
	t.Helper()
	p, err := secrets.NewProvider(secrets.Options{})
	require.NoError(t, err)
	return p
}

func TestKeyDecodesTheGeneratedHexSecret(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	want := make([]byte, 32)
	for i := range want {
		want[i] = byte(i)
	}
	path := filepath.Join(dir, "webhook_hmac_master_key")
	require.NoError(t, os.WriteFile(path, []byte(hex.EncodeToString(want)+"\n"), 0o600))

	got, err := hmackey.New(provider(t), "file:"+path).Key(context.Background())
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func TestKeyRejectsShortOrMalformedKeysWithoutPrintingThem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	require.NoError(t, os.WriteFile(short, []byte("00112233"), 0o600))
	_, err := hmackey.New(provider(t), "file:"+short).Key(context.Background())
	require.ErrorIs(t, err, hmackey.ErrKeyTooShort)

	bad := filepath.Join(dir, "bad")
	require.NoError(t, os.WriteFile(bad, []byte(strings.Repeat("zz", 32)), 0o600))
	_, err = hmackey.New(provider(t), "file:"+bad).Key(context.Background())
	require.Error(t, err)
	require.NotContains(t, err.Error(), "zzzz")
}
