package domain_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/argon2"

	"bothy/server/internal/identity/domain"
	"bothy/server/internal/kernel/errs"
)

// cheap are the smallest parameters argon2id accepts; tests that are not
// about the cost use them so the race detector stays fast.
var cheap = domain.Params{MemoryKiB: domain.MinMemoryKiB, Iterations: 1, Parallelism: 1}

func TestHashPasswordIsArgon2idWithItsParameters(t *testing.T) {
	t.Parallel()
	// The configured defaults: 19 MiB, 2 passes, 1 lane.
	p, err := domain.NewParams(19<<20, 2, 1)
	require.NoError(t, err)
	require.Equal(t, domain.Params{MemoryKiB: 19456, Iterations: 2, Parallelism: 1}, p)

	encoded, err := domain.HashPassword("correct horse battery", p, rand.Reader)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(encoded, "$argon2id$v=19$m=19456,t=2,p=1$"), encoded)
	h, err := domain.ParseHash(encoded)
	require.NoError(t, err)
	require.Len(t, h.Salt, domain.SaltLength)
	require.Equal(t, argon2.IDKey([]byte("correct horse battery"), h.Salt, 2, 19456, 1, 32), h.Key,
		"the stored key is argon2id of the password and salt")

	ok, err := domain.VerifyPassword(encoded, "correct horse battery")
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = domain.VerifyPassword(encoded, "correct horse batterY")
	require.NoError(t, err)
	require.False(t, ok)
	require.NotContains(t, encoded, "correct horse")
}

func TestHashPasswordSaltsEveryHash(t *testing.T) {
	t.Parallel()
	a, err := domain.HashPassword("same password", cheap, rand.Reader)
	require.NoError(t, err)
	b, err := domain.HashPassword("same password", cheap, rand.Reader)
	require.NoError(t, err)
	require.NotEqual(t, a, b)
	_, err = domain.HashPassword("x", cheap, iotest.ErrReader(bytes.ErrTooLarge))
	require.ErrorIs(t, err, domain.ErrRandom)
	_, err = domain.HashPassword("x", domain.Params{MemoryKiB: 8, Iterations: 1, Parallelism: 2}, rand.Reader)
	require.ErrorIs(t, err, domain.ErrParams, "8 KiB per lane at least")
}

func TestNewParamsKeepsTheConfigurationBounds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name              string
		mem               int64
		iterations, lanes int
	}{
		{"memory that is not whole KiB", 19<<20 + 1, 2, 1},
		{"memory above 1 GiB", 2 << 30, 2, 1},
		{"no pass", 19 << 20, 0, 1},
		{"too many passes", 19 << 20, 17, 1},
		{"no lane", 19 << 20, 2, 0},
		{"too many lanes", 19 << 20, 2, 17},
	} {
		_, err := domain.NewParams(tc.mem, tc.iterations, tc.lanes)
		require.ErrorIs(t, err, domain.ErrParams, tc.name)
	}
}

func TestNeedsRehashWhenTheParametersChanged(t *testing.T) {
	t.Parallel()
	encoded, err := domain.HashPassword("pw", cheap, rand.Reader)
	require.NoError(t, err)
	require.False(t, domain.NeedsRehash(encoded, cheap))
	require.True(t, domain.NeedsRehash(encoded, domain.Params{MemoryKiB: 16, Iterations: 1, Parallelism: 1}))
	require.True(t, domain.NeedsRehash("not a hash", cheap))
}

func TestParseHashRejects(t *testing.T) {
	t.Parallel()
	salt := base64.RawStdEncoding.EncodeToString(make([]byte, 16))
	key := base64.RawStdEncoding.EncodeToString(make([]byte, 32))
	good := "$argon2id$v=19$m=8,t=1,p=1$" + salt + "$" + key
	_, err := domain.ParseHash(good)
	require.NoError(t, err)
	for _, tc := range []struct{ name, in string }{
		{"argon2i", "$argon2i$v=19$m=8,t=1,p=1$" + salt + "$" + key},
		{"another version", "$argon2id$v=16$m=8,t=1,p=1$" + salt + "$" + key},
		{"parameters in another order", "$argon2id$v=19$t=1,m=8,p=1$" + salt + "$" + key},
		{"memory above the bound", "$argon2id$v=19$m=2097152,t=1,p=1$" + salt + "$" + key},
		{"too many lanes", "$argon2id$v=19$m=4096,t=1,p=300$" + salt + "$" + key},
		{"a leading zero", "$argon2id$v=19$m=08,t=1,p=1$" + salt + "$" + key},
		{"a padded salt", "$argon2id$v=19$m=8,t=1,p=1$" + salt + "==$" + key},
		{"a short key", "$argon2id$v=19$m=8,t=1,p=1$" + salt + "$" + key[:20]},
		{"a short salt", "$argon2id$v=19$m=8,t=1,p=1$AAAA$" + key},
		{"an extra field", good + "$x"},
	} {
		_, err := domain.ParseHash(tc.in)
		require.ErrorIs(t, err, domain.ErrHash, tc.name)
		_, err = domain.VerifyPassword(tc.in, "pw")
		require.ErrorIs(t, err, domain.ErrHash, tc.name)
	}
}

// FuzzParseHash: whatever parses is canonical (it encodes back to the same
// text) and within the parameter bounds, so a stored hash can never ask for
// more memory than an operator could configure.
func FuzzParseHash(f *testing.F) {
	salt := base64.RawStdEncoding.EncodeToString(make([]byte, 16))
	key := base64.RawStdEncoding.EncodeToString(make([]byte, 32))
	for _, seed := range []string{
		"$argon2id$v=19$m=8,t=1,p=1$" + salt + "$" + key,          // a valid hash
		"$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$" + key,      // the default parameters
		"$argon2id$v=19$m=4294967295,t=1,p=1$" + salt + "$" + key, // huge memory
		"$argon2id$v=19$m=8,t=1,p=1$$",                            // empty salt and key
		"$argon2id$v=19$m=-8,t=1,p=1$" + salt + "$" + key,         // a sign
		"$argon2id$v=19$", // the prefix alone
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		h, err := domain.ParseHash(in)
		if err != nil {
			return
		}
		require.Equal(t, in, h.String())
		require.NoError(t, h.Params.Validate())
		require.Len(t, h.Key, domain.KeyLength)
	})
}

func TestCheckPassword(t *testing.T) {
	t.Parallel()
	require.NoError(t, domain.CheckPassword("/password", "twelve chars", 12))
	require.NoError(t, domain.CheckPassword("/password", strings.Repeat("ß", 12), 12), "characters, not bytes")
	for _, tc := range []struct{ name, in, code string }{
		{"one character short", "eleven char", domain.CodeTooShort},
		{"not UTF-8", "twelve chars\xff", domain.CodeInvalidCharacters},
	} {
		err := domain.CheckPassword("/password", tc.in, 12)
		e, ok := errs.As(err)
		require.True(t, ok, tc.name)
		require.Equal(t, []errs.FieldError{{Pointer: "/password", Code: tc.code}}, e.Fields, tc.name)
		require.NotContains(t, err.Error(), tc.in)
	}
}
