package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// realConfig is the committed modules.yaml, so the tests prove the rules
// the repository runs with.
func realConfig(t *testing.T) *Config {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "services", "server", "architecture", "modules.yaml"))
	require.NoError(t, err)
	c, err := ParseConfig(data)
	require.NoError(t, err)
	return c
}

const m = "bothy/server/"

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		pkg  Package
		want string // substring of the single violation; "" for none
	}{
		{"a module uses an allowed module's port", Package{ImportPath: m + "internal/apps/app", Imports: []string{m + "internal/chat", m + "internal/kernel/ids", m + "internal/platform/pg", "context"}}, ""},
		{"a module never reaches another module's adapters", Package{ImportPath: m + "internal/apps/app", Imports: []string{m + "internal/chat/adapters/postgres"}}, "only through its port internal/chat, never internal/chat/adapters"},
		{"a module never reaches another module's domain", Package{ImportPath: m + "internal/apps/adapters/deliveryjobs", Imports: []string{m + "internal/sync/domain"}}, "never internal/sync/domain"},
		{"an edge modules.yaml does not list is refused", Package{ImportPath: m + "internal/chat/app", Imports: []string{m + "internal/apps"}}, "module chat may use identity, authz; apps is not among them"},
		{"the kernel imports no platform package", Package{ImportPath: m + "internal/kernel/ids", Imports: []string{m + "internal/platform/buildinfo"}}, "kernel imports nothing of platform or the modules"},
		{"the kernel imports no module", Package{ImportPath: m + "internal/kernel/txn", Imports: []string{m + "internal/sync"}}, "kernel imports nothing of platform or the modules"},
		{"platform imports no module", Package{ImportPath: m + "internal/platform/egress", Imports: []string{m + "internal/apps"}}, "module platform may import only kernel, migrations"},
		{"platform uses the kernel", Package{ImportPath: m + "internal/platform/pg", Imports: []string{m + "internal/kernel/txn", m + "migrations", "github.com/jackc/pgx/v5"}}, ""},
		{"domain imports no platform package", Package{ImportPath: m + "internal/chat/domain", Imports: []string{m + "internal/platform/pg"}}, "domain packages import only the standard library and internal/kernel"},
		{"domain imports no third-party library", Package{ImportPath: m + "internal/chat/domain", Imports: []string{"github.com/jackc/pgx/v5"}}, "domain packages of a module import only the standard library"},
		{"domain may use golang.org/x/crypto (domain_libraries)", Package{ImportPath: m + "internal/identity/domain", Imports: []string{"golang.org/x/crypto/argon2", "crypto/subtle"}}, ""},
		{"a domain library matches whole path elements only", Package{ImportPath: m + "internal/identity/domain", Imports: []string{"golang.org/x/cryptobyte"}}, "domain packages of a module import only the standard library, internal/kernel and the domain_libraries"},
		{"domain imports no YAML library", Package{ImportPath: m + "internal/authz/domain", Imports: []string{"go.yaml.in/yaml/v3"}}, "domain packages of a module import only the standard library"},
		{"the port imports no domain library", Package{ImportPath: m + "internal/identity", Imports: []string{"golang.org/x/crypto/argon2"}}, "port packages of a module import only the standard library and internal/kernel"},
		{"domain tests may use testify", Package{ImportPath: m + "internal/chat/domain", Imports: []string{"strings", m + "internal/kernel/errs"}, XTestImports: []string{"github.com/stretchr/testify/require", m + "internal/chat/domain"}}, ""},
		{"the apps rules of admission never import the webhook rules", Package{ImportPath: m + "internal/apps/domain", Imports: []string{m + "internal/apps/domain/webhook"}}, "ADR 0072"},
		{"the webhook rules build on the rules of admission", Package{ImportPath: m + "internal/apps/domain/webhook", Imports: []string{m + "internal/apps/domain", m + "internal/apps"}}, ""},
		{"domain imports no app of its module", Package{ImportPath: m + "internal/chat/domain", Imports: []string{m + "internal/chat/app"}}, "their port and their domain"},
		{"the port imports no third-party library", Package{ImportPath: m + "internal/sync", Imports: []string{"github.com/jackc/pgx/v5"}}, "port packages of a module import only"},
		{"the port may name the ports it uses", Package{ImportPath: m + "internal/apps", Imports: []string{m + "internal/sync", "context"}}, ""},
		{"the port imports nothing of its own internals", Package{ImportPath: m + "internal/apps", Imports: []string{m + "internal/apps/domain"}}, "the port imports only"},
		{"use cases never import adapters", Package{ImportPath: m + "internal/apps/app", Imports: []string{m + "internal/apps/adapters/postgres"}}, "never import adapters"},
		{"httpapi adapters use the generated api", Package{ImportPath: m + "internal/apps/adapters/httpapi", Imports: []string{m + "api"}}, ""},
		{"use cases do not use the generated api", Package{ImportPath: m + "internal/apps/app", Imports: []string{m + "api"}}, "only internal/*/adapters/httpapi, internal/wire, cmd, test/harness may import module api"},
		{"wire uses everything", Package{ImportPath: m + "internal/wire", Imports: []string{m + "internal/apps/adapters/postgres", m + "internal/chat/app", m + "api", m + "migrations"}}, ""},
		{"cmd uses everything", Package{ImportPath: m + "cmd/bothy", Imports: []string{m + "internal/wire", m + "internal/apps/domain"}}, ""},
		{"nothing imports the assembly", Package{ImportPath: m + "internal/apps/app", Imports: []string{m + "internal/wire"}}, "assembly module wire"},
		{"the test harness is for tests only", Package{ImportPath: m + "internal/platform/egress", Imports: []string{m + "internal/platform/pg/pgtest"}}, "internal/platform/pg/pgtest is a test harness, for tests only"},
		{"tests use the test harness", Package{ImportPath: m + "internal/apps/adapters/postgres", TestImports: []string{m + "internal/platform/pg/pgtest"}}, ""},
		{"a test harness may use another", Package{ImportPath: m + "internal/platform/httpserver/httpservertest", Imports: []string{m + "internal/platform/pg/pgtest"}}, ""},
		{"every harness is for tests only", Package{ImportPath: m + "internal/apps/adapters/httpapi", Imports: []string{m + "internal/platform/egress/egresstest"}}, "is a test harness, for tests only"},
		{"tests of use cases may use the real adapters", Package{ImportPath: m + "internal/sync/app", XTestImports: []string{m + "internal/sync/adapters/postgres"}}, ""},
		{"domain tests may use the Standard Webhooks library", Package{ImportPath: m + "internal/apps/domain", XTestImports: []string{"github.com/standard-webhooks/standard-webhooks/libraries/go"}}, ""},
		{"a kernel package never imports platform, not even an adapter", Package{ImportPath: m + "internal/kernel/auditing/auditpg", Imports: []string{m + "internal/platform/pg"}}, "kernel imports nothing of platform"},
		{"tests may import other modules' adapters", Package{ImportPath: m + "internal/apps/app", XTestImports: []string{m + "internal/chat/adapters/postgres"}}, ""},
		{"a test import outside every module is refused", Package{ImportPath: m + "internal/apps/app", XTestImports: []string{m + "internal/billing"}}, "(in tests): the imported package belongs to no module"},
		{"a module's test harness may assemble other modules' internals", Package{ImportPath: m + "internal/authz/authztest", Imports: []string{m + "internal/chat/adapters/postgres", m + "internal/chat/domain", m + "internal/platform/pg/pgtest"}}, ""},
		{"a module's test harness is for tests only", Package{ImportPath: m + "internal/chat/app", Imports: []string{m + "internal/authz/authztest"}}, "internal/authz/authztest is a test harness"},
		{"domain may use its own port", Package{ImportPath: m + "internal/instance/domain", Imports: []string{m + "internal/instance"}}, ""},
		{"the generated api uses platform", Package{ImportPath: m + "api", Imports: []string{m + "internal/platform/httpserver", m + "internal/kernel/errs"}}, ""},
		{"the test harness assembles a process with the generated api", Package{ImportPath: m + "test/harness", Imports: []string{m + "api", m + "internal/wire", m + "internal/apps/adapters/postgres", m + "internal/platform/pg/pgtest"}}, ""},
		{"module tests use the test harness", Package{ImportPath: m + "internal/apps/app", XTestImports: []string{m + "test/harness"}}, ""},
		{"production code never imports the test harness", Package{ImportPath: m + "internal/apps/app", Imports: []string{m + "test/harness"}}, "test/harness is a test harness, for tests only"},
		{"a package outside every module is refused", Package{ImportPath: m + "internal/billing"}, "belongs to no module"},
		{"packages of other Go modules are not checked", Package{ImportPath: "example.com/other", Imports: []string{m + "internal/apps/domain"}}, ""},
	}
	c := realConfig(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := c.Check([]Package{tc.pkg})
			if tc.want == "" {
				require.Empty(t, got)
				return
			}
			require.Len(t, got, 1, "%v", got)
			require.Contains(t, got[0].String(), tc.want)
		})
	}
}

func TestParseConfigRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml, want string
	}{
		{"an unknown module under uses", "module: x\nmodules:\n  a: {path: a, uses: [b]}\n", "uses the unknown module b"},
		{"an unknown kind", "module: x\nmodules:\n  a: {path: a, kind: plugin}\n", `unknown kind "plugin"`},
		{"a misspelled field", "module: x\nmodules:\n  a: {path: a, usess: [a]}\n", "usess"},
		{"two modules on one path", "module: x\nmodules:\n  a: {path: a}\n  b: {path: a}\n", "share the path a"},
		{"a module without a path", "module: x\nmodules:\n  a: {kind: shared}\n", "has no path"},
		{"no modules", "module: x\n", "required"},
		{"an inside rule without a reason", "module: x\nmodules:\n  a: {path: a, inside: [{package: a/d, never: [a/d/w]}]}\n", "needs a package inside a"},
		{"an inside rule outside its module", "module: x\nmodules:\n  a: {path: a, inside: [{package: a/d, never: [b/w], why: w}]}\n", "not inside module a"},
		{"a standard library package as domain library", "module: x\ndomain_libraries: [encoding/json]\nmodules:\n  a: {path: a}\n", `entry "encoding/json" is no third-party import path`},
		{"an inline_sql entry without functions", "module: x\ninline_sql:\n  internal/a/adapters/postgres: []\nmodules:\n  a: {path: a}\n", `inline_sql entry internal/a/adapters/postgres lists no function`},
		{"an inline_sql entry with * and a function", "module: x\ninline_sql:\n  internal/a/adapters/postgres: [\"*\", Store.F]\nmodules:\n  a: {path: a}\n", `inline_sql entry internal/a/adapters/postgres lists "*" beside functions`},
		{"a package of the module as domain library", "module: example.com/x\ndomain_libraries: [example.com/x/a]\nmodules:\n  a: {path: a}\n", `entry "example.com/x/a" is no third-party import path`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseConfig([]byte(tc.yaml))
			require.ErrorContains(t, err, tc.want)
		})
	}
}
