package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/platform/config"
)

func TestDefaultsLoadWithoutFileOrEnvironment(t *testing.T) {
	t.Parallel()
	v, err := newRegistry(t).Load(nil, nil)
	require.NoError(t, err)
	require.Equal(t, "plain", v.String("t.text"))
	require.Equal(t, 10, v.Int("t.count"))
	require.False(t, v.Bool("t.flag"))
	require.Equal(t, 5*time.Second, v.Duration("t.wait"))
	require.Equal(t, int64(1<<20), v.Bytes("t.size"))
	require.Equal(t, []string{"alex", "sam"}, v.Strings("t.names"))
	require.Empty(t, v.Strings("t.hosts"))
	require.Empty(t, v.HostList("t.hosts"))
	require.Equal(t, "file:/var/lib/bothy/secrets/key", v.String("t.key_ref"))
	require.Equal(t, "", v.String("t.extra_ca"))
	require.Equal(t, 2, v.Int("t.deep.nested.count"))
	require.Equal(t, config.SourceDefault, v.Source("t.count"))
}

// TestEachKindParses sets every kind through the environment, the path with
// the least help from YAML, and reads it back through its accessor.
func TestEachKindParses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, env, value string
		read             func(*config.Values) any
		want             any
	}{
		{"a whole number", "BOTHY_T_COUNT", "42", func(v *config.Values) any { return v.Int("t.count") }, 42},
		{"a number with surrounding spaces", "BOTHY_T_COUNT", " 42 ", func(v *config.Values) any { return v.Int("t.count") }, 42},
		{"the lower bound itself", "BOTHY_T_COUNT", "1", func(v *config.Values) any { return v.Int("t.count") }, 1},
		{"the upper bound itself", "BOTHY_T_COUNT", "100", func(v *config.Values) any { return v.Int("t.count") }, 100},
		{"true", "BOTHY_T_FLAG", "true", func(v *config.Values) any { return v.Bool("t.flag") }, true},
		{"false", "BOTHY_T_FLAG", "false", func(v *config.Values) any { return v.Bool("t.flag") }, false},
		{"seconds", "BOTHY_T_WAIT", "90s", func(v *config.Values) any { return v.Duration("t.wait") }, 90 * time.Second},
		{"hours and minutes", "BOTHY_T_WAIT", "1h30m", func(v *config.Values) any { return v.Duration("t.wait") }, 90 * time.Minute},
		{"milliseconds", "BOTHY_T_WAIT", "250ms", func(v *config.Values) any { return v.Duration("t.wait") }, 250 * time.Millisecond},
		{"days", "BOTHY_T_WAIT", "30d", func(v *config.Values) any { return v.Duration("t.wait") }, 30 * 24 * time.Hour},
		{"days and hours", "BOTHY_T_WAIT", "1d12h", func(v *config.Values) any { return v.Duration("t.wait") }, 36 * time.Hour},
		{"plain bytes", "BOTHY_T_SIZE", "65536", func(v *config.Values) any { return v.Bytes("t.size") }, int64(65536)},
		{"bytes with B", "BOTHY_T_SIZE", "2048B", func(v *config.Values) any { return v.Bytes("t.size") }, int64(2048)},
		{"kibibytes", "BOTHY_T_SIZE", "64KiB", func(v *config.Values) any { return v.Bytes("t.size") }, int64(64 << 10)},
		{"mebibytes", "BOTHY_T_SIZE", "16MiB", func(v *config.Values) any { return v.Bytes("t.size") }, int64(16 << 20)},
		{"gibibytes", "BOTHY_T_SIZE", "1GiB", func(v *config.Values) any { return v.Bytes("t.size") }, int64(1 << 30)},
		{"an enum member", "BOTHY_T_LEVEL", "debug", func(v *config.Values) any { return v.String("t.level") }, "debug"},
		{"a comma list", "BOTHY_T_NAMES", "alex, sam ,robin", func(v *config.Values) any { return v.Strings("t.names") }, []string{"alex", "sam", "robin"}},
		{"an empty list", "BOTHY_T_NAMES", "", func(v *config.Values) any { return v.Strings("t.names") }, []string{}},
		{"a list with empty items", "BOTHY_T_NAMES", ",alex,,", func(v *config.Values) any { return v.Strings("t.names") }, []string{"alex"}},
		{"host list entries", "BOTHY_T_HOSTS", "hooks.example.com, api.example.com:8443;allow_private", func(v *config.Values) any { return v.HostList("t.hosts") },
			hostlist.List{{Host: "hooks.example.com", Port: 443}, {Host: "api.example.com", Port: 8443, AllowPrivate: true}}},
		{"a URL of an allowed scheme", "BOTHY_T_ENDPOINT", "http://127.0.0.1:4318", func(v *config.Values) any { return v.String("t.endpoint") }, "http://127.0.0.1:4318"},
		{"a database URL with its socket directory as the query's host", "BOTHY_T_DSN", "postgres:///bothy?host=/run/postgresql",
			func(v *config.Values) any { return v.String("t.dsn") }, "postgres:///bothy?host=/run/postgresql"},
		{"an IPv6 address", "BOTHY_T_LISTEN", "[::1]:9090", func(v *config.Values) any { return v.String("t.listen") }, "[::1]:9090"},
		{"an address on every interface", "BOTHY_T_LISTEN", ":8080", func(v *config.Values) any { return v.String("t.listen") }, ":8080"},
		{"a named host address", "BOTHY_T_LISTEN", "localhost:8080", func(v *config.Values) any { return v.String("t.listen") }, "localhost:8080"},
		{"a file reference", "BOTHY_T_KEY_REF", "file:/run/secrets/k", func(v *config.Values) any { return v.String("t.key_ref") }, "file:/run/secrets/k"},
		{"an optional path left empty", "BOTHY_T_EXTRA_CA", "", func(v *config.Values) any { return v.String("t.extra_ca") }, ""},
		{"a nested key", "BOTHY_T_DEEP_NESTED_COUNT", "7", func(v *config.Values) any { return v.Int("t.deep.nested.count") }, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := newRegistry(t).Load(nil, []string{tc.env + "=" + tc.value})
			require.NoError(t, err)
			require.Equal(t, tc.want, tc.read(v))
		})
	}
}

