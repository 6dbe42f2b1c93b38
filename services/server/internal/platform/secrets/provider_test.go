package secrets_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/platform/secrets"
)

// testBundle is what every provider test needs: a folder for secret files, a
// fake clock and a provider caching for one minute.
type testBundle struct {
	dir      string
	clock    *clock.Fake
	provider *secrets.Provider
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{dir: t.TempDir(), clock: clock.NewFake(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))}
	p, err := secrets.NewProvider(secrets.Options{CacheTTL: time.Minute, Clock: b.clock})
	require.NoError(t, err)
	b.provider = p
	return b
}

func (b *testBundle) write(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(b.dir, name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return "file:" + path
}

func TestResolveFileTrimsOneTrailingNewline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, content, want string }{
		{"a value without newline is kept", value, value},
		{"one trailing newline is removed", value + "\n", value},
		{"one trailing CRLF is removed", value + "\r\n", value},
		{"only one of two newlines is removed", value + "\n\n", value + "\n"},
		{"inner white space is kept", " " + value + " \t", " " + value + " \t"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			got, err := b.provider.Resolve(context.Background(), b.write(t, "s", tc.content))
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got.Reveal()))
		})
	}
}

func TestResolveCachesUntilTheTTLRunsOut(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ref := b.write(t, "rotating", "first\n")
	ctx := context.Background()

	got, err := b.provider.Resolve(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, "first", string(got.Reveal()))

	// The file changes; within the TTL the provider still answers from its cache.
	b.write(t, "rotating", "second\n")
	b.clock.Advance(time.Minute - time.Nanosecond)
	got, err = b.provider.Resolve(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, "first", string(got.Reveal()))

	// At the TTL the entry has expired and the file is read again.
	b.clock.Advance(time.Nanosecond)
	got, err = b.provider.Resolve(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, "second", string(got.Reveal()))

	// A file that disappears is noticed only after the next expiry.
	require.NoError(t, os.Remove(filepath.Join(b.dir, "rotating")))
	got, err = b.provider.Resolve(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, "second", string(got.Reveal()))
	b.clock.Advance(time.Minute)
	_, err = b.provider.Resolve(ctx, ref)
	require.ErrorIs(t, err, secrets.ErrNotFound)
}

func TestResolveWithoutCacheReadsEveryTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p, err := secrets.NewProvider(secrets.Options{Clock: clock.NewFake(time.Unix(0, 0))})
	require.NoError(t, err)
	path := filepath.Join(dir, "s")
	require.NoError(t, os.WriteFile(path, []byte("one"), 0o600))
	got, err := p.Resolve(context.Background(), "file:"+path)
	require.NoError(t, err)
	require.Equal(t, "one", string(got.Reveal()))
	require.NoError(t, os.WriteFile(path, []byte("two"), 0o600))
	got, err = p.Resolve(context.Background(), "file:"+path)
	require.NoError(t, err)
	require.Equal(t, "two", string(got.Reveal()))
}

func TestResolveErrorsNameOnlySchemeAndFileName(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	hidden := filepath.Join(b.dir, "private-folder-EXAMPLE")
	require.NoError(t, os.Mkdir(hidden, 0o700))

	_, err := b.provider.Resolve(ctx, "file:"+filepath.Join(hidden, "missing_key"))
	require.ErrorIs(t, err, secrets.ErrNotFound)
	require.Contains(t, err.Error(), "file:missing_key")
	require.NotContains(t, err.Error(), "private-folder-EXAMPLE")

	empty := filepath.Join(hidden, "empty_key")
	require.NoError(t, os.WriteFile(empty, []byte("\n"), 0o600))
	_, err = b.provider.Resolve(ctx, "file:"+empty)
	require.ErrorIs(t, err, secrets.ErrEmpty)
	require.NotContains(t, err.Error(), "private-folder-EXAMPLE")

	require.NoError(t, os.Mkdir(filepath.Join(hidden, "a_folder"), 0o700))
	_, err = b.provider.Resolve(ctx, "file:"+filepath.Join(hidden, "a_folder"))
	require.ErrorIs(t, err, secrets.ErrUnreadable)
	require.Contains(t, err.Error(), "file:a_folder")
	require.NotContains(t, err.Error(), "private-folder-EXAMPLE")

	// A value pasted where a reference belongs is never echoed.
	_, err = b.provider.Resolve(ctx, value)
	require.ErrorIs(t, err, secrets.ErrInvalidRef)
	require.NotContains(t, err.Error(), value)
}

func TestResolveHonoursACancelledContext(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.provider.Resolve(ctx, b.write(t, "s", value))
	require.ErrorIs(t, err, context.Canceled)
}

func TestNewProviderRefusesANegativeTTL(t *testing.T) {
	t.Parallel()
	_, err := secrets.NewProvider(secrets.Options{CacheTTL: -time.Second})
	require.Error(t, err)
}

func TestParseRef(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		want secrets.Ref
	}{
		{"absolute file path", "file:/var/lib/bothy/secrets/webhook_hmac_master_key", secrets.Ref{Scheme: "file", Path: "/var/lib/bothy/secrets/webhook_hmac_master_key"}},
		{"relative file path", "file:.local/secrets/database_app_password", secrets.Ref{Scheme: "file", Path: ".local/secrets/database_app_password"}},
		{"path is cleaned", "file:/var/lib/bothy//secrets/./k", secrets.Ref{Scheme: "file", Path: "/var/lib/bothy/secrets/k"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := secrets.ParseRef(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, "file:"+filepath.Base(tc.want.Path), got.Redacted())
		})
	}
}

func TestParseRefRejects(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"empty":               "",
		"no scheme":           "/var/lib/bothy/secrets/k",
		"a pasted value":      value,
		"unknown scheme":      "vault:secret/data/bothy",
		"empty path":          "file:",
		"upper case scheme":   "FILE:/k",
		"NUL in path":         "file:/k\x00",
		"path is a directory": "file:/var/lib/bothy/secrets/",
	} {
		_, err := secrets.ParseRef(in)
		require.ErrorIs(t, err, secrets.ErrInvalidRef, name)
		if strings.TrimPrefix(in, "file:") != "" {
			require.NotContains(t, err.Error(), strings.TrimPrefix(in, "file:"), name)
		}
	}
}

// FuzzParseRef checks that ParseRef never panics, that an accepted reference
// renders back to an equivalent one, and that no error repeats its input.
func FuzzParseRef(f *testing.F) {
	for _, seed := range []string{
		"file:/var/lib/bothy/secrets/webhook_hmac_master_key", // the default form
		"file:relative/k",  // a relative path
		"file:",            // no path
		"vault:secret/k",   // a scheme we do not know
		value,              // a value pasted in place of a reference
		"file:/a/../../b",  // dot segments
		"file:/k\x00\x01",  // control bytes
		"file:C:\\secrets", // a foreign path form
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ref, err := secrets.ParseRef(in)
		if err != nil {
			if len(in) > 12 {
				require.NotContains(t, err.Error(), in)
			}
			return
		}
		again, err := secrets.ParseRef(ref.String())
		require.NoError(t, err)
		require.Equal(t, ref, again)
	})
}
