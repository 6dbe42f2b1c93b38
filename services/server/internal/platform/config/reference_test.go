package config_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/config"
)

func TestReferenceRendersOneRowPerKey(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	md := r.Reference([]config.Check{nestedBelowCount()})
	lines := strings.Split(md, "\n")
	require.Contains(t, lines, "| key | type | default | bounds | chapter | description |")
	for _, want := range []string{
		"| `t.count` | integer (items) | `10` | 1 to 100 | `11-extensions.md` | A count. |",
		"| `t.wait` | duration | `5s` | above 0s, at most 30d | `11-extensions.md` | A wait. |",
		"| `t.key_ref` | secret reference | `file:<t.dir>/key` |  | `11-extensions.md` | A key reference. |",
		"| `t.level` | string: `debug`, `info` | `info` |  | `11-extensions.md` | A level. |",
		"| `t.names` | list of strings | `alex`, `sam` |  | `11-extensions.md` | Some names. |",
		"| `t.hosts` | list of host[:port][;allow_private] | (empty) |  | `11-extensions.md` | Some hosts. |",
		"| `t.extra_ca` | path, optional | (none) |  | `11-extensions.md` | An optional file. |",
		"| `t.dsn` | URL (`postgres`), secret-bearing | `postgres://bothy_app@127.0.0.1:5432/bothy` |  | `11-extensions.md` | A database. |",
		"| `nested_below_count` | `t.deep.nested.count`, `t.count` | t.deep.nested.count must be below t.count |",
	} {
		require.Contains(t, lines, want)
	}
	require.Equal(t, md, r.Reference([]config.Check{nestedBelowCount()}), "rendering is deterministic")
}

func TestReplaceGenerated(t *testing.T) {
	t.Parallel()
	doc := "# Title\n\n## 4. Reference\n\n" + config.BeginMarker + "\nold\n" + config.EndMarker + "\n\n## 5. Next\n"
	out, err := config.ReplaceGenerated([]byte(doc), "| new |\n")
	require.NoError(t, err)
	require.Equal(t, "# Title\n\n## 4. Reference\n\n"+config.BeginMarker+"\n\n| new |\n\n"+config.EndMarker+"\n\n## 5. Next\n", string(out))
	again, err := config.ReplaceGenerated(out, "| new |\n")
	require.NoError(t, err)
	require.Equal(t, string(out), string(again), "replacing is idempotent")

	for name, bad := range map[string]string{
		"no markers":        "# Title\n",
		"no end marker":     config.BeginMarker + "\n",
		"markers reversed":  config.EndMarker + "\n" + config.BeginMarker + "\n",
		"two begin markers": config.BeginMarker + "\n" + config.BeginMarker + "\n" + config.EndMarker + "\n",
	} {
		_, err := config.ReplaceGenerated([]byte(bad), "x")
		require.Error(t, err, name)
	}
}
