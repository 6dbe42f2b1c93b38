package httpserver_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/httpserver"
)

// position is the page position of listWebhookDeliveries: (event_seq, id).
type position struct {
	Seq int64  `json:"seq"`
	ID  ids.ID `json:"id"`
}

var (
	cursorKey = bytes.Repeat([]byte{0x42}, 32)
	pos       = position{Seq: 4711, ID: ids.MustParse("0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a31")}
)

func newCursors(t testing.TB) *httpserver.Cursors {
	t.Helper()
	c, err := httpserver.NewCursors(cursorKey)
	require.NoError(t, err)
	return c
}

func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	c := newCursors(t)
	s, err := c.Encode("listWebhookDeliveries", robin.ID, pos)
	require.NoError(t, err)
	require.NotContains(t, s, "=", "base64url without padding")
	require.NotContains(t, s, "+")
	require.NotContains(t, s, "/")

	var got position
	require.NoError(t, c.Decode("listWebhookDeliveries", robin.ID, s, &got))
	require.Equal(t, pos, got)

	anon, err := c.Encode("getInstance", ids.Zero, pos)
	require.NoError(t, err)
	require.NoError(t, c.Decode("getInstance", ids.Zero, anon, &got), "the anonymous principal has cursors too")
}

func TestCursorDecodeRefuses(t *testing.T) {
	t.Parallel()
	c := newCursors(t)
	good, err := c.Encode("listWebhookDeliveries", robin.ID, pos)
	require.NoError(t, err)
	raw, err := base64.RawURLEncoding.DecodeString(good)
	require.NoError(t, err)
	otherKey, err := httpserver.NewCursors(bytes.Repeat([]byte{0x43}, 32))
	require.NoError(t, err)
	fromOtherKey, err := otherKey.Encode("listWebhookDeliveries", robin.ID, pos)
	require.NoError(t, err)
	extraField, err := c.Encode("listWebhookDeliveries", robin.ID, map[string]any{"seq": 1, "admin": true})
	require.NoError(t, err)
	wrongType, err := c.Encode("listWebhookDeliveries", robin.ID, map[string]any{"seq": "one"})
	require.NoError(t, err)

	for _, tc := range []struct {
		name, op string
		who      ids.ID
		cursor   string
	}{
		{"a cursor of another operation", "listWebhookSubscriptions", robin.ID, good},
		{"a cursor of another principal", "listWebhookDeliveries", alex.ID, good},
		{"a cursor for the anonymous principal", "listWebhookDeliveries", ids.Zero, good},
		{"a cursor made with another key", "listWebhookDeliveries", robin.ID, fromOtherKey},
		{"an empty cursor", "listWebhookDeliveries", robin.ID, ""},
		{"garbage", "listWebhookDeliveries", robin.ID, "not-a-cursor!"},
		{"standard base64 with padding", "listWebhookDeliveries", robin.ID, base64.StdEncoding.EncodeToString(raw)},
		{"a cursor cut short", "listWebhookDeliveries", robin.ID, good[:len(good)-4]},
		{"a cursor with a character more", "listWebhookDeliveries", robin.ID, good + "A"},
		{"another version", "listWebhookDeliveries", robin.ID, base64.RawURLEncoding.EncodeToString(append([]byte{2}, raw[1:]...))},
		{"a position with an unknown field", "listWebhookDeliveries", robin.ID, extraField},
		{"a position of the wrong type", "listWebhookDeliveries", robin.ID, wrongType},
		{"an overlong string", "listWebhookDeliveries", robin.ID, strings.Repeat("A", httpserver.MaxCursorLen+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got position
			err := c.Decode(tc.op, tc.who, tc.cursor, &got)
			require.Equal(t, errs.CodeCursorInvalid, errs.CodeOf(err))
			require.Equal(t, 400, httpserver.StatusOf(errs.CodeOf(err)))
		})
	}

	t.Run("every flipped bit", func(t *testing.T) {
		t.Parallel()
		for i := range raw {
			for bit := range 8 {
				tampered := bytes.Clone(raw)
				tampered[i] ^= 1 << bit
				var got position
				err := c.Decode("listWebhookDeliveries", robin.ID, base64.RawURLEncoding.EncodeToString(tampered), &got)
				require.Equal(t, errs.CodeCursorInvalid, errs.CodeOf(err), "byte %d bit %d", i, bit)
			}
		}
	})
}

func TestCursorEncodeRefusesLargePositions(t *testing.T) {
	t.Parallel()
	_, err := newCursors(t).Encode("listWebhookDeliveries", robin.ID, strings.Repeat("x", httpserver.MaxCursorLen))
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
	_, err = newCursors(t).Encode("listWebhookDeliveries", robin.ID, func() {})
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
}

func TestNewCursorsNeedsA32ByteKey(t *testing.T) {
	t.Parallel()
	_, err := httpserver.NewCursors(make([]byte, 31))
	require.Error(t, err)
	key := bytes.Repeat([]byte{7}, 32)
	c, err := httpserver.NewCursors(key)
	require.NoError(t, err)
	s, err := c.Encode("op", robin.ID, pos)
	require.NoError(t, err)
	key[0] = 8 // the codec keeps its own copy
	var got position
	require.NoError(t, c.Decode("op", robin.ID, s, &got))
}

// FuzzCursorDecode feeds arbitrary strings to Decode. Properties: it never
// panics; it fails only with cursor_invalid; and a string it accepts is
// exactly what Encode makes of the decoded position (only the codec can
// produce an accepted cursor, and positions have one encoding).
func FuzzCursorDecode(f *testing.F) {
	c := newCursors(f)
	good, err := c.Encode("listWebhookDeliveries", robin.ID, pos)
	require.NoError(f, err)
	zero, err := c.Encode("listWebhookDeliveries", robin.ID, position{})
	require.NoError(f, err)
	f.Add(good)                                           // a valid cursor
	f.Add(zero)                                           // a valid cursor of the zero position
	f.Add(good[:len(good)-1])                             // cut by one character
	f.Add(good + "AA")                                    // extended
	f.Add("")                                             // empty
	f.Add("AQ")                                           // the version byte alone
	f.Add("AXt9")                                         // version and "{}" without a tag
	f.Add("%%%")                                          // not base64url
	f.Add(strings.Repeat("A", httpserver.MaxCursorLen+1)) // overlong
	f.Fuzz(func(t *testing.T, s string) {
		var got position
		err := c.Decode("listWebhookDeliveries", robin.ID, s, &got)
		if err != nil {
			require.Equal(t, errs.CodeCursorInvalid, errs.CodeOf(err))
			return
		}
		again, err := c.Encode("listWebhookDeliveries", robin.ID, got)
		require.NoError(t, err)
		require.Equal(t, s, again)
	})
}
