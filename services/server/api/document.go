package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"bothy/server/internal/kernel/errs"
)

// checkDocument checks that body is exactly one I-JSON document (RFC 7493)
// whose strings PostgreSQL can store, before the schema is looked at:
//
//   - valid UTF-8 and nothing but white space after the first value
//     (trailing data or a second document is a client mistake, not a
//     value to ignore);
//   - no member name twice in one object (parsers disagree on which one
//     wins, so a duplicate could pass validation with one value and reach
//     the handler with the other);
//   - no NUL character (U+0000) and no unpaired surrogate escape in any
//     string or member name: PostgreSQL stores neither in text or jsonb.
//
// It returns one item per defect with the JSON pointer of the member or
// string (the empty pointer for the whole body); a body that is not JSON
// at all gives one invalid_json item, which the schema validation reports
// as well. It never fails otherwise and never keeps the body. A plain body
// (plainDocument) is answered without the walk through its tokens
// (D-HT-20).
func checkDocument(body []byte) []errs.FieldError {
	if plainDocument(body) {
		return nil
	}
	return walkDocument(body)
}

// plainDocumentKeys is the most member names plainDocument keeps of the
// objects open at one point of a body; a body with more is left to
// walkDocument, so a hostile body cannot make the comparisons grow with
// the square of its members.
const plainDocumentKeys = 16

// plainDocument reports, without allocating, that body has none of the
// defects walkDocument reports: it is valid UTF-8 and one JSON document
// (json.Valid), no \u escape in it is U+0000 or a surrogate, and no object
// has the same member name twice. It is the common case, a body from a
// well-behaved client, checked at a fraction of the cost of the walk's
// tokens. false only means that the walk must decide (also for a member
// name with an escape, more than plainDocumentKeys members in the objects
// open at one point, or a surrogate pair, which the walk accepts).
func plainDocument(body []byte) bool {
	if !utf8.Valid(body) || !json.Valid(body) || suspectEscape(body) {
		return false
	}
	// body is valid JSON from here on: every string ends, and a member name
	// is the first string after '{' or after ',' inside an object.
	type frame struct {
		object bool
		keys   int // index in keys of the object's first member name
	}
	var (
		framesArray [8]frame
		keysArray   [plainDocumentKeys]([]byte)
		frames      = framesArray[:0]
		keys        = keysArray[:0]
		wantKey     bool
	)
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{', '[':
			frames = append(frames, frame{object: body[i] == '{', keys: len(keys)})
			wantKey = body[i] == '{'
		case '}', ']':
			keys = keys[:frames[len(frames)-1].keys]
			frames = frames[:len(frames)-1]
			wantKey = false
		case ',':
			wantKey = frames[len(frames)-1].object
		case '"':
			end := i + 1
			for body[end] != '"' {
				if body[end] == '\\' {
					end++
				}
				end++
			}
			if wantKey {
				key := body[i+1 : end]
				if bytes.IndexByte(key, '\\') >= 0 || len(keys) == cap(keys) {
					return false
				}
				for _, k := range keys[frames[len(frames)-1].keys:] {
					if bytes.Equal(k, key) {
						return false
					}
				}
				keys = append(keys, key)
				wantKey = false
			}
			i = end
		}
	}
	return true
}

// suspectEscape reports whether body holds a \u escape of U+0000 or of a
// surrogate, or text that looks like one (an escaped backslash before it):
// walkDocument decides those.
func suspectEscape(body []byte) bool {
	for rest := body; ; {
		at := bytes.Index(rest, []byte(`\u`))
		if at < 0 {
			return false
		}
		rest = rest[at+2:]
		if len(rest) < 4 {
			return true
		}
		if string(rest[:4]) == "0000" || (rest[0]|0x20 == 'd' && (rest[1] >= '8' && rest[1] <= '9' || rest[1]|0x20 >= 'a' && rest[1]|0x20 <= 'f')) {
			return true
		}
	}
}

// walkDocument is checkDocument's walk through the tokens of body, with the
// pointer of every defect.
func walkDocument(body []byte) []errs.FieldError {
	if !utf8.Valid(body) {
		return []errs.FieldError{field("", codeInvalidJSON)}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	type frame struct {
		pointer string
		object  bool
		wantKey bool
		key     string
		index   int
		keys    map[string]bool
	}
	var (
		stack []*frame
		out   []errs.FieldError
		done  bool
	)
	// valuePointer is the pointer of the value that the next token starts.
	valuePointer := func() string {
		if len(stack) == 0 {
			return ""
		}
		top := stack[len(stack)-1]
		if top.object {
			return top.pointer + "/" + escapeToken(top.key)
		}
		return top.pointer + "/" + strconv.Itoa(top.index)
	}
	// advance moves past one value of the innermost container.
	advance := func() {
		if len(stack) == 0 {
			done = true
			return
		}
		top := stack[len(stack)-1]
		if top.object {
			top.wantKey = true
		} else {
			top.index++
		}
	}
	for !done {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			// Not JSON (or cut short): the schema validation reports it too.
			return append(out, field("", codeInvalidJSON))
		}
		raw := body[start:dec.InputOffset()]
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				stack = append(stack, &frame{pointer: valuePointer(), object: d == '{', wantKey: d == '{', keys: map[string]bool{}})
			default:
				stack = stack[:len(stack)-1]
				advance()
			}
			continue
		}
		if len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].wantKey {
			top := stack[len(stack)-1]
			key, _ := tok.(string)
			top.key, top.wantKey = key, false
			// The member's pointer only for a defect: a valid body, the
			// common case, allocates none.
			if top.keys[key] {
				out = append(out, field(valuePointer(), codeDuplicateMember))
			}
			top.keys[key] = true
			if unstorable(key, raw) {
				out = append(out, field(valuePointer(), codeInvalidCharacter))
			}
			continue
		}
		if s, ok := tok.(string); ok && unstorable(s, raw) {
			out = append(out, field(valuePointer(), codeInvalidCharacter))
		}
		advance()
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		out = append(out, field("", codeTrailingData))
	}
	return out
}

// unstorable reports whether the decoded string s (raw is its JSON text,
// possibly with the separators before it) holds a NUL character or an
// unpaired surrogate escape, which the decoder turned into U+FFFD.
func unstorable(s string, raw []byte) bool {
	if strings.IndexByte(s, 0) >= 0 {
		return true
	}
	return loneSurrogate(raw)
}

// loneSurrogate reports whether the JSON text raw contains a \u escape of a
// surrogate that is not part of a high-low pair.
func loneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // a two-character escape such as \\ or \"
			continue
		}
		r, ok := hex4(raw, i+2)
		if !ok {
			return false // not JSON; the decoder already refused it
		}
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			if i+12 > len(raw) || raw[i+6] != '\\' || raw[i+7] != 'u' {
				return true
			}
			low, ok := hex4(raw, i+8)
			if !ok || low < 0xDC00 || low > 0xDFFF {
				return true
			}
			i += 11
		default:
			i += 5
		}
	}
	return false
}

// hex4 decodes the four hex digits of raw at i.
func hex4(raw []byte, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw[i:i+4]), 16, 32)
	return rune(n), err == nil
}
