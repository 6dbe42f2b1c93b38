package stack_test

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/secrets/stack"
)

// configurationDoc is docs/operations/configuration.md, seen from this folder.
const configurationDoc = "../../../../../../docs/operations/configuration.md"

// TestCatalogueMatchesConfigurationDoc is the catalogue test of M1-09: the
// rows of section 5 "Secrets" of configuration.md are exactly the catalogue.
func TestCatalogueMatchesConfigurationDoc(t *testing.T) {
	t.Parallel()
	f, err := os.Open(configurationDoc)
	require.NoError(t, err)
	defer f.Close()

	var rows [][]string
	inSection := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			inSection = strings.HasPrefix(line, "## 5. Secrets")
			continue
		}
		if !inSection || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(strings.ReplaceAll(cells[i], "`", ""))
		}
		rows = append(rows, cells)
	}
	require.NoError(t, sc.Err())
	require.GreaterOrEqual(t, len(rows), 2, "section 5 has no table")
	require.Equal(t, []string{"name", "generator", "service", "config key and purpose"}, rows[0])
	rows = rows[2:] // header and separator

	var want [][]string
	for _, e := range stack.Catalogue() {
		want = append(want, []string{e.Name, string(e.Generator), string(e.Service), e.ConfigKey + ": " + e.Purpose})
	}
	require.Equal(t, want, rows)
}

func TestCatalogueEntriesAreWellFormed(t *testing.T) {
	t.Parallel()
	names := map[string]bool{}
	keys := map[string]bool{}
	for _, e := range stack.Catalogue() {
		require.Regexp(t, `^[a-z][a-z0-9_]*$`, e.Name)
		require.False(t, names[e.Name], "duplicate name %s", e.Name)
		require.False(t, keys[e.ConfigKey], "duplicate config key %s", e.ConfigKey)
		names[e.Name], keys[e.ConfigKey] = true, true
		require.Contains(t, []stack.Generator{stack.GeneratorKey, stack.GeneratorPassword}, e.Generator)
		require.Contains(t, []stack.Service{stack.ServiceServer, stack.ServicePostgres}, e.Service)
		require.True(t, strings.HasSuffix(e.ConfigKey, "_ref"), e.ConfigKey)
		require.NotEmpty(t, e.Purpose)
	}
	require.True(t, names["webhook_hmac_master_key"])
}

func TestGenerators(t *testing.T) {
	t.Parallel()
	counting := make([]byte, 64)
	for i := range counting {
		counting[i] = byte(i)
	}
	key, err := stack.GeneratorKey.Generate(bytes.NewReader(counting))
	require.NoError(t, err)
	require.Equal(t, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", string(key))

	pw, err := stack.GeneratorPassword.Generate(bytes.NewReader(counting))
	require.NoError(t, err)
	require.Equal(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef", string(pw))
	pw, err = stack.GeneratorPassword.Generate(bytes.NewReader(counting[32:]))
	require.NoError(t, err)
	require.Equal(t, "ghijklmnopqrstuvwxyz0123456789-_", string(pw))

	_, err = stack.GeneratorKey.Generate(bytes.NewReader(counting[:31]))
	require.Error(t, err, "a short read of randomness must fail")
	_, err = stack.Generator("dice").Generate(bytes.NewReader(counting))
	require.Error(t, err)
}

// testBundle holds a fresh secrets folder below a temporary directory.
type testBundle struct{ dir string }

func setup(t *testing.T) *testBundle {
	t.Helper()
	return &testBundle{dir: filepath.Join(t.TempDir(), "state", "secrets")}
}

func (b *testBundle) read(t *testing.T, name string) string {
	t.Helper()
	v, err := os.ReadFile(filepath.Join(b.dir, name))
	require.NoError(t, err)
	return string(v)
}

func TestInitCreatesEveryMissingSecretPrivately(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res, err := stack.Init(b.dir, nil)
	require.NoError(t, err)
	require.Empty(t, res.Kept)
	var names []string
	for _, e := range stack.Catalogue() {
		names = append(names, e.Name)
	}
	require.Equal(t, names, res.Created)

	st, err := os.Stat(b.dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	entries, err := os.ReadDir(b.dir)
	require.NoError(t, err)
	require.Len(t, entries, len(names), "no temporary files are left behind")

	for _, e := range stack.Catalogue() {
		st, err := os.Stat(filepath.Join(b.dir, e.Name))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), e.Name)
		v := b.read(t, e.Name)
		switch e.Generator {
		case stack.GeneratorKey:
			require.Regexp(t, `^[0-9a-f]{64}\n$`, v, e.Name)
		case stack.GeneratorPassword:
			require.Regexp(t, `^[A-Za-z0-9_-]{32}\n$`, v, e.Name)
		}
	}
	require.NotEqual(t, b.read(t, "database_owner_password"), b.read(t, "database_app_password"))
}

func TestInitIsIdempotentAndNeverOverwrites(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, os.MkdirAll(b.dir, 0o700))
	own := "chosen-by-the-operator-EXAMPLE\n"
	require.NoError(t, os.WriteFile(filepath.Join(b.dir, "database_app_password"), []byte(own), 0o600))

	first, err := stack.Init(b.dir, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"database_app_password"}, first.Kept)
	require.NotContains(t, first.Created, "database_app_password")
	require.Equal(t, own, b.read(t, "database_app_password"))

	before := map[string]string{}
	for _, e := range stack.Catalogue() {
		before[e.Name] = b.read(t, e.Name)
	}
	second, err := stack.Init(b.dir, nil)
	require.NoError(t, err)
	require.Empty(t, second.Created)
	require.Len(t, second.Kept, len(stack.Catalogue()))
	for name, v := range before {
		require.Equal(t, v, b.read(t, name), name)
	}
}

func TestInitRefusesADirectoryOpenToOthers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, os.MkdirAll(b.dir, 0o700))
	require.NoError(t, os.Chmod(b.dir, 0o755))
	_, err := stack.Init(b.dir, nil)
	require.ErrorIs(t, err, stack.ErrDirectoryOpen)
	entries, err := os.ReadDir(b.dir)
	require.NoError(t, err)
	require.Empty(t, entries)
}

// failingReader hands out n bytes of randomness and then fails.
type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errors.New("entropy source failed")
	}
	k := min(r.n, len(p))
	clear(p[:k])
	r.n -= k
	return k, nil
}

func TestInitLeavesNoPartialFileWhenRandomnessFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Enough for the first password (32 bytes), not for the second.
	res, err := stack.Init(b.dir, &failingReader{n: 40})
	require.Error(t, err)
	require.Equal(t, []string{stack.Catalogue()[0].Name}, res.Created)
	entries, err := os.ReadDir(b.dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, stack.Catalogue()[0].Name, entries[0].Name())
}