// TestEachKindRejects checks every rule and that no error repeats the value.
func TestEachKindRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, env, value, rule string
	}{
		{"a word for a number", "BOTHY_T_COUNT", "ten", "must be a whole number"},
		{"a fraction for a number", "BOTHY_T_COUNT", "1.5", "must be a whole number"},
		{"a number below the minimum", "BOTHY_T_COUNT", "0", "must be at least 1"},
		{"a number above the maximum", "BOTHY_T_COUNT", "101", "must be at most 100"},
		{"yes for a boolean", "BOTHY_T_FLAG", "yes", "must be true or false"},
		{"1 for a boolean", "BOTHY_T_FLAG", "1", "must be true or false"},
		{"a duration without unit", "BOTHY_T_WAIT", "5", "must be a duration"},
		{"a negative duration", "BOTHY_T_WAIT", "-5s", "must be a duration"},
		{"an unknown duration unit", "BOTHY_T_WAIT", "5 weeks", "must be a duration"},
		{"zero where above zero is required", "BOTHY_T_WAIT", "0s", "must be above 0s"},
		{"a duration above the maximum", "BOTHY_T_WAIT", "31d", "must be at most 30d"},
		{"a decimal byte unit", "BOTHY_T_SIZE", "1MB", "must be a byte size"},
		{"a byte size with a space", "BOTHY_T_SIZE", "1 MiB", "must be a byte size"},
		{"a negative byte size", "BOTHY_T_SIZE", "-1024", "must be a byte size"},
		{"a byte size below the minimum", "BOTHY_T_SIZE", "512", "must be at least 1KiB"},
		{"a byte size above the maximum", "BOTHY_T_SIZE", "2GiB", "must be at most 1GiB"},
		{"a value outside the enum", "BOTHY_T_LEVEL", "verbose", "must be one of debug, info"},
		{"an empty required string", "BOTHY_T_TEXT", "", "must not be empty"},
		{"a host entry with scheme", "BOTHY_T_HOSTS", "hooks.example.com,https://api.example.com", "entry 1"},
		{"text that is no URL", "BOTHY_T_ENDPOINT", "collector example", "must be an absolute URL with scheme http or https"},
		{"a URL of another scheme", "BOTHY_T_ENDPOINT", "ftp://collector.example.com", "must be an absolute URL with scheme http or https"},
		{"a URL without host", "BOTHY_T_ENDPOINT", "https://", "must be an absolute URL"},
		{"a URL whose host is in the query where only a database URL may have it", "BOTHY_T_ENDPOINT", "https:///v1?host=collector.example.com", "must be an absolute URL"},
		{"a database URL without a host anywhere", "BOTHY_T_DSN", "postgres:///bothy?sslmode=disable", "and a host (or the query parameter host)"},
		{"an address without host part", "BOTHY_T_LISTEN", "8080", "must be host:port"},
		{"an address with a named port", "BOTHY_T_LISTEN", "127.0.0.1:http", "must be host:port"},
		{"an address with a port too large", "BOTHY_T_LISTEN", "127.0.0.1:70000", "must be host:port"},
		{"an empty required path", "BOTHY_T_DIR", "", "must not be empty"},
		{"a value pasted as a reference", "BOTHY_T_KEY_REF", "hunter2-EXAMPLE", "must be a secret reference file:<path>"},
		{"a reference with an unknown placeholder", "BOTHY_T_KEY_REF", "file:<t.nope>/k", "placeholder"},
		{"a reference with a placeholder of a secret key", "BOTHY_T_KEY_REF", "file:<t.dsn>/k", "placeholder"},
		{"a secret-bearing URL that does not parse", "BOTHY_T_DSN", "postgres-password-EXAMPLE", "must be an absolute URL with scheme postgres"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := newRegistry(t).Load(nil, []string{tc.env + "=" + tc.value})
			ps := problems(t, err)
			require.Len(t, ps, 1)
			require.Equal(t, tc.env, config.EnvName(ps[0].Key))
			require.Equal(t, tc.env, ps[0].Env)
			require.Equal(t, config.SourceEnv, ps[0].Source)
			require.Contains(t, ps[0].Rule, tc.rule)
			require.Contains(t, err.Error(), ps[0].Key)
			require.Contains(t, err.Error(), tc.env)
			if len(tc.value) > 3 {
				require.NotContains(t, err.Error(), tc.value, "an error never repeats the value")
			}
		})
	}
}

