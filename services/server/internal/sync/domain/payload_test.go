package domain_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/sync/domain"
)

const alexID = "019ad3a0-7c00-7000-8000-0000000000a1"

func TestNormalizePayloadAccepts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
		max            int
		truncated      bool
	}{
		{"the empty object stays empty", `{}`, `{}`, 10, false},
		{"members are sorted and compacted", `{ "b": 1, "a": [true, false] }`, `{"a":[true,false],"b":1}`, 10, false},
		{"numbers keep their exact text", `{"n": 12345678901234567890, "f": 1.50}`, `{"f":1.50,"n":12345678901234567890}`, 10, false},
		{"html characters are not escaped", `{"t": "a<b&c"}`, `{"t":"a<b&c"}`, 10, false},
		{"canonical ids are kept", `{"author_id": "` + alexID + `", "mention_ids": ["` + alexID + `"]}`,
			`{"author_id":"` + alexID + `","mention_ids":["` + alexID + `"]}`, 10, false},
		{"ids are exempt from the text limit", `{"id": "` + alexID + `"}`, `{"id":"` + alexID + `"}`, 4, false},
		{"text at the limit is kept", `{"text": "abcd"}`, `{"text":"abcd"}`, 4, false},
		{"text above the limit is cut", `{"text": "abcdef"}`, `{"text":"abcd"}`, 4, true},
		{"text is cut at a character boundary", `{"text": "abcdé"}`, `{"text":"abcd"}`, 5, true},
		{"text deep inside arrays and objects is cut", `{"a": [{"b": ["xxxxxx"]}]}`, `{"a":[{"b":["xxxx"]}]}`, 4, true},
		{"empty arrays are allowed", `{"a": []}`, `{"a":[]}`, 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, truncated, err := domain.NormalizePayload([]byte(tc.in), tc.max)
			require.NoError(t, err)
			require.Equal(t, tc.want, string(out))
			require.Equal(t, tc.truncated, truncated)
		})
	}
}

func TestNormalizePayloadRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     error
	}{
		{"a top-level null", `null`, domain.ErrPayloadNotObject},
		{"an array", `[1]`, domain.ErrPayloadNotObject},
		{"a string", `"x"`, domain.ErrPayloadNotObject},
		{"a null member", `{"a": null}`, domain.ErrPayloadNull},
		{"a null inside an array", `{"a": [1, null]}`, domain.ErrPayloadNull},
		{"a null deep inside", `{"a": {"b": {"c": [{"d": null}]}}}`, domain.ErrPayloadNull},
		{"a null id", `{"author_id": null}`, domain.ErrPayloadNull},
		{"an upper-case id", `{"author_id": "` + strings.ToUpper(alexID) + `"}`, domain.ErrPayloadID},
		{"an id that is not a UUID", `{"id": "alex"}`, domain.ErrPayloadID},
		{"an empty id", `{"id": ""}`, domain.ErrPayloadID},
		{"a numeric id", `{"id": 7}`, domain.ErrPayloadID},
		{"an id list that is not a list", `{"member_ids": "` + alexID + `"}`, domain.ErrPayloadID},
		{"a bad id inside a list", `{"member_ids": ["` + alexID + `", "x"]}`, domain.ErrPayloadID},
		{"invalid JSON", `{"a": }`, domain.ErrPayloadInvalid},
		{"trailing data", `{} {}`, domain.ErrPayloadInvalid},
		{"empty input", ``, domain.ErrPayloadInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := domain.NormalizePayload([]byte(tc.in), 100)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

// FuzzNormalizePayload: no input panics; an accepted payload is a JSON
// object without null whose strings (other than IDs) fit the limit, and
// normalizing it again changes nothing and cuts nothing.
func FuzzNormalizePayload(f *testing.F) {
	// Seeds: empty object, nested values, an id member, long text, a null,
	// multi-byte text near the limit, and broken JSON.
	f.Add([]byte(`{}`), 8)
	f.Add([]byte(`{"a": [1, {"b": "c"}], "d": true}`), 8)
	f.Add([]byte(`{"author_id": "`+alexID+`"}`), 8)
	f.Add([]byte(`{"text": "a long text that is cut"}`), 8)
	f.Add([]byte(`{"a": null}`), 8)
	f.Add([]byte(`{"t": "ééééé"}`), 5)
	f.Add([]byte(`{"a": `), 8)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max < 1 || max > 1<<16 {
			max = 8
		}
		out, _, err := domain.NormalizePayload(in, max)
		if err != nil {
			return
		}
		var v map[string]any
		require.NoError(t, json.Unmarshal(out, &v))
		again, truncated, err := domain.NormalizePayload(out, max)
		require.NoError(t, err)
		require.False(t, truncated)
		require.Equal(t, string(out), string(again))
		require.NotContains(t, walkStrings(v), "\x00null")
		for _, s := range walkStrings(v) {
			require.True(t, utf8.ValidString(s))
		}
	})
}

