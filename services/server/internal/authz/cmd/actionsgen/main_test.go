package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/authz/domain"
	"bothy/server/internal/kernel/eventlog"
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

func TestRenderTablesListsEveryActionScopeAndEventOnce(t *testing.T) {
	t.Parallel()
	tables := renderTables()
	require.ElementsMatch(t, []string{tableActionsInstance, tableActionsIdentity, tableActionsChat, tableActionsApps, tableScopes, tableEvents}, slices.Collect(maps.Keys(tables)))
	all := strings.Join([]string{tables[tableActionsInstance], tables[tableActionsIdentity], tables[tableActionsChat], tables[tableActionsApps]}, "")
	for _, e := range domain.Catalogue() {
		require.Equal(t, 1, strings.Count(all, "| `"+string(e.Action)+"` |"), "action %s", e.Action)
	}
	for _, s := range domain.Scopes() {
		require.Contains(t, tables[tableScopes], "| `"+string(s)+"` | "+domain.ScopeDoc(s)+" |")
	}
	for _, ev := range eventlog.Types() {
		require.Equal(t, 1, strings.Count(tables[tableEvents], "| `"+string(ev.Type)+"` |"), "event %s", ev.Type)
	}
	for name, table := range tables {
		require.True(t, strings.HasSuffix(table, "\n"), "table %s ends in a newline", name)
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