func TestFileAndEnvironmentPrecedence(t *testing.T) {
	t.Parallel()
	file := []byte(`
# Alex's test configuration.
t:
  count: 20
  wait: 1m
  names: [robin]
  deep:
    nested:
      count: 3
`)
	v, err := newRegistry(t).Load(file, []string{
		"BOTHY_T_COUNT=30",
		"BOTHY_T_COUNT=31", // the first of two entries wins, as with os.Getenv
		"HOME=/root",       // not ours
		testIgnoredEnv + "=/etc/bothy/config.yaml",
	})
	require.NoError(t, err)
	require.Equal(t, 30, v.Int("t.count"), "the environment wins over the file")
	require.Equal(t, config.SourceEnv, v.Source("t.count"))
	require.Equal(t, time.Minute, v.Duration("t.wait"), "the file wins over the default")
	require.Equal(t, config.SourceFile, v.Source("t.wait"))
	require.Equal(t, []string{"robin"}, v.Strings("t.names"))
	require.Equal(t, 3, v.Int("t.deep.nested.count"))
	require.Equal(t, "plain", v.String("t.text"))
	require.Equal(t, config.SourceDefault, v.Source("t.text"))
}

func TestFileValueShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, file string }{
		{"an empty file", ""},
		{"only a comment", "# nothing set\n"},
		{"an explicit empty document", "{}\n"},
		{"a null list is the empty list", "t:\n  hosts:\n"},
		{"a flow mapping", "t: {count: 5, flag: true}\n"},
		{"quoted scalars", "t:\n  count: \"5\"\n  text: 'x'\n"},
		{"an anchor and alias", "t:\n  count: &n 5\n  deep: {nested: {count: *n}}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := newRegistry(t).Load([]byte(tc.file), nil)
			require.NoError(t, err)
		})
	}
}

func TestFileProblemsNameTheKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, key, rule string
	}{
		{"an unknown key in a known group", "t:\n  nope: 1\n", "t.nope", "unknown key"},
		{"an unknown group", "nope:\n  deep: 1\n", "nope", "unknown key"},
		{"an unknown key deep down", "t:\n  deep:\n    nested:\n      size: 1\n", "t.deep.nested.size", "unknown key"},
		{"a value where a group belongs", "t: 5\n", "t", "is a group of keys, not a value"},
		{"a group where a value belongs", "t:\n  count:\n    a: 1\n", "t.count", "must be a single value"},
		{"a list where a value belongs", "t:\n  count: [1]\n", "t.count", "must be a single value"},
		{"a value where a list belongs", "t:\n  names: alex\n", "t.names", "must be a list"},
		{"a list of lists", "t:\n  names: [[alex]]\n", "t.names", "must be a list"},
		{"a dotted key", "t.count: 5\n", "t.count", "nest"},
		{"a bad value", "t:\n  wait: soon\n", "t.wait", "must be a duration"},
		{"a null required value", "t:\n  text:\n", "t.text", "must not be empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := newRegistry(t).Load([]byte(tc.file), nil)
			ps := problems(t, err)
			require.Len(t, ps, 1, err.Error())
			require.Equal(t, tc.key, ps[0].Key)
			require.Equal(t, config.SourceFile, ps[0].Source)
			require.Contains(t, ps[0].Rule, tc.rule)
			require.Contains(t, err.Error(), tc.key)
		})
	}
}

func TestFileThatIsNotAMappingIsRejected(t *testing.T) {
	t.Parallel()
	for name, file := range map[string]string{
		"invalid YAML":        "t: [\n",
		"a top-level list":    "- t\n",
		"a top-level scalar":  "hello\n",
		"two documents":       "t: {count: 5}\n---\nt: {count: 6}\n",
		"a duplicate mapping": "t:\n  count: 5\n  count: 6\n",
	} {
		_, err := newRegistry(t).Load([]byte(file), nil)
		ps := problems(t, err)
		require.Len(t, ps, 1, name)
		require.Equal(t, config.SourceFile, ps[0].Source, name)
	}
}

