package secrets_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/secrets"
)

// value is the plain text every leak test looks for.
const value = "correct-horse-EXAMPLE-battery"

func TestSecretNeverPrintsItsValue(t *testing.T) {
	t.Parallel()
	s := secrets.New([]byte(value))
	holder := struct {
		Exported   secrets.Secret
		unexported secrets.Secret
	}{s, s}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		for name, arg := range map[string]any{"value": s, "pointer": &s, "struct": holder, "pointer to struct": &holder} {
			out := fmt.Sprintf(verb, arg)
			require.NotContains(t, out, value, "%s of %s", verb, name)
			require.NotContains(t, out, fmt.Sprintf("%x", value), "%s of %s", verb, name)
		}
	}
	require.Equal(t, "[redacted]", s.String())
	require.Equal(t, "[redacted]", s.GoString())
	require.Equal(t, "[redacted]", fmt.Sprintf("%q", s))
	require.Equal(t, "[redacted]", fmt.Sprint(s))
}

func TestSecretNeverMarshalsItsValue(t *testing.T) {
	t.Parallel()
	s := secrets.New([]byte(value))
	out, err := json.Marshal(map[string]any{"secret": s, "nested": struct{ S secrets.Secret }{s}})
	require.NoError(t, err)
	require.NotContains(t, string(out), value)
	require.Contains(t, string(out), `"[redacted]"`)

	text, err := s.MarshalText()
	require.NoError(t, err)
	require.Equal(t, "[redacted]", string(text))
}

func TestSecretNeverLogsItsValue(t *testing.T) {
	t.Parallel()
	s := secrets.New([]byte(value))
	for name, h := range map[string]func(*bytes.Buffer) slog.Handler{
		"json": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
		"text": func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
	} {
		var buf bytes.Buffer
		log := slog.New(h(&buf))
		log.Info("resolved", "secret", s, slog.Any("any", s), "struct", struct{ S secrets.Secret }{s})
		log.Info("group", slog.Group("g", "s", s))
		require.NotContains(t, buf.String(), value, name)
		require.Contains(t, buf.String(), "[redacted]", name)
	}
}

func TestSecretRevealReturnsACopy(t *testing.T) {
	t.Parallel()
	raw := []byte(value)
	s := secrets.New(raw)
	raw[0] = 'X' // the caller's slice no longer reaches the secret
	got := s.Reveal()
	require.Equal(t, value, string(got))
	got[0] = 'Y' // nor does the revealed copy
	require.Equal(t, value, string(s.Reveal()))
	require.Equal(t, len(value), s.Len())
	require.False(t, s.IsZero())
	require.True(t, secrets.Secret{}.IsZero())
	require.Nil(t, secrets.Secret{}.Reveal())
}

func TestSecretEqualComparesValues(t *testing.T) {
	t.Parallel()
	a := secrets.New([]byte(value))
	require.True(t, a.Equal(secrets.New([]byte(value))))
	require.False(t, a.Equal(secrets.New([]byte(value+"x"))))
	require.True(t, secrets.Secret{}.Equal(secrets.New(nil)))
}

func TestHexBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		want []byte
		ok   bool
	}{
		{"lower case hex decodes", "00ff10", []byte{0x00, 0xff, 0x10}, true},
		{"upper case hex decodes", "00FF10", []byte{0x00, 0xff, 0x10}, true},
		{"odd length is rejected", "0ff", nil, false},
		{"non hex characters are rejected", "zz" + value, nil, false},
		{"empty is rejected", "", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := secrets.New([]byte(tc.in)).HexBytes()
			if !tc.ok {
				require.ErrorIs(t, err, secrets.ErrNotHex)
				require.NotContains(t, err.Error(), value)
				require.True(t, got.IsZero())
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got.Reveal())
		})
	}
}
