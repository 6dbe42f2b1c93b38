package domain_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/errs"
)

func TestValidateName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     []errs.FieldError
	}{
		{"a plain name is valid", "Support", nil},
		{"umlauts count as one character each", "Übersicht", nil},
		{"a name at the limit is valid", strings.Repeat("ä", 10), nil},
		{"an empty name is required", "", []errs.FieldError{errs.Field("/name", domain.CodeRequired)}},
		{"a blank name is required", "   ", []errs.FieldError{errs.Field("/name", domain.CodeRequired)}},
		{"a name over the limit is too long", strings.Repeat("a", 11), []errs.FieldError{errs.Field("/name", domain.CodeMaxLength)}},
		{"a control character is invalid", "Sup\nport", []errs.FieldError{errs.Field("/name", domain.CodeInvalid)}},
		{"broken UTF-8 is invalid", "Sup\xffport", []errs.FieldError{errs.Field("/name", domain.CodeInvalid)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, domain.ValidateName("/name", tc.in, 10))
		})
	}
}

func TestValidateText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     []errs.FieldError
	}{
		{"a short text is valid", "Hello Sam", nil},
		{"line breaks are allowed", "Hello\nSam", nil},
		{"a text of exactly the limit is valid", strings.Repeat("a", 16), nil},
		{"the limit counts bytes, not characters", strings.Repeat("ä", 9), []errs.FieldError{errs.Field("/text", domain.CodeMaxLength)}},
		{"one byte over the limit is refused, never cut", strings.Repeat("a", 17), []errs.FieldError{errs.Field("/text", domain.CodeMaxLength)}},
		{"an empty text is required", "", []errs.FieldError{errs.Field("/text", domain.CodeRequired)}},
		{"a blank text is required", " \n\t", []errs.FieldError{errs.Field("/text", domain.CodeRequired)}},
		{"broken UTF-8 is invalid", "Hello \xc3", []errs.FieldError{errs.Field("/text", domain.CodeInvalid)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, domain.ValidateText("/text", tc.in, 16))
		})
	}
}

// FuzzValidateText checks that an accepted text is valid UTF-8, not blank
// and within the limit, for any input. Seeds: plain text, a multi-byte
// character across the limit, broken UTF-8 and a blank text.
func FuzzValidateText(f *testing.F) {
	f.Add("Hello Sam", 16)
	f.Add(strings.Repeat("ä", 8)+"a", 16)
	f.Add("\xff\xfe", 4)
	f.Add("  ", 1)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if limit < 1 {
			return
		}
		if domain.ValidateText("/text", text, limit) == nil {
			require.True(t, utf8.ValidString(text))
			require.LessOrEqual(t, len(text), limit)
			require.NotEmpty(t, strings.TrimSpace(text))
		}
	})
}

func TestLevels(t *testing.T) {
	t.Parallel()
	for _, l := range []domain.Level{domain.LevelRead, domain.LevelWrite, domain.LevelAdmin} {
		require.True(t, l.Valid(), l)
	}
	require.False(t, domain.Level("owner").Valid())
	require.False(t, domain.Level("").Valid())
}
