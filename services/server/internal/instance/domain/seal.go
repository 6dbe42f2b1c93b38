package domain

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"errors"
	"io"

	"bothy/server/internal/instance"
)

// MasterKeySize is the length of the master key of
// instance.signing_keys_master_key_ref: 32 bytes select AES-256.
const MasterKeySize = 32

// sealVersion is the first byte of every sealed key, so that a later format
// (for example another cipher after a master key rotation) can be told
// apart from this one.
const sealVersion byte = 1

// sealOverhead is version byte, GCM nonce and GCM tag.
const sealOverhead = 1 + 12 + 16

// The errors of SealPrivateKey and OpenPrivateKey. They never carry key
// material.
var (
	// ErrMasterKey: the master key is not MasterKeySize bytes long.
	ErrMasterKey = errors.New("instance: the signing keys master key must be 32 bytes")
	// ErrSealed: the sealed key is malformed, or it does not open with this
	// master key, kid and purpose (wrong master key, or a sealed key moved
	// to another row).
	ErrSealed = errors.New("instance: the sealed signing key does not open")
	// ErrRandom: the random source failed.
	ErrRandom = errors.New("instance: reading randomness failed")
)

// SealPrivateKey encrypts the seed of an Ed25519 private key for storage:
// version || nonce || AES-256-GCM(master, seed) with the additional data
// "bothy.signing_key.v1", purpose and kid. Binding kid and purpose means a
// sealed key copied to another row, or relabelled to another purpose, fails
// to open instead of signing for something it was not made for.
//
// master must be MasterKeySize bytes; random supplies the nonce and must be
// a cryptographically secure source (the instance service uses
// crypto/rand.Reader).
func SealPrivateKey(master []byte, kid string, p instance.Purpose, key ed25519.PrivateKey, random io.Reader) ([]byte, error) {
	aead, err := newAEAD(master)
	if err != nil {
		return nil, err
	}
	if len(key) != ed25519.PrivateKeySize {
		return nil, ErrSealed
	}
	// A fresh random 96-bit nonce for every seal, never a fixed or counted
	// one: GCM with a repeated nonce under one key loses confidentiality and
	// integrity. Random nonces are safe far beyond the few keys one master
	// key ever seals (NIST SP 800-38D, section 8.3, allows 2^32 seals).
	nonce := make([]byte, aead.NonceSize())
	if _, err := io.ReadFull(random, nonce); err != nil {
		return nil, ErrRandom
	}
	out := make([]byte, 0, sealOverhead+ed25519.SeedSize)
	out = append(out, sealVersion)
	out = append(out, nonce...)
	return aead.Seal(out, nonce, key.Seed(), additionalData(kid, p)), nil
}

// OpenPrivateKey decrypts a key sealed by SealPrivateKey with the same
// master key, kid and purpose and returns the private key. Any mismatch
// gives ErrSealed; a master key of the wrong size gives ErrMasterKey.
func OpenPrivateKey(master []byte, kid string, p instance.Purpose, sealed []byte) (ed25519.PrivateKey, error) {
	aead, err := newAEAD(master)
	if err != nil {
		return nil, err
	}
	if len(sealed) != sealOverhead+ed25519.SeedSize || sealed[0] != sealVersion {
		return nil, ErrSealed
	}
	nonce := sealed[1 : 1+aead.NonceSize()]
	seed, err := aead.Open(nil, nonce, sealed[1+aead.NonceSize():], additionalData(kid, p))
	if err != nil {
		return nil, ErrSealed
	}
	defer clear(seed)
	return ed25519.NewKeyFromSeed(seed), nil
}

func newAEAD(master []byte) (cipher.AEAD, error) {
	if len(master) != MasterKeySize {
		return nil, ErrMasterKey
	}
	block, err := aes.NewCipher(master)
	if err != nil {
		return nil, ErrMasterKey
	}
	return cipher.NewGCM(block)
}

// additionalData separates the fields with NUL, which neither a purpose nor
// a kid can contain, so two different pairs never give the same bytes.
func additionalData(kid string, p instance.Purpose) []byte {
	return []byte("bothy.signing_key.v1\x00" + string(p) + "\x00" + kid)
}
