// Package instance is the port of the instance module: the instance record
// with its sync epoch, and the server's Ed25519 signing keys per purpose with
// their public forms (JWKS and webhook keys).
package instance

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"time"

	"bothy/server/internal/kernel/ids"
)

// Record is the instance row.
type Record struct {
	// ID identifies the instance.
	ID ids.ID
	// Name is the display name of the instance.
	Name string
	// SyncEpoch changes when the event log restarts (restore); clients and
	// webhook receivers compare it to detect that seq values were reset.
	SyncEpoch ids.ID
}

// State reads the instance record.
type State interface {
	// Load returns the instance record; an error when it was never created
	// (the bootstrap creates it).
	Load(ctx context.Context) (Record, error)
}

// Purpose separates signing keys by use, so a key that signs webhooks can
// never sign a token (docs/spec/03-data-model.md 4.1).
type Purpose string

// The purposes.
const (
	// PurposeWebhookOut signs outgoing webhooks (v1a).
	PurposeWebhookOut Purpose = "webhook_out"
	// PurposeAgentToken signs tokens for agents; published in the JWKS.
	PurposeAgentToken Purpose = "agent_token"
)

// Purposes returns every purpose, in a fixed order. Each has exactly one
// active key once the instance exists.
func Purposes() []Purpose { return []Purpose{PurposeWebhookOut, PurposeAgentToken} }

// Valid reports whether p is one of Purposes.
func (p Purpose) Valid() bool { return p == PurposeWebhookOut || p == PurposeAgentToken }

// KeyState is the life-cycle state of a signing key.
type KeyState string

// The key states, in life-cycle order.
const (
	// KeyNext is published but does not sign yet.
	KeyNext KeyState = "next"
	// KeyActive signs.
	KeyActive KeyState = "active"
	// KeyRetiring is published until its not_after and, for webhooks, signs
	// beside the active key while not_after lies ahead.
	KeyRetiring KeyState = "retiring"
	// KeyRetired is neither published nor used.
	KeyRetired KeyState = "retired"
)

// Signer signs with one private key.
type Signer interface {
	// KeyID returns the kid of the key.
	KeyID() string
	// Sign returns the Ed25519 signature of msg.
	Sign(msg []byte) []byte
}

// PublicKey is the public half of a signing key.
type PublicKey struct {
	// KeyID is the kid.
	KeyID string
	// Purpose and State of the key.
	Purpose Purpose
	State   KeyState
	// Key is the Ed25519 public key.
	Key ed25519.PublicKey
	// NotAfter is when a retiring key stops being valid; zero when unset.
	NotAfter time.Time
}

// JWK is one key of a JSON Web Key Set (RFC 8037 OKP key).
type JWK struct {
	// Kty is "OKP" and Crv "Ed25519".
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	// X is the public key, base64url without padding.
	X string `json:"x"`
	// Kid is the key's kid.
	Kid string `json:"kid"`
	// Alg is "EdDSA" and Use "sig".
	Alg string `json:"alg"`
	Use string `json:"use"`
}

// Keys gives access to the signing keys. Implementations are safe for
// concurrent use; errors are *errs.Error values that never carry key
// material.
type Keys interface {
	// Signer returns the active signer of purpose p. It fails with an
	// internal error when p has no active key (the instance was never
	// ensured) or the key cannot be opened.
	Signer(ctx context.Context, p Purpose) (Signer, error)
	// Signers returns the active signer first, then every retiring signer
	// whose not_after lies after now (latest first); never next or retired
	// keys. It runs before every webhook delivery attempt, so it is served
	// from memory most of the time. Errors as for Signer.
	Signers(ctx context.Context, p Purpose) ([]Signer, error)
	// PublicKeys returns the keys of purpose in the states next, active and
	// retiring, ordered active, next, retiring, then kid.
	PublicKeys(ctx context.Context, p Purpose) ([]PublicKey, error)
	// VerificationKey returns the published key with kid, of any purpose;
	// not_found for an unknown or retired kid.
	VerificationKey(ctx context.Context, kid string) (PublicKey, error)
	// JWKS returns the published keys of every purpose except
	// PurposeWebhookOut.
	JWKS(ctx context.Context) ([]JWK, error)
}

// WebhookPublicKeyPrefix starts every encoded webhook public key.
const WebhookPublicKeyPrefix = "whpk_"

// FormatWebhookPublicKey encodes key as "whpk_" followed by the standard
// base64 (with padding) of its DER SubjectPublicKeyInfo (RFC 8410), the form
// getWebhookKeys publishes and receivers decode with x509.ParsePKIXPublicKey.
func FormatWebhookPublicKey(key ed25519.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		// Only a key of the wrong length fails; keys come from ed25519.
		panic("instance: invalid Ed25519 public key")
	}
	return WebhookPublicKeyPrefix + base64.StdEncoding.EncodeToString(der)
}