// walkStrings returns every string value, and the marker "\x00null" for a
// null, in v.
func walkStrings(v any) []string {
	var out []string
	switch x := v.(type) {
	case nil:
		out = append(out, "\x00null")
	case string:
		out = append(out, x)
	case map[string]any:
		for _, e := range x {
			out = append(out, walkStrings(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, walkStrings(e)...)
		}
	}
	return out
}

type messagePayload struct {
	Text     string `json:"text"`
	AuthorID ids.ID `json:"author_id"`
	Edited   *bool  `json:"edited,omitempty"`
}

func TestPrepareAppend(t *testing.T) {
	t.Parallel()
	alex, robin := ids.MustParse(alexID), ids.New()
	resource := ids.New()
	for _, tc := range []struct {
		name    string
		ev      eventlog.Event
		want    error
		payload string
	}{
		{"a message event with a struct payload",
			eventlog.Event{Type: eventlog.MessageCreated, ResourceID: resource, Payload: messagePayload{Text: "hello", AuthorID: alex}},
			nil, `{"author_id":"` + alexID + `","text":"hello"}`},
		{"a nil payload is the empty object",
			eventlog.Event{Type: eventlog.ChannelCreated, ResourceID: resource}, nil, `{}`},
		{"a personal event with its audience",
			eventlog.Event{Type: eventlog.AppInstallationUpdated, ResourceID: resource, AudiencePrincipalID: robin, Payload: map[string]any{"state": "active"}},
			nil, `{"state":"active"}`},
		{"a type outside the catalogue",
			eventlog.Event{Type: "message.exploded", ResourceID: resource}, domain.ErrUnknownType, ""},
		{"a personal type without audience",
			eventlog.Event{Type: eventlog.AppInstallationUpdated, ResourceID: resource}, domain.ErrAudience, ""},
		{"a shared type with an audience",
			eventlog.Event{Type: eventlog.MessageCreated, ResourceID: resource, AudiencePrincipalID: robin}, domain.ErrAudience, ""},
		{"an event without resource",
			eventlog.Event{Type: eventlog.MessageCreated}, domain.ErrNoResource, ""},
		{"a payload that is not an object",
			eventlog.Event{Type: eventlog.MessageCreated, ResourceID: resource, Payload: []string{"a"}}, domain.ErrPayloadNotObject, ""},
		{"a payload with a null member",
			eventlog.Event{Type: eventlog.MessageCreated, ResourceID: resource, Payload: map[string]any{"text": nil}}, domain.ErrPayloadNull, ""},
		{"a payload that does not marshal",
			eventlog.Event{Type: eventlog.MessageCreated, ResourceID: resource, Payload: map[string]any{"c": make(chan int)}}, domain.ErrPayloadInvalid, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.PrepareAppend(tc.ev, 100)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
				return
			}
			require.NoError(t, err)
			info, _ := eventlog.Lookup(tc.ev.Type)
			require.Equal(t, info, got.Info)
			require.Equal(t, tc.payload, string(got.Payload))
			require.False(t, got.Truncated)
		})
	}
}

func TestPrepareAppendTruncatesLongText(t *testing.T) {
	t.Parallel()
	got, err := domain.PrepareAppend(eventlog.Event{
		Type: eventlog.MessageCreated, ResourceID: ids.New(),
		Payload: messagePayload{Text: strings.Repeat("x", 20), AuthorID: ids.MustParse(alexID)},
	}, 8)
	require.NoError(t, err)
	require.True(t, got.Truncated)
	require.JSONEq(t, `{"author_id":"`+alexID+`","text":"xxxxxxxx"}`, string(got.Payload))
}

// BenchmarkPrepareAppend prepares the event of one posted message as chat
// builds it (a map of maps with typed identifiers and a text of 1000
// bytes, the shape of `make bench-e2e`), at the default text limit.
func BenchmarkPrepareAppend(b *testing.B) {
	ev := eventlog.Event{Type: eventlog.MessageCreated, ResourceID: ids.New(), Payload: map[string]any{
		"message": map[string]any{
			"id": ids.New(), "space_id": ids.New(), "channel_id": ids.New(), "author_id": ids.MustParse(alexID),
			"created_at": "2026-12-06T14:00:00.000000Z", "text": strings.Repeat("Alex asks Sam about example.com. ", 31)[:1000],
		},
	}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := domain.PrepareAppend(ev, 4096); err != nil {
			b.Fatal(err)
		}
	}
}
