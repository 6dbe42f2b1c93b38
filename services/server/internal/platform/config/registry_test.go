package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/config"
)

func TestEnvName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"webhook.retry_backoff_base":       "BOTHY_WEBHOOK_RETRY_BACKOFF_BASE",
		"jobs.queue.delivery.max_workers":  "BOTHY_JOBS_QUEUE_DELIVERY_MAX_WORKERS",
		"ratelimit.public_auth.per_minute": "BOTHY_RATELIMIT_PUBLIC_AUTH_PER_MINUTE",
		"a.with-dash":                      "BOTHY_A_WITH_DASH",
	} {
		require.Equal(t, want, config.EnvName(name))
	}
}

func TestRegistryListsKeysByName(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	keys := r.Keys()
	require.Len(t, keys, len(testKeys()))
	for i := 1; i < len(keys); i++ {
		require.Less(t, keys[i-1].Name, keys[i].Name)
	}
	k, ok := r.Lookup("t.count")
	require.True(t, ok)
	require.Equal(t, config.KindInt, k.Kind)
	_, ok = r.Lookup("t.nope")
	require.False(t, ok)
}

func TestNewRegistryRejectsBadKeys(t *testing.T) {
	t.Parallel()
	ok := config.Key{Name: "a.b", Kind: config.KindInt, Default: "1", Doc: "A number.", Chapter: chapter}
	with := func(f func(*config.Key)) config.Key { k := ok; f(&k); return k }
	for _, tc := range []struct {
		name string
		keys []config.Key
		rule string
	}{
		{"a name without a dot", []config.Key{with(func(k *config.Key) { k.Name = "ab" })}, "name"},
		{"a name with upper case", []config.Key{with(func(k *config.Key) { k.Name = "a.Bc" })}, "name"},
		{"a name with an empty part", []config.Key{with(func(k *config.Key) { k.Name = "a..b" })}, "name"},
		{"a key registered twice", []config.Key{ok, ok}, "registered twice"},
		{"a key that is a group of another", []config.Key{ok, with(func(k *config.Key) { k.Name = "a.b.c" })}, "group"},
		{"two keys with one environment variable", []config.Key{with(func(k *config.Key) { k.Name = "a.b_c" }), with(func(k *config.Key) { k.Name = "a.b-c" })}, "BOTHY_A_B_C"},
		{"an unknown kind", []config.Key{with(func(k *config.Key) { k.Kind = "colour" })}, "kind"},
		{"no doc", []config.Key{with(func(k *config.Key) { k.Doc = "" })}, "doc"},
		{"a doc of two lines", []config.Key{with(func(k *config.Key) { k.Doc = "One.\nTwo." })}, "doc"},
		{"no chapter", []config.Key{with(func(k *config.Key) { k.Chapter = "" })}, "chapter"},
		{"a chapter that is no chapter file", []config.Key{with(func(k *config.Key) { k.Chapter = "extensions" })}, "chapter"},
		{"a default that fails its kind", []config.Key{with(func(k *config.Key) { k.Default = "one" })}, "must be a whole number"},
		{"a default outside its bounds", []config.Key{with(func(k *config.Key) { k.Min = "5" })}, "must be at least 5"},
		{"a bound that does not parse", []config.Key{with(func(k *config.Key) { k.Max = "lots" })}, "bound"},
		{"a minimum above the maximum", []config.Key{with(func(k *config.Key) { k.Min, k.Max = "9", "3" })}, "bound"},
		{"bounds on a kind without order", []config.Key{{Name: "a.b", Kind: config.KindString, Default: "x", Min: "a", Doc: "A text.", Chapter: chapter}}, "bound"},
		{"an enum on a number", []config.Key{with(func(k *config.Key) { k.Enum = []string{"1"} })}, "enum"},
		{"schemes on a number", []config.Key{with(func(k *config.Key) { k.Schemes = []string{"https"} })}, "schemes"},
		{"host in query on a number", []config.Key{with(func(k *config.Key) { k.HostInQuery = true })}, "host in query"},
		{"a URL key without schemes", []config.Key{{Name: "a.b", Kind: config.KindURL, Default: "https://example.com", Doc: "A URL.", Chapter: chapter}}, "schemes"},
		{"a placeholder naming no key", []config.Key{{Name: "a.k_ref", Kind: config.KindSecretRef, Default: "file:<a.dir>/k", Doc: "A reference.", Chapter: chapter}}, "placeholder"},
		{"an empty default of a required key", []config.Key{{Name: "a.dir", Kind: config.KindPath, Doc: "A folder.", Chapter: chapter}}, "must not be empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.NewRegistry(config.RegistryOptions{}, tc.keys)
			ps := problems(t, err)
			require.NotEmpty(t, ps)
			require.Contains(t, err.Error(), tc.rule)
		})
	}
}

func TestNewRegistryRejectsAnIgnoredVariableThatIsAKey(t *testing.T) {
	t.Parallel()
	_, err := config.NewRegistry(config.RegistryOptions{IgnoreEnv: []string{"BOTHY_T_COUNT"}}, testKeys())
	require.ErrorContains(t, err, "BOTHY_T_COUNT")
	_, err = config.NewRegistry(config.RegistryOptions{IgnoreEnv: []string{"HOME"}}, testKeys())
	require.ErrorContains(t, err, "HOME")
}

func TestNewRegistryJoinsGroups(t *testing.T) {
	t.Parallel()
	keys := testKeys()
	r, err := config.NewRegistry(config.RegistryOptions{}, keys[:3], keys[3:])
	require.NoError(t, err)
	require.Len(t, r.Keys(), len(keys))
}
