package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
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
	n := normalizer{max: textMaxBytes}
	if err := n.object(obj); err != nil {
		return nil, false, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, false, ErrPayloadInvalid
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), n.truncated, nil
}

type normalizer struct {
	max       int
	truncated bool
}

func (n *normalizer) object(obj map[string]any) error {
	for k, v := range obj {
		switch {
		case v == nil:
			return ErrPayloadNull
		case k == "id" || strings.HasSuffix(k, "_id"):
			if !canonicalID(v) {
				return ErrPayloadID
			}
		case strings.HasSuffix(k, "_ids"):
			list, ok := v.([]any)
			if !ok {
				return ErrPayloadID
			}
			for _, e := range list {
				if e == nil {
					return ErrPayloadNull
				}
				if !canonicalID(e) {
					return ErrPayloadID
				}
			}
		default:
			cut, err := n.value(v)
			if err != nil {
				return err
			}
			obj[k] = cut
		}
	}
	return nil
}

func (n *normalizer) value(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, ErrPayloadNull
	case string:
		return n.text(x), nil
	case map[string]any:
		return x, n.object(x)
	case []any:
		for i, e := range x {
			cut, err := n.value(e)
			if err != nil {
				return nil, err
			}
			x[i] = cut
		}
		return x, nil
	default:
		return v, nil
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

func canonicalID(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	id, err := ids.Parse(s)
	return err == nil && !id.IsZero() && id.String() == s
}
