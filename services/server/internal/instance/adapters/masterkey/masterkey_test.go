package masterkey_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/instance/adapters/masterkey"
	"bothy/server/internal/platform/secrets"
)

func TestKeyDecodesThirtyTwoHexBytes(t *testing.T) {
	t.Parallel()
	good := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name    string
		content string
		want    []byte
		wantErr error
	}{
		{"64 hex digits and a newline give 32 bytes", good + "\n", []byte(strings.Repeat("\xab", 32)), nil},
		{"16 bytes are refused", strings.Repeat("ab", 16), nil, masterkey.ErrSize},
		{"a value that is not hex is refused", strings.Repeat("zz", 32), nil, secrets.ErrNotHex},
		{"a missing file is refused", "", nil, secrets.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "signing_keys_master_key")
			if tc.content != "" {
				require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))
			}
			p, err := secrets.NewProvider(secrets.Options{})
			require.NoError(t, err)
			got, err := masterkey.New(p, "file:"+path).Key(context.Background())
			require.ErrorIs(t, err, tc.wantErr)
			require.Equal(t, tc.want, got)
			if tc.content != "" && err != nil {
				require.NotContains(t, err.Error(), tc.content[:8], "no part of the value in the error")
			}
		})
	}
}
