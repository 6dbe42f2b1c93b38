package app

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"bothy/server/internal/instance"
	"bothy/server/internal/instance/domain"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
)

// ErrNoActiveKey is returned by Signer and Signers when a purpose has no
// active key: Ensure has not run.
var ErrNoActiveKey = errs.New(errs.CodeInternal, "instance: no active signing key; Ensure has not run")

// KeysOptions configure Keys.
type KeysOptions struct {
	// CacheTTL is instance.key_cache_ttl: how long the decrypted signers of
	// a purpose are reused before the keys are read again. A rotation
	// written by another process is used at most CacheTTL late; it must be
	// below agent.jwks_max_age (config check key_cache_within_publication),
	// so a promoted key signs only after every receiver could have fetched
	// it, and a retiring key stops signing before it is unpublished. Must be
	// positive.
	CacheTTL time.Duration
}

// Keys implements instance.Keys over a Store. It is safe for concurrent
// use.
//
// Signers runs before every webhook delivery attempt, so it must not read
// and decrypt the keys each time: the decrypted signers of a purpose are
// cached until CacheTTL has passed or, earlier, until the first not_after
// of a cached retiring key (domain.SigningValidUntil). Which of the cached
// keys sign is decided again on every call with the clock, so a retiring
// key never signs after its not_after. A rotation in this process
// (Service) clears the cache at once. The published keys (PublicKeys,
// VerificationKey, JWKS) are read from the store on every call: a next key
// must be visible as soon as it exists, because its publication window
// (agent.jwks_max_age) starts then.
type Keys struct {
	store  Store
	master MasterKey
	clock  clock.Clock
	ttl    time.Duration

	// mu guards cache and generation only, never a read of the store: a
	// caller may be a function of txn.Together, whose statement waits for
	// the statements of the others, which must not wait for mu (ADR 0085).
	mu    sync.Mutex
	cache map[instance.Purpose]signerSet
	// generation counts the Invalidate calls, so that a load that began
	// before one does not put what it read into the cache after it.
	generation uint64
}

var _ instance.Keys = (*Keys)(nil)

// signerSet is the cached signing keys of one purpose.
type signerSet struct {
	keys  []cachedSigner
	until time.Time
}

type cachedSigner struct {
	domain.Key
	signer *signer
}

// NewKeys returns Keys over store, opening private keys with master. It
// returns an error for a non-positive CacheTTL and panics on a nil
// dependency (a wiring bug).
func NewKeys(store Store, master MasterKey, clk clock.Clock, o KeysOptions) (*Keys, error) {
	if store == nil || master == nil || clk == nil {
		panic("instance: NewKeys needs a store, a master key and a clock")
	}
	if o.CacheTTL <= 0 {
		return nil, errors.New("instance: KeysOptions.CacheTTL (instance.key_cache_ttl) must be positive")
	}
	return &Keys{store: store, master: master, clock: clk, ttl: o.CacheTTL, cache: map[instance.Purpose]signerSet{}}, nil
}

// Signer implements instance.Keys: the active signer of p. Errors: an
// internal *errs.Error (ErrNoActiveKey, or a failure to read or open the
// keys).
func (k *Keys) Signer(ctx context.Context, p instance.Purpose) (instance.Signer, error) {
	signers, err := k.Signers(ctx, p)
	if err != nil {
		return nil, err
	}
	return signers[0], nil
}

// Signers implements instance.Keys: the active signer first, then every
// retiring signer whose not_after lies after the clock's now, latest
// not_after first. Errors as for Signer.
func (k *Keys) Signers(ctx context.Context, p instance.Purpose) ([]instance.Signer, error) {
	if !p.Valid() {
		return nil, errs.Internalf("instance: unknown key purpose")
	}
	now := k.clock.Now()
	k.mu.Lock()
	set, ok := k.cache[p]
	generation := k.generation
	k.mu.Unlock()
	if !ok || !now.Before(set.until) {
		// Read without the lock: callers that miss the cache at the same
		// time each read the keys, and the last one's set stays.
		var err error
		if set, err = k.load(ctx, p, now); err != nil {
			return nil, err
		}
		k.mu.Lock()
		if k.generation == generation {
			k.cache[p] = set
		}
		k.mu.Unlock()
	}
	signing := domain.Signing(set.keys, now)
	if len(signing) == 0 || signing[0].State != instance.KeyActive {
		return nil, ErrNoActiveKey
	}
	out := make([]instance.Signer, len(signing))
	for i, s := range signing {
		out[i] = s.signer
	}
	return out, nil
}

