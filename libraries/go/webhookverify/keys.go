package webhookverify

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// PublicKeyPrefix starts the text form of a public key in getWebhookKeys.
const PublicKeyPrefix = "whpk_"

// Key is one public key that verifies v1a signatures.
type Key struct {
	// ID is the key's kid in getWebhookKeys; empty for a key parsed from
	// its text alone. Verify reports it in Delivery.KeyID.
	ID string
	// PublicKey is the Ed25519 public key.
	PublicKey ed25519.PublicKey
	// State is the key's state in getWebhookKeys (next, active or
	// retiring); empty for a key parsed from its text alone. Every listed
	// key verifies, whatever its state.
	State string
	// NotAfter is the end of a retiring key's signing; the zero time
	// otherwise.
	NotAfter time.Time
}

// KeySet supplies the keys that v1a signatures are verified with. The
// package has two: StaticKeys, a fixed list, and *KeySource, which fetches
// getWebhookKeys. Implementations must be safe for concurrent use.
type KeySet interface {
	// Keys returns the keys to verify with now. An error must wrap
	// ErrKeysUnavailable.
	Keys(ctx context.Context) ([]Key, error)
	// Refresh is called when no key of Keys verified a delivery: it may
	// fetch the keys again and then returns them with fetched true; it
	// returns fetched false when it did not fetch (a fixed list, or a
	// fetch too recent to repeat). An error must wrap ErrKeysUnavailable.
	Refresh(ctx context.Context) (keys []Key, fetched bool, err error)
}

// ParsePublicKey decodes the text form of a public key of getWebhookKeys:
// "whpk_" followed by the standard base64 (with padding) of the key's
// DER-encoded SubjectPublicKeyInfo (RFC 8410). Any other input, including
// a valid key of another algorithm, gives an error wrapping ErrInvalidKey.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	b64, ok := strings.CutPrefix(s, PublicKeyPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: the %s prefix is missing", ErrInvalidKey, PublicKeyPrefix)
	}
	der, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("%w: not standard base64", ErrInvalidKey)
	}
	pub, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("%w: not a SubjectPublicKeyInfo", ErrInvalidKey)
	}
	key, ok := pub.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: not an Ed25519 key", ErrInvalidKey)
	}
	return key, nil
}

// StaticKeys is a fixed list of keys: for a receiver that configures the
// public keys itself instead of fetching them, and for tests. Refresh never
// fetches.
type StaticKeys []Key

var _ KeySet = StaticKeys(nil)

// ParseStaticKeys parses public keys in their text form (ParsePublicKey)
// into a StaticKeys without IDs. An invalid key gives an error wrapping
// ErrInvalidKey that says which argument it was.
func ParseStaticKeys(publicKeys ...string) (StaticKeys, error) {
	out := make(StaticKeys, 0, len(publicKeys))
	for i, s := range publicKeys {
		key, err := ParsePublicKey(s)
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
		out = append(out, Key{PublicKey: key})
	}
	return out, nil
}

// Keys returns the list. It fails with ErrKeysUnavailable when the list is
// empty.
func (s StaticKeys) Keys(context.Context) ([]Key, error) {
	if len(s) == 0 {
		return nil, fmt.Errorf("%w: the static key list is empty", ErrKeysUnavailable)
	}
	return s, nil
}

// Refresh returns the list without fetching anything.
func (s StaticKeys) Refresh(ctx context.Context) ([]Key, bool, error) {
	keys, err := s.Keys(ctx)
	return keys, false, err
}
