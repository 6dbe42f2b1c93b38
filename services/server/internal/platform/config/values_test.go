package config_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/platform/config"
)

// bound is a struct the way internal/wire declares one per area.
type bound struct {
	Count int           `config:"t.count"`
	Wait  time.Duration `config:"t.wait"`
	Size  int64         `config:"t.size"`
	Flag  bool          `config:"t.flag"`
	Ref   string        `config:"t.key_ref"`
	Names []string      `config:"t.names"`
	Hosts hostlist.List `config:"t.hosts"`
	Deep  struct {
		Count int32 `config:"t.deep.nested.count"`
	}
	Untagged string
}

func TestBindFillsTaggedFields(t *testing.T) {
	t.Parallel()
	v, err := newRegistry(t).Load(nil, []string{"BOTHY_T_HOSTS=hooks.example.com:8443", "BOTHY_T_DEEP_NESTED_COUNT=4"})
	require.NoError(t, err)
	var b bound
	require.NoError(t, v.Bind(&b))
	require.Equal(t, 10, b.Count)
	require.Equal(t, 5*time.Second, b.Wait)
	require.Equal(t, int64(1<<20), b.Size)
	require.Equal(t, "file:/var/lib/bothy/secrets/key", b.Ref)
	require.Equal(t, []string{"alex", "sam"}, b.Names)
	require.Equal(t, hostlist.List{{Host: "hooks.example.com", Port: 8443}}, b.Hosts)
	require.Equal(t, int32(4), b.Deep.Count)
	require.Empty(t, b.Untagged)

	keys, err := config.BoundKeys(&b)
	require.NoError(t, err)
	require.Equal(t, []string{"t.count", "t.wait", "t.size", "t.flag", "t.key_ref", "t.names", "t.hosts", "t.deep.nested.count"}, keys)
}

func TestBindRejectsMismatches(t *testing.T) {
	t.Parallel()
	v, err := newRegistry(t).Load(nil, nil)
	require.NoError(t, err)
	for name, dst := range map[string]any{
		"not a pointer":          bound{},
		"a pointer to no struct": new(int),
		"an unknown key": &struct {
			X int `config:"t.nope"`
		}{},
		"a type of another kind": &struct {
			X string `config:"t.count"`
		}{},
		"a duration into an int": &struct {
			X int `config:"t.wait"`
		}{},
		"a list into a host list": &struct {
			X hostlist.List `config:"t.names"`
		}{},
		"a number too large for int8": &struct {
			X int8 `config:"t.size"`
		}{},
		"an unexported tagged field": &struct {
			x int `config:"t.count"` //nolint:unused // the test needs it unexported
		}{},
	} {
		require.Error(t, v.Bind(dst), name)
	}
}

func TestValuesPrintNoValue(t *testing.T) {
	t.Parallel()
	v, err := newRegistry(t).Load(nil, []string{"BOTHY_T_TEXT=sam-EXAMPLE-value"})
	require.NoError(t, err)
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("loaded", "config", v)
	out := fmt.Sprintf("%v %+v %#v %s", v, v, v, v) + buf.String()
	require.NotContains(t, out, "sam-EXAMPLE-value")
	require.Contains(t, out, "config.Values")
}
