package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// The payload errors. They are internal errors: a payload is built by the
// use case that appends the event, never taken from a request as is, so a
// broken payload is a bug in that use case.
var (
	// ErrPayloadInvalid: the payload does not marshal, or is not one JSON
	// value.
	ErrPayloadInvalid = errs.New(errs.CodeInternal, "sync: event payload is not valid JSON")
	// ErrPayloadNotObject: payload rule 1, the payload is a JSON object.
	ErrPayloadNotObject = errs.New(errs.CodeInternal, "sync: event payload is not a JSON object")
	// ErrPayloadNull: payload rule 2 (ADR 0053), no null at any depth.
	ErrPayloadNull = errs.New(errs.CodeInternal, "sync: event payload contains null")
	// ErrPayloadID: payload rule 3, a member named id, *_id or *_ids holds
	// something other than canonical identifiers.
	ErrPayloadID = errs.New(errs.CodeInternal, "sync: event payload has a non-canonical identifier")
)

// NormalizePayload checks raw against the payload rules of
// docs/spec/04-sync-protocol.md 2.2 and returns its normalized form:
//
//  1. raw is exactly one JSON object (ErrPayloadInvalid, ErrPayloadNotObject);
//  2. no member or array element at any depth is null (ErrPayloadNull);
//  3. a member named "id" or ending in "_id" is a canonical lower-case UUID
//     string other than the nil UUID, and a member ending in "_ids" is an
//     array of them (ErrPayloadID);
//  4. every other string longer than textMaxBytes bytes
//     (sync.payload_text_max_bytes) is cut to at most textMaxBytes bytes at
//     a character boundary, and truncated reports that something was cut.
//
// Rule 5 (no secrets, nothing beyond the receive action) is the appending
// use case's duty and cannot be checked here.
//
// The result is compact, has its members sorted by name, keeps numbers as
// written and does not escape HTML characters, so normalizing it again
// returns the same bytes. textMaxBytes must be positive.
func NormalizePayload(raw []byte, textMaxBytes int) (out []byte, truncated bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false, ErrPayloadInvalid
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false, ErrPayloadInvalid
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, false, ErrPayloadNotObject
	}
	// Decoded JSON holds only kinds normalize takes, so it never answers
	// errOtherKind here.
	return normalize(obj, textMaxBytes)
}

// normalize applies payload rules 2 to 4 to obj and encodes the result. It
// serves both a decoded payload (NormalizePayload) and a payload as the use
// cases build it, a map[string]any of maps, []any, strings, identifiers
// (ids.ID), booleans and integers, which PrepareAppend normalizes on its Go
// values without marshalling, decoding and encoding it (three quarters of
// an event's preparation, BenchmarkPrepareAppend; D-SY-24): both give the
// same bytes, truncation and errors
// (TestNormalizeBuiltGivesWhatTheRoundTripGives). It never changes obj: a
// member it cuts is set in a copy. It returns errOtherKind for a value of
// any other kind, a nil map or slice, or an invalid UTF-8 string or member
// name (which encoding/json would change before NormalizePayload saw it);
// the caller then marshals the payload and takes NormalizePayload.
func normalize(obj map[string]any, textMaxBytes int) (out []byte, truncated bool, err error) {
	n := normalizer{max: textMaxBytes}
	obj, _, err = n.object(obj)
	if err != nil {
		return nil, false, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, false, ErrPayloadInvalid
	}
	// Compact, members sorted by name (encoding/json sorts a map's keys).
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), n.truncated, nil
}

// errOtherKind: normalize met a value of a kind it does not take.
var errOtherKind = errors.New("sync: payload value of another kind")

type normalizer struct {
	max       int
	truncated bool
}

// object applies the rules to the members of obj; changed reports that out
// is a copy of obj with members cut.
func (n *normalizer) object(obj map[string]any) (out map[string]any, changed bool, err error) {
	if obj == nil {
		return nil, false, errOtherKind
	}
	out = obj
	for k, v := range obj {
		if !utf8.ValidString(k) {
			return nil, false, errOtherKind
		}
		switch {
		case v == nil:
			return nil, false, ErrPayloadNull
		case k == "id" || strings.HasSuffix(k, "_id"):
			if err := idValue(v); err != nil {
				return nil, false, err
			}
		case strings.HasSuffix(k, "_ids"):
			if err := idList(v); err != nil {
				return nil, false, err
			}
		default:
			cut, cutChanged, err := n.value(v)
			if err != nil {
				return nil, false, err
			}
			if cutChanged {
				if !changed {
					out, changed = maps.Clone(obj), true
				}
				out[k] = cut
			}
		}
	}
	return out, changed, nil
}

// value applies the rules to v, a member or an array element; changed
// reports that out is v cut (or a copy of it with something cut).
func (n *normalizer) value(v any) (out any, changed bool, err error) {
	switch x := v.(type) {
	case nil:
		return nil, false, ErrPayloadNull
	case string:
		if !utf8.ValidString(x) {
			return nil, false, errOtherKind
		}
		cut := n.text(x)
		return cut, len(cut) != len(x), nil
	case ids.ID:
		// Outside an identifier's member it is text like any other.
		s := x.String()
		cut := n.text(s)
		return cut, len(cut) != len(s), nil
	case bool, int, int64, json.Number:
		return v, false, nil
	case map[string]any:
		return n.object(x)
	case []any:
		if x == nil {
			return nil, false, errOtherKind
		}
		out := x
		for i, e := range x {
			cut, cutChanged, err := n.value(e)
			if err != nil {
				return nil, false, err
			}
			if cutChanged {
				if !changed {
					out, changed = slices.Clone(x), true
				}
				out[i] = cut
			}
		}
		return out, changed, nil
	default:
		return nil, false, errOtherKind
	}
}

// text cuts s to at most n.max bytes without splitting a character.
func (n *normalizer) text(s string) string {
	if len(s) <= n.max {
		return s
	}
	n.truncated = true
	cut := n.max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// idValue checks the value of a member named id or *_id: a kind that is
// never JSON text is ErrPayloadID; a kind normalize does not take (one that
// may marshal to text) is errOtherKind.
func idValue(v any) error {
	switch x := v.(type) {
	case nil:
		return ErrPayloadNull
	case string:
		if !canonicalID(x) {
			return ErrPayloadID
		}
		return nil
	case ids.ID:
		if x.IsZero() {
			return ErrPayloadID
		}
		return nil
	case bool, int, int64, json.Number, map[string]any, []any:
		return ErrPayloadID
	default:
		return errOtherKind
	}
}

// idList checks the value of a member named *_ids, as idValue does.
func idList(v any) error {
	switch x := v.(type) {
	case []ids.ID:
		if x == nil {
			return errOtherKind
		}
		for _, id := range x {
			if id.IsZero() {
				return ErrPayloadID
			}
		}
		return nil
	case []any:
		if x == nil {
			return errOtherKind
		}
		for _, e := range x {
			if err := idValue(e); err != nil {
				return err
			}
		}
		return nil
	case string, bool, int, int64, json.Number, map[string]any:
		return ErrPayloadID
	default:
		return errOtherKind
	}
}

func canonicalID(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	id, err := ids.Parse(s)
	return err == nil && !id.IsZero() && id.String() == s
}
