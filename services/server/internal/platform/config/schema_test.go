package config_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
)

// compileSchema compiles the registry's schema with a validator that checks
// it against the JSON Schema 2020-12 meta-schema first.
func compileSchema(t *testing.T, raw []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("config.schema.json", doc))
	s, err := c.Compile("config.schema.json")
	require.NoError(t, err)
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, instance string) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(instance))
	require.NoError(t, err)
	return s.Validate(v)
}

func TestSchemaDescribesEveryKey(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	raw, err := r.Schema()
	require.NoError(t, err)
	s := compileSchema(t, raw)

	var doc map[string]any
	require.NoError(t, json.Unmarshal(raw, &doc))
	require.Equal(t, "https://json-schema.org/draft/2020-12/schema", doc["$schema"])
	for _, k := range r.Keys() {
		leaf := doc
		for _, part := range strings.Split(k.Name, ".") {
			require.Equal(t, false, leaf["additionalProperties"], k.Name)
			leaf = leaf["properties"].(map[string]any)[part].(map[string]any)
		}
		require.Equal(t, string(k.Kind), leaf["x-bothy-kind"], k.Name)
		require.Equal(t, k.Chapter, leaf["x-bothy-chapter"], k.Name)
		require.Equal(t, k.Doc, leaf["description"], k.Name)
		require.NotNil(t, leaf["type"], k.Name)
		if k.Min != "" {
			require.Equal(t, k.Min, leaf["x-bothy-min"], k.Name)
		}
		if k.Max != "" {
			require.Equal(t, k.Max, leaf["x-bothy-max"], k.Name)
		}
	}

	count := doc["properties"].(map[string]any)["t"].(map[string]any)["properties"].(map[string]any)["count"].(map[string]any)
	require.Equal(t, "integer", count["type"])
	require.EqualValues(t, 1, count["minimum"])
	require.EqualValues(t, 100, count["maximum"])
	require.EqualValues(t, 10, count["default"])

	require.NoError(t, validate(t, s, `{}`))
	require.NoError(t, validate(t, s, `{"t": {"count": 5, "wait": "1d12h", "size": "64KiB", "flag": true,
		"names": ["alex"], "hosts": ["hooks.example.com:8443"], "level": "debug",
		"deep": {"nested": {"count": 3}}}}`))
	require.NoError(t, validate(t, s, `{"t": {"size": 4096}}`))
	for name, bad := range map[string]string{
		"an unknown key":            `{"t": {"nope": 1}}`,
		"an unknown group":          `{"nope": {}}`,
		"a number below its bound":  `{"t": {"count": 0}}`,
		"a number above its bound":  `{"t": {"count": 101}}`,
		"a string for a number":     `{"t": {"count": "5"}}`,
		"a duration without unit":   `{"t": {"wait": "5"}}`,
		"a byte size in MB":         `{"t": {"size": "1MB"}}`,
		"a value outside the enum":  `{"t": {"level": "verbose"}}`,
		"a scalar for a list":       `{"t": {"names": "alex"}}`,
		"a reference without file:": `{"t": {"key_ref": "/k"}}`,
	} {
		require.Error(t, validate(t, s, bad), name)
	}
}
