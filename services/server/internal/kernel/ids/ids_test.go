package ids_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/ids"
)

func TestNewIsVersion7AndSortsByTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	a, err := ids.NewAt(at, bytes.NewReader(bytes.Repeat([]byte{0xff}, 10)))
	require.NoError(t, err)
	b, err := ids.NewAt(at.Add(time.Millisecond), bytes.NewReader(make([]byte, 10)))
	require.NoError(t, err)

	require.Equal(t, byte(0x70), a[6]&0xf0, "version nibble")
	require.Equal(t, byte(0x80), a[8]&0xc0, "variant bits")
	require.Less(t, a.String(), b.String(), "later identifiers sort later")
	require.Equal(t, at, a.Time())
}

func TestParseRoundTrip(t *testing.T) {
	t.Parallel()
	id := ids.New()
	parsed, err := ids.Parse(id.String())
	require.NoError(t, err)
	require.Equal(t, id, parsed)

	upper, err := ids.Parse("0192F3A4-5B6C-7D8E-9FA0-B1C2D3E4F5A6")
	require.NoError(t, err)
	require.Equal(t, "0192f3a4-5b6c-7d8e-9fa0-b1c2d3e4f5a6", upper.String())
}

func TestParseRejectsOtherForms(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"empty":           "",
		"no hyphens":      "0192f3a45b6c7d8e9fa0b1c2d3e4f5a6",
		"braces":          "{0192f3a4-5b6c-7d8e-9fa0-b1c2d3e4f5a6}",
		"urn":             "urn:uuid:0192f3a4-5b6c-7d8e-9fa0-b1c2d3e4f5a6",
		"not hexadecimal": "0192f3a4-5b6c-7d8e-9fa0-b1c2d3e4f5ag",
	} {
		_, err := ids.Parse(in)
		require.ErrorIs(t, err, ids.ErrInvalid, name)
	}
}

func TestJSONAndZero(t *testing.T) {
	t.Parallel()
	id := ids.MustParse("0192f3a4-5b6c-7d8e-9fa0-b1c2d3e4f5a6")
	out, err := json.Marshal(struct{ ID ids.ID }{id})
	require.NoError(t, err)
	require.JSONEq(t, `{"ID":"0192f3a4-5b6c-7d8e-9fa0-b1c2d3e4f5a6"}`, string(out))

	var back struct{ ID ids.ID }
	require.NoError(t, json.Unmarshal(out, &back))
	require.Equal(t, id, back.ID)

	require.True(t, ids.Zero.IsZero())
	require.Equal(t, "", ids.Zero.String())
	v, err := ids.Zero.Value()
	require.NoError(t, err)
	require.Nil(t, v)
}

func FuzzParse(f *testing.F) {
	f.Add("0192f3a4-5b6c-7d8e-9fa0-b1c2d3e4f5a6") // canonical
	f.Add("0192F3A4-5B6C-7D8E-9FA0-B1C2D3E4F5A6") // upper case
	f.Add("0192f3a4-5b6c-7d8e-9fa0-b1c2d3e4f5a")  // one short
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ids.Parse(s)
		if err != nil {
			return
		}
		again, err := ids.Parse(id.String())
		if err != nil || again != id {
			t.Fatalf("round trip of %q failed", s)
		}
	})
}
