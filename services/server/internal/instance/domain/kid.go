package domain

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
)

// KeyIDBytes is how many bytes of the SHA-256 digest a kid keeps.
const KeyIDBytes = 16

// ErrPublicKey is returned by KeyID for a public key of the wrong length.
var ErrPublicKey = errors.New("instance: not an Ed25519 public key")

// KeyID derives the kid of a signing key from its public key: the
// lower-case hex of the first KeyIDBytes bytes of SHA-256 over the DER
// SubjectPublicKeyInfo (RFC 8410), 32 characters.
//
// Deriving it from the key (instead of drawing a random ID) means that a
// published key and its kid can never disagree, and the same key can never
// be stored twice under two kids. Lower-case hex keeps it a valid audit code
// (kernel/auditing) and a safe JOSE "kid" without escaping. 128 bits leave
// no practical chance of two keys sharing a kid.
func KeyID(pub ed25519.PublicKey) (string, error) {
	if len(pub) != ed25519.PublicKeySize {
		return "", ErrPublicKey
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", ErrPublicKey
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:KeyIDBytes]), nil
}
