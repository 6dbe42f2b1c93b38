package domain

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"bothy/server/internal/kernel/errs"
)

// MaxNameLength is the longest display name of a principal and the longest
// name of a personal token, in characters: the bound of the columns
// principals.display_name (migration 00010) and personal_tokens.name
// (migration 00014).
const MaxNameLength = 200

// The field error codes of names.
const (
	// CodeRequired: the name is empty or only white space.
	CodeRequired = "required"
	// CodeTooLong: the name exceeds MaxNameLength characters.
	CodeTooLong = "too_long"
	// CodeInvalidCharacters: the name holds a control character or is not
	// UTF-8.
	CodeInvalidCharacters = "invalid_characters"
)

// NormalizeName returns name with surrounding white space removed, checked
// to be 1 to MaxNameLength characters of valid UTF-8 without control
// characters. Errors: a validation_failed *errs.Error with pointer pointer
// and code required, too_long or invalid_characters.
func NormalizeName(pointer, name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", errs.Validation(errs.Field(pointer, CodeRequired))
	case !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl):
		return "", errs.Validation(errs.Field(pointer, CodeInvalidCharacters))
	case utf8.RuneCountInString(name) > MaxNameLength:
		return "", errs.Validation(errs.Field(pointer, CodeTooLong))
	}
	return name, nil
}