func TestUnknownEnvironmentVariablesAreErrors(t *testing.T) {
	t.Parallel()
	_, err := newRegistry(t).Load(nil, []string{"BOTHY_T_NOPE=1", "BOTHY_WEBHOK_RETRY=2", "BOTHY_T_COUNT=5", "PATH=/usr/bin"})
	ps := problems(t, err)
	require.Len(t, ps, 2)
	require.Equal(t, "BOTHY_T_NOPE", ps[0].Env)
	require.Equal(t, "BOTHY_WEBHOK_RETRY", ps[1].Env)
	for _, p := range ps {
		require.Empty(t, p.Key)
		require.Contains(t, p.Rule, "unknown configuration variable")
	}
}

func TestEveryProblemIsReportedInKeyOrder(t *testing.T) {
	t.Parallel()
	_, err := newRegistry(t).Load([]byte("t:\n  wait: soon\n  count: many\n"), []string{"BOTHY_T_FLAG=maybe"})
	ps := problems(t, err)
	require.Len(t, ps, 3)
	require.Equal(t, []string{"t.count", "t.flag", "t.wait"}, []string{ps[0].Key, ps[1].Key, ps[2].Key})
	require.True(t, strings.HasPrefix(err.Error(), "config: 3 problems"))
}

func TestPlaceholdersResolveAgainstTheLoadedValue(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	v, err := r.Load([]byte("t:\n  dir: /srv/bothy/secrets\n"), nil)
	require.NoError(t, err)
	require.Equal(t, "file:/srv/bothy/secrets/key", v.String("t.key_ref"), "the default follows the loaded folder")

	v, err = r.Load(nil, []string{"BOTHY_T_DIR=/run/secrets", "BOTHY_T_KEY_REF=file:<t.dir>/other"})
	require.NoError(t, err)
	require.Equal(t, "file:/run/secrets/other", v.String("t.key_ref"), "an operator's value may use the placeholder too")

	_, err = r.Load(nil, []string{"BOTHY_T_DIR="})
	ps := problems(t, err)
	require.Len(t, ps, 1, "a bad folder is reported once, not again for each reference")
	require.Equal(t, "t.dir", ps[0].Key)
}

func TestSecretBearingValuesNeverAppearInErrors(t *testing.T) {
	t.Parallel()
	secret := "postgres://bothy_app:s3cr3t-EXAMPLE@db.example.com:5432/bothy"
	v, err := newRegistry(t).Load(nil, []string{"BOTHY_T_DSN=" + secret})
	require.NoError(t, err)
	require.Equal(t, secret, v.String("t.dsn"))
	require.NotContains(t, v.GoString(), "s3cr3t")

	_, err = newRegistry(t).Load([]byte("t:\n  dsn: \"s3cr3t-EXAMPLE\"\n"), nil)
	require.NotContains(t, problems(t, err)[0].String(), "s3cr3t")
	require.NotContains(t, err.Error(), "s3cr3t")
}

func TestLoadFile(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	path := filepath.Join(t.TempDir(), "bothy.yaml")
	require.NoError(t, os.WriteFile(path, []byte("t:\n  count: 12\n"), 0o600))
	v, err := r.LoadFile(path, nil)
	require.NoError(t, err)
	require.Equal(t, 12, v.Int("t.count"))

	v, err = r.LoadFile("", []string{"BOTHY_T_COUNT=13"})
	require.NoError(t, err)
	require.Equal(t, 13, v.Int("t.count"), "no path means defaults and environment")

	_, err = r.LoadFile(filepath.Join(t.TempDir(), "missing.yaml"), nil)
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestAccessorsPanicOnMisuse(t *testing.T) {
	t.Parallel()
	v, err := newRegistry(t).Load(nil, nil)
	require.NoError(t, err)
	require.PanicsWithValue(t, "config: t.nope is not a registered key", func() { v.Int("t.nope") })
	require.PanicsWithValue(t, "config: t.count is of kind int, not duration", func() { v.Duration("t.count") })
	require.PanicsWithValue(t, "config: t.wait is of kind duration, not string", func() { v.String("t.wait") })
	require.NotPanics(t, func() { v.String("t.key_ref") })
	require.NotPanics(t, func() { v.Strings("t.hosts") })
}

func TestStringsReturnsACopy(t *testing.T) {
	t.Parallel()
	v, err := newRegistry(t).Load(nil, nil)
	require.NoError(t, err)
	v.Strings("t.names")[0] = "robin"
	require.Equal(t, []string{"alex", "sam"}, v.Strings("t.names"))
}
