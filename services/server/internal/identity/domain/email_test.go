package domain_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/identity/domain"
	"bothy/server/internal/kernel/errs"
)

func TestNormalizeEmail(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"a plain address stays", "robin@example.com", "robin@example.com"},
		{"upper case becomes lower case", "Robin@Example.COM", "robin@example.com"},
		{"surrounding white space goes", "  sam@example.com\n", "sam@example.com"},
		{"plus and dots in the local part stay", "alex.b+chat@mail.example.com", "alex.b+chat@mail.example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.NormalizeEmail("/email", tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestNormalizeEmailRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in string }{
		{"empty", ""},
		{"no at sign", "robin.example.com"},
		{"no local part", "@example.com"},
		{"a domain without a dot", "robin@localhost"},
		{"a domain ending in a dot", "robin@example.com."},
		{"a display name", "Robin <robin@example.com>"},
		{"inner white space", "rob in@example.com"},
		{"a control character", "robin\x00@example.com"},
		{"two addresses", "robin@example.com, sam@example.com"},
		{"too long", strings.Repeat("a", 310) + "@example.com"},
		{"not UTF-8", "rob\xffin@example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := domain.NormalizeEmail("/email", tc.in)
			e, ok := errs.As(err)
			require.True(t, ok)
			require.Equal(t, errs.CodeValidationFailed, e.Code)
			require.Equal(t, []errs.FieldError{{Pointer: "/email", Code: domain.CodeInvalidEmail}}, e.Fields)
			if tc.in != "" {
				require.NotContains(t, err.Error(), tc.in, "the error never shows the input")
			}
		})
	}
}

// FuzzNormalizeEmail: an accepted address is stored in a form that is
// lower case, within the column bounds and stable under a second
// normalization.
func FuzzNormalizeEmail(f *testing.F) {
	for _, seed := range []string{
		"robin@example.com",            // the plain form
		"Robin@Example.COM",            // case folding
		" sam@example.com ",            // white space
		"\"quoted local\"@example.com", // a quoted local part
		"robin@[127.0.0.1]",            // a domain literal
		"Robin <robin@example.com>",    // a display name
		"robin@@example.com",           // two at signs
		"İ@example.com",                // a letter whose lower case is longer
		"robin@example.com.",           // a trailing dot
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := domain.NormalizeEmail("/email", in)
		if err != nil {
			return
		}
		require.Equal(t, strings.ToLower(out), out)
		require.GreaterOrEqual(t, len(out), domain.MinEmailLength)
		require.LessOrEqual(t, len(out), domain.MaxEmailLength)
		again, err := domain.NormalizeEmail("/email", out)
		require.NoError(t, err)
		require.Equal(t, out, again)
	})
}

func TestNormalizeName(t *testing.T) {
	t.Parallel()
	got, err := domain.NormalizeName("/display_name", "  Robin ")
	require.NoError(t, err)
	require.Equal(t, "Robin", got)
	got, err = domain.NormalizeName("/name", strings.Repeat("ü", domain.MaxNameLength))
	require.NoError(t, err, "the bound counts characters, not bytes")
	require.Len(t, []rune(got), domain.MaxNameLength)
	for _, tc := range []struct{ name, in, code string }{
		{"empty", "", domain.CodeRequired},
		{"only white space", " \t ", domain.CodeRequired},
		{"too long", strings.Repeat("a", domain.MaxNameLength+1), domain.CodeTooLong},
		{"a control character", "Ro\x07bin", domain.CodeInvalidCharacters},
		{"not UTF-8", "Ro\xffbin", domain.CodeInvalidCharacters},
	} {
		_, err := domain.NormalizeName("/name", tc.in)
		e, ok := errs.As(err)
		require.True(t, ok, tc.name)
		require.Equal(t, []errs.FieldError{{Pointer: "/name", Code: tc.code}}, e.Fields, tc.name)
	}
}
