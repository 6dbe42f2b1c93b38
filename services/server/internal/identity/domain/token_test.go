package domain_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/identity/domain"
)

func TestNewTokenHasItsPrefixAndParses(t *testing.T) {
	t.Parallel()
	for _, k := range []domain.TokenKind{domain.TokenSession, domain.TokenPersonal, domain.TokenApp} {
		token, hash, err := domain.NewToken(k, rand.Reader)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(token, string(k)+"_"), token)
		require.Len(t, token, len(k)+1+43, "43 characters of base64url for 32 bytes")
		require.Equal(t, domain.TokenHash(sha256.Sum256([]byte(token))), hash)
		kind, parsedHash, ok := domain.ParseToken(token)
		require.True(t, ok)
		require.Equal(t, k, kind)
		require.Equal(t, hash, parsedHash)
	}
	_, _, err := domain.NewToken(domain.TokenSession, iotest.ErrReader(bytes.ErrTooLarge))
	require.ErrorIs(t, err, domain.ErrRandom)
}

func TestParseTokenRejects(t *testing.T) {
	t.Parallel()
	token, _, err := domain.NewToken(domain.TokenPersonal, rand.Reader)
	require.NoError(t, err)
	body := strings.TrimPrefix(token, "btp_")
	for _, tc := range []struct{ name, in string }{
		{"empty", ""},
		{"no prefix", body},
		{"an unknown prefix", "btx_" + body},
		{"an upper-case prefix", "BTP_" + body},
		{"one character short", token[:len(token)-1]},
		{"one character more", token + "A"},
		{"standard base64 characters", "btp_" + strings.Repeat("+", 43)},
		{"padding", "btp_" + body[:42] + "="},
		// 43 characters carry 258 bits: the last two must be zero.
		{"non-canonical last character", "btp_" + body[:42] + "B"},
	} {
		_, _, ok := domain.ParseToken(tc.in)
		require.False(t, ok, tc.name)
	}
}

// FuzzParseToken: a token that parses has a known kind and re-encodes to
// itself; the hash is always the SHA-256 of the whole token.
func FuzzParseToken(f *testing.F) {
	for _, seed := range []string{
		"bts_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", // a valid session token of zero bytes
		"btp_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB", // a non-canonical last character
		"bta_",         // a prefix alone
		"bts__",        // two underscores
		"whsec_AAAA",   // another kind of secret
		"bts_\x00\xff", // bytes that are not base64
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		kind, hash, ok := domain.ParseToken(in)
		if !ok {
			return
		}
		require.Contains(t, []domain.TokenKind{domain.TokenSession, domain.TokenPersonal, domain.TokenApp}, kind)
		require.True(t, strings.HasPrefix(in, string(kind)+"_"))
		require.Equal(t, domain.HashToken(in), hash)
	})
}
