package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// root is the repository root seen from this package's folder.
const root = "../../../../../.."

// TestGeneratedFilesAreCurrent fails when docs/spec/actions.yaml or the
// generated tables of docs/spec/05-actions.md differ from the catalogue.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	t.Parallel()
	files, err := generate(root)
	require.NoError(t, err)
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, path))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "%s is out of date: run make actions", path)
	}
}

func TestSplice(t *testing.T) {
	t.Parallel()
	doc := []byte("a\n<!-- generated:x:begin -->\nold\n<!-- generated:x:end -->\nb\n")
	out, err := splice(doc, "x", "new\n")
	require.NoError(t, err)
	require.Equal(t, "a\n<!-- generated:x:begin -->\nnew\n<!-- generated:x:end -->\nb\n", string(out))
	again, err := splice(out, "x", "new\n")
	require.NoError(t, err)
	require.Equal(t, out, again, "splicing is idempotent")

	for name, bad := range map[string]string{
		"no markers":       "a\n",
		"end before begin": "<!-- generated:x:end -->\n<!-- generated:x:begin -->\n",
		"twice":            "<!-- generated:x:begin -->\n<!-- generated:x:end -->\n<!-- generated:x:begin -->\n<!-- generated:x:end -->\n",
	} {
		_, err := splice([]byte(bad), "x", "new\n")
		require.ErrorIs(t, err, errMarkers, name)
	}
}
