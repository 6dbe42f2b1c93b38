package httpserver

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// MaxCursorLen is the longest cursor Decode reads and Encode writes, in
// characters. It is a property of the format (a position is a few keys such
// as a seq and an ID), not a product limit: a longer string cannot be a
// cursor of this server and is refused before any work.
const MaxCursorLen = 512

// MinCursorKeyLen is the shortest key NewCursors accepts (the HMAC-SHA256
// block of security, RFC 2104 section 3).
const MinCursorKeyLen = 32

// cursorVersion is the first byte of every cursor; a new layout gets a new
// version, so old cursors fail cleanly with cursor_invalid.
const cursorVersion = 1

// cursorDomain separates cursor MACs from every other use of the key.
const cursorDomain = "bothy.cursor.v1"

// Cursors encodes and decodes opaque pagination cursors
// (docs/spec/06-api.md 6). A cursor is base64url (no padding) of
// version || position JSON || HMAC-SHA256 tag; the tag covers the version,
// the operation ID, the principal ID and the position, so a cursor works
// only for the operation and the principal it was made for. Changing the key
// invalidates every cursor (clients start from the first page again).
type Cursors struct {
	key []byte
}

// NewCursors returns a codec with the server key key (at least
// MinCursorKeyLen bytes, from the secret provider). It copies key.
func NewCursors(key []byte) (*Cursors, error) {
	if len(key) < MinCursorKeyLen {
		return nil, errors.New("httpserver: cursor key is shorter than 32 bytes")
	}
	return &Cursors{key: bytes.Clone(key)}, nil
}

// Encode returns the cursor of position (any JSON-encodable value, usually
// a small struct) for operation op and principal. It returns an internal
// error when position does not encode or the cursor would exceed
// MaxCursorLen.
func (c *Cursors) Encode(op string, principal ids.ID, position any) (string, error) {
	pos, err := json.Marshal(position)
	if err != nil {
		return "", errs.Wrap(err, "cursor position does not encode")
	}
	raw := make([]byte, 0, 1+len(pos)+sha256.Size)
	raw = append(raw, cursorVersion)
	raw = append(raw, pos...)
	raw = append(raw, c.tag(op, principal, raw)...)
	s := base64.RawURLEncoding.EncodeToString(raw)
	if len(s) > MaxCursorLen {
		return "", errs.Internalf("cursor position is too large")
	}
	return s, nil
}

// Decode reads cursor s made by Encode for op and principal into position
// (a pointer). Every defect (garbage, another version, a tag that does not
// match because the cursor was tampered with or made for another operation
// or principal, or a position that does not fit) gives the same *errs.Error
// with CodeCursorInvalid (400), so a client learns nothing from the answer.
func (c *Cursors) Decode(op string, principal ids.ID, s string, position any) error {
	if len(s) == 0 || len(s) > MaxCursorLen {
		return cursorInvalid()
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || len(raw) < 1+sha256.Size+1 || raw[0] != cursorVersion {
		return cursorInvalid()
	}
	body, got := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	if !hmac.Equal(got, c.tag(op, principal, body)) {
		return cursorInvalid()
	}
	d := json.NewDecoder(bytes.NewReader(body[1:]))
	d.DisallowUnknownFields()
	if err := d.Decode(position); err != nil || d.More() {
		return cursorInvalid()
	}
	return nil
}

// tag returns the HMAC tag over the domain, op (length-prefixed, so no
// operation ID can pose as another), the principal and body.
func (c *Cursors) tag(op string, principal ids.ID, body []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(cursorDomain))
	m.Write(binary.AppendUvarint(nil, uint64(len(op))))
	m.Write([]byte(op))
	m.Write(principal[:])
	m.Write(body)
	return m.Sum(nil)
}

func cursorInvalid() *errs.Error {
	return errs.New(errs.CodeCursorInvalid, "cursor is invalid")
}
