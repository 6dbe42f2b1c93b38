package domain

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"bothy/server/internal/kernel/errs"
)

// The item codes of chat validation errors, in the vocabulary of the
// request validator (docs of services/server/api).
const (
	// CodeRequired: the member is missing or blank.
	CodeRequired = "required"
	// CodeMaxLength: the text is longer than its configured limit.
	CodeMaxLength = "max_length"
	// CodeInvalid: not valid UTF-8, or a name with control characters.
	CodeInvalid = "invalid"
	// CodeEnum: not one of the allowed values.
	CodeEnum = "enum"
	// CodeNotFound: the member names something that does not exist (or is
	// not visible at that place), such as a thread of another channel.
	CodeNotFound = "not_found"
	// CodeExclusive: the member may not be combined with another one
	// (start_thread with thread_id).
	CodeExclusive = "exclusive"
)

// ValidateName checks the name of a space or channel at pointer: not
// blank, valid UTF-8 without control characters, at most maxChars
// characters (chat.name_max_chars). It returns the field errors, none when
// valid.
func ValidateName(pointer, name string, maxChars int) []errs.FieldError {
	switch {
	case !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsControl) >= 0:
		return []errs.FieldError{errs.Field(pointer, CodeInvalid)}
	case strings.TrimSpace(name) == "":
		return []errs.FieldError{errs.Field(pointer, CodeRequired)}
	case utf8.RuneCountInString(name) > maxChars:
		return []errs.FieldError{errs.Field(pointer, CodeMaxLength)}
	}
	return nil
}

// ValidateText checks message text at pointer: valid UTF-8, not blank, at
// most maxBytes bytes (chat.message_max_bytes). Text is never cut: a longer
// text is refused. Line breaks and tabs are allowed.
func ValidateText(pointer, text string, maxBytes int) []errs.FieldError {
	switch {
	case !utf8.ValidString(text):
		return []errs.FieldError{errs.Field(pointer, CodeInvalid)}
	case strings.TrimSpace(text) == "":
		return []errs.FieldError{errs.Field(pointer, CodeRequired)}
	case len(text) > maxBytes:
		return []errs.FieldError{errs.Field(pointer, CodeMaxLength)}
	}
	return nil
}