// load reads the keys of p and opens those that sign at now.
func (k *Keys) load(ctx context.Context, p instance.Purpose, now time.Time) (signerSet, error) {
	stored, err := k.store.ListKeys(ctx)
	if err != nil {
		return signerSet{}, err
	}
	signing := domain.Signing(ofPurpose(stored, p), now)
	if len(signing) == 0 {
		return signerSet{}, ErrNoActiveKey
	}
	master, err := k.master.Key(ctx)
	if err != nil {
		return signerSet{}, errs.Wrap(err, "instance: the signing keys master key is not available")
	}
	defer clear(master)
	set := signerSet{keys: make([]cachedSigner, 0, len(signing)), until: domain.SigningValidUntil(signing, now, k.ttl)}
	for _, s := range signing {
		priv, err := domain.OpenPrivateKey(master, s.KID, p, s.Sealed)
		if err != nil {
			return signerSet{}, errs.Wrap(err, "instance: a signing key does not open with the master key")
		}
		set.keys = append(set.keys, cachedSigner{Key: s.Key, signer: &signer{kid: s.KID, key: priv}})
	}
	return set, nil
}

// Invalidate drops the cached signers, so the next call reads the keys
// again. Service calls it after every change of the keys.
func (k *Keys) Invalidate() {
	k.mu.Lock()
	defer k.mu.Unlock()
	clear(k.cache)
	k.generation++
}

// PublicKeys implements instance.Keys: the keys of p in the states next,
// active and retiring, ordered active, next, retiring, then kid. Errors: an
// internal *errs.Error when the store fails.
func (k *Keys) PublicKeys(ctx context.Context, p instance.Purpose) ([]instance.PublicKey, error) {
	stored, err := k.store.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	published := domain.Published(ofPurpose(stored, p))
	out := make([]instance.PublicKey, len(published))
	for i, s := range published {
		out[i] = publicKey(s)
	}
	return out, nil
}

// VerificationKey implements instance.Keys: the published key with kid,
// of any purpose. Errors: errs.NotFound for a kid that is unknown or
// retired; an internal *errs.Error when the store fails.
func (k *Keys) VerificationKey(ctx context.Context, kid string) (instance.PublicKey, error) {
	stored, err := k.store.ListKeys(ctx)
	if err != nil {
		return instance.PublicKey{}, err
	}
	for _, s := range domain.Published(stored) {
		if s.KID == kid {
			return publicKey(s), nil
		}
	}
	return instance.PublicKey{}, errs.NotFound()
}

// JWKS implements instance.Keys: the published keys of every purpose except
// webhook_out, as RFC 8037 OKP keys, grouped by purpose and within one
// purpose ordered as PublicKeys. Webhook keys are published only by
// getWebhookKeys, so a key that signs webhooks can never be taken for a
// token key. Errors: an internal *errs.Error when the store fails.
func (k *Keys) JWKS(ctx context.Context) ([]instance.JWK, error) {
	stored, err := k.store.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	var tokenKeys []StoredKey
	for _, s := range stored {
		if s.Purpose != instance.PurposeWebhookOut {
			tokenKeys = append(tokenKeys, s)
		}
	}
	published := domain.Published(tokenKeys)
	slices.SortStableFunc(published, func(a, b StoredKey) int { return cmp.Compare(a.Purpose, b.Purpose) })
	out := make([]instance.JWK, len(published))
	for i, s := range published {
		out[i] = instance.JWK{
			Kty: "OKP",
			Crv: "Ed25519",
			X:   base64.RawURLEncoding.EncodeToString(s.PublicKey),
			Kid: s.KID,
			Alg: "EdDSA",
			Use: "sig",
		}
	}
	return out, nil
}

func ofPurpose(keys []StoredKey, p instance.Purpose) []StoredKey {
	var out []StoredKey
	for _, k := range keys {
		if k.Purpose == p {
			out = append(out, k)
		}
	}
	return out
}

func publicKey(s StoredKey) instance.PublicKey {
	return instance.PublicKey{KeyID: s.KID, Purpose: s.Purpose, State: s.State, Key: s.PublicKey, NotAfter: s.NotAfter}
}

// signer implements instance.Signer with a decrypted private key held only
// in memory. It prints as its kid in every fmt verb and in slog, so the key
// can never reach a log by accident.
type signer struct {
	kid string
	key ed25519.PrivateKey
}

// KeyID implements instance.Signer.
func (s *signer) KeyID() string { return s.kid }

// Sign implements instance.Signer.
func (s *signer) Sign(msg []byte) []byte { return ed25519.Sign(s.key, msg) }

// String returns "signer(<kid>)".
func (s *signer) String() string { return "signer(" + s.kid + ")" }

// Format writes String for every verb.
func (s *signer) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.String()) }

// LogValue makes slog print String.
func (s *signer) LogValue() slog.Value { return slog.StringValue(s.String()) }
