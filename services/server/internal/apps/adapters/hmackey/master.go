// Package hmackey reads the master key of the derived webhook secrets
// (webhook.hmac_master_key_ref) through the secret provider. The key is the
// hex-decoded value of the generated secret webhook_hmac_master_key (generator
// key) and stays in the redacting secrets.Secret type until the moment of use.
package hmackey

import (
	"context"
	"errors"

	"bothy/server/internal/apps/app"
	"bothy/server/internal/platform/secrets"
)

// MinKeyBytes is the shortest master key accepted: HMAC-SHA256 gains nothing
// from keys above its block size, and a short key weakens every derived
// secret. Generated keys are 32 bytes.
const MinKeyBytes = 32

// Master implements app.HMACMasterKey.
type Master struct {
	provider *secrets.Provider
	ref      string
}

var _ app.HMACMasterKey = (*Master)(nil)

// New returns a Master resolving ref (webhook.hmac_master_key_ref) with p. It
// panics on a nil provider or an empty reference, a wiring bug.
func New(p *secrets.Provider, ref string) *Master {
	if p == nil || ref == "" {
		panic("hmackey: New needs a secret provider and webhook.hmac_master_key_ref")
	}
	return &Master{provider: p, ref: ref}
}

// ErrKeyTooShort is returned when the decoded key has fewer than MinKeyBytes.
var ErrKeyTooShort = errors.New("hmackey: webhook_hmac_master_key is shorter than 32 bytes")

// Key resolves and hex-decodes the master key. The provider caches the file
// for secrets.cache_ttl. Errors name the reference by scheme and file name
// only, never the value.
func (m *Master) Key(ctx context.Context) ([]byte, error) {
	s, err := m.provider.Resolve(ctx, m.ref)
	if err != nil {
		return nil, err
	}
	key, err := s.HexBytes()
	if err != nil {
		return nil, err
	}
	raw := key.Reveal()
	if len(raw) < MinKeyBytes {
		return nil, ErrKeyTooShort
	}
	return raw, nil
}
