package domain_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/instance/domain"
)

func TestKeyIDIsTheHexOfTheSPKIDigestPrefix(t *testing.T) {
	t.Parallel()
	pub := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)).Public().(ed25519.PublicKey)
	kid, err := domain.KeyID(pub)
	require.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(pub)
	require.NoError(t, err)
	sum := sha256.Sum256(der)
	require.Equal(t, hex.EncodeToString(sum[:16]), kid)
	require.Regexp(t, regexp.MustCompile(`^[0-9a-f]{32}$`), kid)

	other := ed25519.NewKeyFromSeed(append(make([]byte, ed25519.SeedSize-1), 1)).Public().(ed25519.PublicKey)
	otherKid, err := domain.KeyID(other)
	require.NoError(t, err)
	require.NotEqual(t, kid, otherKid, "another key has another kid")
}

func TestKeyIDRejectsAKeyOfTheWrongLength(t *testing.T) {
	t.Parallel()
	_, err := domain.KeyID(make([]byte, 31))
	require.ErrorIs(t, err, domain.ErrPublicKey)
}
