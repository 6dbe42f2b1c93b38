// Package ids defines the identifier type of every row and event: a UUID of
// version 7 (RFC 9562), written in its canonical lower-case hyphenated form.
//
// Version 7 puts the creation time in the first 48 bits, so identifiers made
// later sort later. Tables keyed by them insert at the right edge of their
// B-tree indexes, and lists ordered by (created_at, id) stay stable.
package ids

import (
	"bytes"
	"crypto/rand"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"
)

// ID is a 128-bit identifier. The zero value means "no identifier": it is
// never generated, is stored as SQL NULL and is rendered as an empty string.
type ID [16]byte

// Zero is the identifier that names nothing.
var Zero ID

// ErrInvalid is returned, wrapped, by Parse and the decoding methods when the
// input is not a canonical UUID.
var ErrInvalid = errors.New("ids: invalid identifier")

// New returns a fresh UUIDv7 stamped with the current time. It panics only if
// the operating system's random source fails, which Go treats as fatal too.
func New() ID {
	id, err := NewAt(time.Now(), rand.Reader)
	if err != nil {
		panic(fmt.Sprintf("ids: reading random bytes: %v", err))
	}
	return id
}

// NewAt returns a UUIDv7 for the instant t whose random bits come from r.
// Tests pass a fixed reader to get reproducible identifiers. The 12 bits after
// the millisecond timestamp hold the sub-millisecond fraction (RFC 9562 6.2
// method 3), so identifiers made within one millisecond still sort by time.
//
// It returns an error only when r fails.
func NewAt(t time.Time, r io.Reader) (ID, error) {
	var id ID
	if _, err := io.ReadFull(r, id[6:]); err != nil {
		return Zero, err
	}
	nanos := t.UnixNano()
	ms := uint64(nanos / int64(time.Millisecond))
	frac := uint64(nanos%int64(time.Millisecond)) * 4096 / uint64(time.Millisecond)
	id[0] = byte(ms >> 40)
	id[1] = byte(ms >> 32)
	id[2] = byte(ms >> 24)
	id[3] = byte(ms >> 16)
	id[4] = byte(ms >> 8)
	id[5] = byte(ms)
	id[6] = 0x70 | byte(frac>>8)
	id[7] = byte(frac)
	id[8] = 0x80 | (id[8] & 0x3f)
	return id, nil
}

// Parse reads the canonical form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx in
// lower or upper case. Any other form (braces, URN prefix, missing hyphens)
// gives an error wrapping ErrInvalid, because an identifier has one spelling.
func Parse(s string) (ID, error) {
	var id ID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return Zero, fmt.Errorf("%w: want 36 characters in 8-4-4-4-12 form", ErrInvalid)
	}
	src := []byte(s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36])
	if _, err := hex.Decode(id[:], src); err != nil {
		return Zero, fmt.Errorf("%w: not hexadecimal", ErrInvalid)
	}
	return id, nil
}

// MustParse is Parse for constants in tests and fixtures; it panics on error.
func MustParse(s string) ID {
	id, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return id
}

// IsZero reports whether id is the zero identifier.
func (id ID) IsZero() bool { return id == Zero }

// Compare returns -1, 0 or +1 as a sorts before, with or after b in
// PostgreSQL's uuid order (bytewise), for slices.SortFunc.
func Compare(a, b ID) int { return bytes.Compare(a[:], b[:]) }

// String returns the canonical lower-case hyphenated form, or "" for Zero.
func (id ID) String() string {
	if id.IsZero() {
		return ""
	}
	var buf [36]byte
	hex.Encode(buf[0:8], id[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], id[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], id[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], id[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:], id[10:])
	return string(buf[:])
}

// Time returns the millisecond timestamp of a version 7 identifier.
func (id ID) Time() time.Time {
	ms := int64(id[0])<<40 | int64(id[1])<<32 | int64(id[2])<<24 | int64(id[3])<<16 | int64(id[4])<<8 | int64(id[5])
	return time.UnixMilli(ms).UTC()
}

// MarshalText implements encoding.TextMarshaler (JSON strings, map keys).
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; empty text gives Zero.
func (id *ID) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*id = Zero
		return nil
	}
	parsed, err := Parse(string(b))
	if err != nil {
		return err
	}
	*id = parsed
	return nil
}

// Value implements driver.Valuer: Zero is NULL, anything else the text form.
func (id ID) Value() (driver.Value, error) {
	if id.IsZero() {
		return nil, nil
	}
	return id.String(), nil
}

// Scan implements sql.Scanner for uuid columns read as text or bytes; NULL
// gives Zero.
func (id *ID) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*id = Zero
		return nil
	case string:
		return id.UnmarshalText([]byte(v))
	case []byte:
		if len(v) == 16 {
			copy(id[:], v)
			return nil
		}
		return id.UnmarshalText(v)
	case [16]byte:
		*id = ID(v)
		return nil
	default:
		return fmt.Errorf("%w: cannot scan %T", ErrInvalid, src)
	}
}
