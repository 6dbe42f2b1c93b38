package config_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/config"
)

const chapter = "11-extensions.md"

// testKeys has one key of every kind, bounds where they apply and a nested
// name, so the tests reach every branch without the product registry.
func testKeys() []config.Key {
	return []config.Key{
		{Name: "t.text", Kind: config.KindString, Default: "plain", Doc: "A text.", Chapter: chapter},
		{Name: "t.level", Kind: config.KindString, Default: "info", Enum: []string{"debug", "info"}, Doc: "A level.", Chapter: chapter},
		{Name: "t.count", Kind: config.KindInt, Default: "10", Min: "1", Max: "100", Unit: "items", Doc: "A count.", Chapter: chapter},
		{Name: "t.flag", Kind: config.KindBool, Default: "false", Doc: "A flag.", Chapter: chapter},
		{Name: "t.wait", Kind: config.KindDuration, Default: "5s", Min: "0s", MinExclusive: true, Max: "30d", Doc: "A wait.", Chapter: chapter},
		{Name: "t.size", Kind: config.KindByteSize, Default: "1MiB", Min: "1KiB", Max: "1GiB", Doc: "A size.", Chapter: chapter},
		{Name: "t.names", Kind: config.KindStringList, Default: "alex,sam", Doc: "Some names.", Chapter: chapter},
		{Name: "t.hosts", Kind: config.KindHostList, Doc: "Some hosts.", Chapter: chapter},
		{Name: "t.dir", Kind: config.KindPath, Default: "/var/lib/bothy/secrets", Doc: "A folder.", Chapter: chapter},
		{Name: "t.key_ref", Kind: config.KindSecretRef, Default: "file:<t.dir>/key", Doc: "A key reference.", Chapter: chapter},
		{Name: "t.endpoint", Kind: config.KindURL, Default: "https://collector.example.com:4318", Schemes: []string{"http", "https"}, Doc: "An endpoint.", Chapter: chapter},
		{Name: "t.dsn", Kind: config.KindURL, Default: "postgres://bothy_app@127.0.0.1:5432/bothy", Schemes: []string{"postgres"}, HostInQuery: true, Secret: true, Doc: "A database.", Chapter: chapter},
		{Name: "t.listen", Kind: config.KindAddress, Default: "127.0.0.1:8080", Doc: "An address.", Chapter: chapter},
		{Name: "t.extra_ca", Kind: config.KindPath, Optional: true, Doc: "An optional file.", Chapter: chapter},
		{Name: "t.deep.nested.count", Kind: config.KindInt, Default: "2", Min: "1", Doc: "A nested count.", Chapter: chapter},
	}
}

// testIgnoredEnv is a BOTHY_ variable that is not a key (the config path).
const testIgnoredEnv = "BOTHY_CONFIG"

func newRegistry(t *testing.T) *config.Registry {
	t.Helper()
	r, err := config.NewRegistry(config.RegistryOptions{IgnoreEnv: []string{testIgnoredEnv}}, testKeys())
	require.NoError(t, err)
	return r
}

// problems returns the problems of a *config.Error, failing the test for
// any other error.
func problems(t *testing.T, err error) []config.Problem {
	t.Helper()
	require.Error(t, err)
	var ce *config.Error
	require.True(t, errors.As(err, &ce), "want *config.Error, got %T", err)
	return ce.Problems
}
