package domain

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/ids"
)

// builtPayloads makes payloads as a use case builds them, from r: maps of
// members named like the members of real payloads, with strings (multi-byte,
// HTML and escaped characters), identifiers, booleans, integers, nested maps
// and slices. When faulty is true the payload breaks exactly one rule, so the
// error does not depend on the order in which a map is walked.
type builtPayloads struct {
	r      *rand.Rand
	faulty bool
	broken bool
}

var builtNames = []string{"a", "text", "name", "b<&>", "é", "id", "author_id", "channel_id", "mention_ids", "member_ids"}

var builtRunes = []string{"a", "b", "é", "€", "𝄞", "<", "&", "\"", "\\", "\x01", "\u2028", "\n"}

func (g *builtPayloads) object(depth int) map[string]any {
	obj := map[string]any{}
	for range g.r.IntN(4) {
		name := builtNames[g.r.IntN(len(builtNames))]
		switch {
		case name == "id" || strings.HasSuffix(name, "_id"):
			obj[name] = g.id()
		case strings.HasSuffix(name, "_ids"):
			obj[name] = g.ids()
		default:
			obj[name] = g.value(depth)
		}
	}
	if g.faulty && !g.broken && depth == 0 {
		// Break the rule at the end, once, if nothing below did.
		g.broken = true
		obj["z"] = nil
	}
	return obj
}

// breaks reports whether to break a rule here (once per payload).
func (g *builtPayloads) breaks() bool {
	if g.faulty && !g.broken && g.r.IntN(8) == 0 {
		g.broken = true
		return true
	}
	return false
}

func (g *builtPayloads) id() any {
	if g.breaks() {
		return []any{nil, ids.Zero, strings.ToUpper(ids.New().String()), "not an id", 7, true, map[string]any{}}[g.r.IntN(7)]
	}
	if g.r.IntN(2) == 0 {
		return ids.New().String()
	}
	return ids.New()
}

func (g *builtPayloads) ids() any {
	if g.breaks() {
		return []any{[]ids.ID{ids.New(), ids.Zero}, []any{ids.New(), nil}, []any{"x"}, ids.New().String(), 7}[g.r.IntN(5)]
	}
	if g.r.IntN(2) == 0 {
		return []ids.ID{ids.New(), ids.New()}
	}
	return []any{ids.New(), ids.New().String()}
}

func (g *builtPayloads) value(depth int) any {
	if g.breaks() {
		return nil
	}
	kinds := 5
	if depth < 3 {
		kinds = 7
	}
	switch g.r.IntN(kinds) {
	case 0, 1:
		var b strings.Builder
		for range g.r.IntN(12) {
			b.WriteString(builtRunes[g.r.IntN(len(builtRunes))])
		}
		return b.String()
	case 2:
		return g.r.IntN(2) == 0
	case 3:
		return []any{int(g.r.Int64()) - 1<<62, g.r.Int64()}[g.r.IntN(2)]
	case 4:
		return ids.New()
	case 5:
		return g.object(depth + 1)
	default:
		list := []any{}
		for range g.r.IntN(4) {
			list = append(list, g.value(depth+1))
		}
		return list
	}
}

// TestNormalizeBuiltGivesWhatTheRoundTripGives: for payloads as the use
// cases build them, valid or breaking one rule, at text limits that cut,
// normalize gives the bytes, the truncation and the error that
// NormalizePayload gives for the marshalled payload, and leaves the payload
// as it was.
func TestNormalizeBuiltGivesWhatTheRoundTripGives(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	cut := 0
	for i := range 4000 {
		g := &builtPayloads{r: r, faulty: i%4 == 0}
		payload := g.object(0)
		textMax := 1 + r.IntN(40)
		raw, err := json.Marshal(payload)
		require.NoError(t, err)

		want, wantTruncated, wantErr := NormalizePayload(raw, textMax)
		got, truncated, err := normalize(payload, textMax)
		require.NotErrorIs(t, err, errOtherKind, "payload %s", raw)
		if wantErr != nil {
			require.ErrorIs(t, err, wantErr, "payload %s", raw)
			continue
		}
		require.NoError(t, err, "payload %s", raw)
		require.Equal(t, string(want), string(got), "payload %s, limit %d", raw, textMax)
		require.Equal(t, wantTruncated, truncated, "payload %s, limit %d", raw, textMax)
		after, err := json.Marshal(payload)
		require.NoError(t, err)
		require.Equal(t, string(raw), string(after), "the payload itself changed")
		if truncated {
			cut++
		}
	}
	require.Greater(t, cut, 500, "too few payloads were cut to test cutting")
}

// TestNormalizeBuiltLeavesOtherKindsToTheRoundTrip: a value normalize
// does not take (a struct, a float, a nil map or slice, invalid UTF-8 that
// encoding/json would replace) is errOtherKind, and PrepareAppend's answer
// for such a payload is the round trip's.
func TestNormalizeBuiltLeavesOtherKindsToTheRoundTrip(t *testing.T) {
	t.Parallel()
	for name, payload := range map[string]map[string]any{
		"a struct":          {"a": struct{ B string }{"x"}},
		"a float":           {"a": 1.5},
		"a nil map":         {"a": map[string]any(nil)},
		"a nil slice":       {"a": []any(nil)},
		"invalid UTF-8":     {"a": "x\xffy"},
		"an invalid name":   {"\xff": "x"},
		"a list of strings": {"member_ids": []string{ids.New().String()}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, _, err := normalize(payload, 8)
			require.ErrorIs(t, err, errOtherKind)
			raw, err := json.Marshal(payload)
			require.NoError(t, err)
			want, wantTruncated, wantErr := NormalizePayload(raw, 8)
			got, truncated, err := preparePayload(payload, 8)
			require.Equal(t, wantErr, err)
			require.Equal(t, string(want), string(got))
			require.Equal(t, wantTruncated, truncated)
		})
	}
}
