package app

import (
	"context"
	"crypto/ed25519"
	"time"

	"bothy/server/internal/instance"
	"bothy/server/internal/instance/domain"
)

// StoredKey is a row of server_signing_keys.
type StoredKey struct {
	// Key holds kid, state and the life-cycle times the rules read.
	domain.Key
	// Purpose is the key's purpose.
	Purpose instance.Purpose
	// PublicKey is the Ed25519 public key.
	PublicKey ed25519.PublicKey
	// Sealed is private_key_enc (domain.SealPrivateKey); empty once retired.
	Sealed []byte
}

// Store persists the instance row and the signing keys. Every method joins
// the unit of work of ctx when there is one.
type Store interface {
	// LockKeys takes the transaction-scoped lock that serializes Ensure and
	// every rotation across processes; it is released at commit or
	// rollback. It needs a unit of work.
	LockKeys(ctx context.Context) error
	// LoadInstance returns the instance row; false when it does not exist.
	LoadInstance(ctx context.Context) (instance.Record, bool, error)
	// CreateInstance inserts rec stamped with now unless a row exists; it
	// reports whether it inserted.
	CreateInstance(ctx context.Context, rec instance.Record, now time.Time) (bool, error)
	// ListKeys returns every key in the states next, active and retiring, of
	// every purpose.
	ListKeys(ctx context.Context) ([]StoredKey, error)
	// InsertKey inserts a new key in the state next or active.
	InsertKey(ctx context.Context, k StoredKey) error
	// PromoteKey makes the next key kid active, activated at at.
	PromoteKey(ctx context.Context, kid string, at time.Time) error
	// StartRetiring makes the active key kid retiring with not_after.
	StartRetiring(ctx context.Context, kid string, notAfter time.Time) error
	// RetireKey makes the retiring key kid retired at at and erases its
	// private key.
	RetireKey(ctx context.Context, kid string, at time.Time) error
}

// MasterKey gives the master key that seals the private signing keys
// (instance.signing_keys_master_key_ref).
type MasterKey interface {
	// Key returns a fresh copy of the domain.MasterKeySize bytes of the
	// master key; the caller clears it after use. Errors never carry the
	// value.
	Key(ctx context.Context) ([]byte, error)
}
