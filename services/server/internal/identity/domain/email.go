package domain

import (
	"net/mail"
	"strings"
	"unicode"

	"bothy/server/internal/kernel/errs"
)

// The bounds of people.email (migration 00010).
const (
	// MinEmailLength is the shortest address in bytes.
	MinEmailLength = 3
	// MaxEmailLength is the longest address in bytes (RFC 5321 limits a
	// path to 256; 320 is the customary bound of local part and domain).
	MaxEmailLength = 320
)

// CodeInvalidEmail is the field error code of an address that is not one.
const CodeInvalidEmail = "invalid_email"

// NormalizeEmail returns the stored form of an email address: surrounding
// white space removed and lower case, so that Robin@Example.com and
// robin@example.com are the same person. The result must be a bare address
// (local@domain, no display name, no comments, no white space or control
// characters) of MinEmailLength to MaxEmailLength bytes, with a domain that
// contains a dot.
//
// Lower-casing the local part deviates from RFC 5321, which leaves it to the
// receiving host; no mail system in use distinguishes case there, and one
// person must not be able to hold two accounts by case alone.
//
// Errors: a validation_failed *errs.Error with pointer pointer and code
// invalid_email; it never contains the input.
func NormalizeEmail(pointer, s string) (string, error) {
	bad := errs.Validation(errs.Field(pointer, CodeInvalidEmail))
	// Lower-case first: ToLower can change the byte length, and the bounds
	// apply to the stored form.
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) < MinEmailLength || len(s) > MaxEmailLength {
		return "", bad
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return "", bad
		}
	}
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Name != "" || addr.Address != s {
		return "", bad
	}
	at := strings.LastIndexByte(s, '@')
	domain := s[at+1:]
	if at < 1 || !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") {
		return "", bad
	}
	return s, nil
}
