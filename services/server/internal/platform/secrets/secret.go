// Package secrets resolves secret references of the configuration (keys
// ending in _ref, such as webhook.hmac_master_key_ref) to their values and
// holds those values in a type that cannot leak by accident.
//
// A reference has the form file:<path>; the file holds the value, optionally
// followed by one newline. Provider.Resolve reads it and caches the value for
// secrets.cache_ttl, so a rotated file is picked up without a restart.
//
// Secret renders as "[redacted]" in every fmt verb, in JSON, as text and in
// slog; the bytes come out only through Reveal. Errors name a reference only
// by its scheme and file name and never carry a value (SEC-SEC-3).
package secrets

import (
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
)

// Redacted is what a Secret shows wherever it is printed, marshalled or logged.
const Redacted = "[redacted]"

// ErrNotHex is returned by Secret.HexBytes for a value that is not an even
// number of hex digits.
var ErrNotHex = errors.New("secrets: value is not hex-encoded")

// Secret holds secret bytes. The zero value is the empty secret. A Secret is
// immutable and safe to copy and to share between goroutines.
//
// The bytes sit behind a pointer, so even a printer that cannot call the
// methods (an unexported struct field printed with %v) shows an address and
// never the value. Reflection-based dumpers can still reach it: never hand a
// Secret to one.
type Secret struct {
	b *box
}

type box struct{ v []byte }

// New returns a Secret holding a copy of b; later changes to b do not reach
// it.
func New(b []byte) Secret {
	if len(b) == 0 {
		return Secret{}
	}
	return Secret{b: &box{v: append([]byte(nil), b...)}}
}

// Reveal returns a copy of the secret bytes, or nil for the empty secret. It
// is the only way out: call it at the point of use (signing, connecting) and
// do not keep the result.
func (s Secret) Reveal() []byte {
	if s.b == nil {
		return nil
	}
	return append([]byte(nil), s.b.v...)
}

// Len returns the length of the value in bytes.
func (s Secret) Len() int {
	if s.b == nil {
		return 0
	}
	return len(s.b.v)
}

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.Len() == 0 }

// Equal compares two secrets in constant time (for equal lengths).
func (s Secret) Equal(o Secret) bool {
	var a, b []byte
	if s.b != nil {
		a = s.b.v
	}
	if o.b != nil {
		b = o.b.v
	}
	return subtle.ConstantTimeCompare(a, b) == 1
}

// HexBytes decodes a hex-encoded value, the form of every secret of generator
// key in the catalogue (stack.GeneratorKey), and returns the decoded bytes as
// a Secret. The error is ErrNotHex and never shows the offending character.
func (s Secret) HexBytes() (Secret, error) {
	if s.b == nil || len(s.b.v)%2 != 0 {
		return Secret{}, ErrNotHex
	}
	dst := make([]byte, len(s.b.v)/2)
	if _, err := hex.Decode(dst, s.b.v); err != nil {
		clear(dst)
		// The hex error names the invalid byte: drop it.
		return Secret{}, ErrNotHex
	}
	out := New(dst)
	clear(dst)
	return out, nil
}

// String returns Redacted.
func (s Secret) String() string { return Redacted }

// GoString returns Redacted, for %#v.
func (s Secret) GoString() string { return Redacted }

// Format writes Redacted for every verb (%v, %+v, %#v, %s, %q, %x, ...).
func (s Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, Redacted) }

// MarshalJSON returns the JSON string "[redacted]".
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + Redacted + `"`), nil }

// MarshalText returns Redacted.
func (s Secret) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

// LogValue makes slog print Redacted.
func (s Secret) LogValue() slog.Value { return slog.StringValue(Redacted) }

var (
	_ fmt.Formatter  = Secret{}
	_ fmt.GoStringer = Secret{}
	_ slog.LogValuer = Secret{}
)
