// Package masterkey implements the instance module's app.MasterKey over
// the secret provider: the value of instance.signing_keys_master_key_ref,
// hex-decoded like every secret of generator key (M1-09 D5), must be 32
// bytes.
package masterkey

import (
	"context"
	"errors"
	"fmt"

	"bothy/server/internal/instance/app"
	"bothy/server/internal/instance/domain"
	"bothy/server/internal/platform/secrets"
)

// Resolver resolves a secret reference; *secrets.Provider implements it and
// caches the value for secrets.cache_ttl, so a replaced file is picked up
// without a restart.
type Resolver interface {
	Resolve(ctx context.Context, ref string) (secrets.Secret, error)
}

// ErrSize is returned when the decoded master key is not 32 bytes.
var ErrSize = errors.New("masterkey: instance.signing_keys_master_key_ref must hold 32 bytes, hex-encoded")

// MasterKey implements app.MasterKey.
type MasterKey struct {
	resolver Resolver
	ref      string
}

var _ app.MasterKey = (*MasterKey)(nil)

// New returns the master key behind ref (instance.signing_keys_master_key_ref)
// resolved through r. It panics on a nil resolver or an empty reference (a
// wiring bug).
func New(r Resolver, ref string) *MasterKey {
	if r == nil || ref == "" {
		panic("masterkey: New needs a resolver and a reference")
	}
	return &MasterKey{resolver: r, ref: ref}
}

// Key implements app.MasterKey. Errors name the reference by scheme and file
// name only (secrets.Provider) and never carry the value.
func (m *MasterKey) Key(ctx context.Context) ([]byte, error) {
	s, err := m.resolver.Resolve(ctx, m.ref)
	if err != nil {
		return nil, err
	}
	raw, err := s.HexBytes()
	if err != nil {
		return nil, fmt.Errorf("masterkey: instance.signing_keys_master_key_ref: %w", err)
	}
	if raw.Len() != domain.MasterKeySize {
		return nil, ErrSize
	}
	return raw.Reveal(), nil
}
