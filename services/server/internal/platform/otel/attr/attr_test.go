package attr_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.yaml.in/yaml/v3"

	"bothy/server/internal/platform/otel/attr"
	"bothy/server/internal/platform/otel/oteltest"
)

// declaredKeys reads attr.go and returns the value of every constant declared
// as attribute.Key("..."), so that a key added without updating All fails.
func declaredKeys(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "attr.go", nil, 0)
	require.NoError(t, err)
	var keys []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Key" {
			return true
		}
		if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "attribute" {
			return true
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		require.True(t, ok && lit.Kind == token.STRING, "attribute.Key takes a string literal")
		v, err := strconv.Unquote(lit.Value)
		require.NoError(t, err)
		keys = append(keys, v)
		return true
	})
	return keys
}

func strs(keys []attribute.Key) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = string(k)
	}
	return out
}

func TestAllListsEveryKey(t *testing.T) {
	t.Parallel()
	declared := declaredKeys(t)
	require.NotEmpty(t, declared)
	require.Equal(t, declared, strs(attr.All()), "All lists every declared key once, in declaration order")
}

func TestKeysAreDottedLowerCase(t *testing.T) {
	t.Parallel()
	for _, k := range attr.All() {
		s := string(k)
		require.Equal(t, strings.ToLower(s), s, "key %s", s)
		require.Contains(t, s, ".", "key %s has a namespace", s)
		require.NotContains(t, s, " ", "key %s", s)
	}
}

func TestForMetrics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		key  attribute.Key
		want bool
	}{
		{"a job kind may label a metric", attr.JobKind, true},
		{"an outcome may label a metric", attr.Outcome, true},
		{"a webhook subscription id never labels a metric", attr.WebhookSubscriptionID, false},
		{"a request id never labels a metric", attr.RequestID, false},
		{"an event seq never labels a metric", attr.EventSeq, false},
		{"a key outside the package never labels a metric", attribute.Key("url.full"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, attr.ForMetrics(tc.key))
		})
	}
	for _, k := range attr.Unbounded() {
		require.Contains(t, attr.All(), k, "every unbounded key is a key of the package")
	}
}

// TestAttrKeysEqualCollectorAllowlist proves that the redaction processor of
// infra/otel/collector.yaml allows exactly the keys of this package, so a new
// key is added to both in the same change.
func TestAttrKeysEqualCollectorAllowlist(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(oteltest.RepoRoot(t), "infra", "otel", "collector.yaml"))
	require.NoError(t, err)

	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	processors := mapValue(t, doc.Content[0], "processors")
	redaction := mapValue(t, processors, "redaction/allowlist")
	require.Equal(t, "false", mapValue(t, redaction, "allow_all_keys").Value)

	keyNode, list := mapEntry(t, redaction, "allowed_keys")
	require.Contains(t, keyNode.HeadComment, "Bothy attributes", "the list is the section \"Bothy attributes\"")
	require.Equal(t, yaml.SequenceNode, list.Kind)
	var allowed []string
	for _, item := range list.Content {
		allowed = append(allowed, item.Value)
	}
	want := strs(attr.All())
	slices.Sort(want)
	got := slices.Clone(allowed)
	slices.Sort(got)
	require.Equal(t, want, got)
	require.Len(t, allowed, len(want), "no key is listed twice")
}

func mapEntry(t *testing.T, m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	t.Helper()
	require.Equal(t, yaml.MappingNode, m.Kind)
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	require.Failf(t, "missing key", "%s", key)
	return nil, nil
}

func mapValue(t *testing.T, m *yaml.Node, key string) *yaml.Node {
	t.Helper()
	_, v := mapEntry(t, m, key)
	return v
}
