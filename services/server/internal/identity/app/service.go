// Package app holds the use cases of the identity module: people (create,
// the first owner from the CLI), sessions (sign in, sign out, step-up),
// personal tokens, the principals of apps and agents with app tokens, and
// Authenticate, which turns a bearer token into an actor.Principal.
package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"sync"
	"time"

	"bothy/server/internal/identity"
	"bothy/server/internal/identity/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/kernel/watched"
)

// ReasonEmailTaken is the conflict reason of a person whose email another
// person already has.
const ReasonEmailTaken = "email_taken"

// Options configure the use cases.
type Options struct {
	// SessionTTL is identity.session_ttl: a session ends this long after
	// sign-in. Must be positive.
	SessionTTL time.Duration
	// PasswordMinLength is identity.password_min_length. Must be positive.
	PasswordMinLength int
	// TokenCacheTTL is identity.token_cache_ttl: how long the owner of a
	// token may be served from memory (ADR 0102);
	// zero turns the cache off. Not negative.
	TokenCacheTTL time.Duration
	// TokenCacheEntries is identity.token_cache_entries: the most owners
	// kept; zero turns the cache off. Not negative.
	TokenCacheEntries int
	// PasswordParams are identity.password_hash_memory,
	// identity.password_hash_iterations and
	// identity.password_hash_parallelism (domain.NewParams).
	PasswordParams domain.Params
}

func (o Options) validate() error {
	if o.SessionTTL <= 0 || o.PasswordMinLength <= 0 {
		return errors.New("identity: Options.SessionTTL (identity.session_ttl) and PasswordMinLength (identity.password_min_length) must be positive")
	}
	if o.TokenCacheTTL < 0 || o.TokenCacheEntries < 0 {
		return errors.New("identity: Options.TokenCacheTTL (identity.token_cache_ttl) and TokenCacheEntries (identity.token_cache_entries) must not be negative")
	}
	if err := o.PasswordParams.Validate(); err != nil {
		return errors.New("identity: Options.PasswordParams (identity.password_hash_*) are out of bounds")
	}
	return nil
}

// Deps are the collaborators of the Service; all are required except
// Random.
type Deps struct {
	// UnitOfWork runs each change in one transaction.
	UnitOfWork txn.UnitOfWork
	// Store persists people, sessions, tokens and principals.
	Store Store
	// Authorizer decides every use case (internal/authz).
	Authorizer authorize.Authorizer
	// Audit records the allowed changes the catalogue audits.
	Audit auditing.Recorder
	// AppFacts reads the installation of an app principal (the apps module).
	AppFacts identity.AppFactsSource
	// Clock stamps rows and decides expiry.
	Clock clock.Clock
	// Random makes tokens, salts and IDs; nil means crypto/rand.
	Random io.Reader
	// Changes is the process's hub of watched facts (ADR 0103): the
	// cache of token owners joins it, and the use cases that change
	// credentials report to it. Nil keeps nothing in memory.
	Changes *watched.Hub
}

// core is what the Service and the Bootstrap share.
type core struct {
	uow    txn.UnitOfWork
	store  Store
	audit  auditing.Recorder
	clock  clock.Clock
	random io.Reader
	opts   Options
}

// Service runs the identity use cases. It implements
// identity.Authenticator and identity.Principals.
type Service struct {
	core
	az       authorize.Authorizer
	appFacts identity.AppFactsSource
	// tokens caches the owners of tokens (ADR 0102).
	tokens *watched.Cache[domain.TokenHash, cachedOwner]
	// changes hears the changes of credentials (ADR 0103).
	changes *watched.Hub
	// dummyHash returns the hash verified when a sign-in names an unknown
	// email, so that the answer takes as long as for a wrong password. It
	// is made by its first call, which every sign-in makes before it looks
	// the email up (D-ID-10).
	dummyHash func() (string, error)
}

var (
	_ identity.Authenticator = (*Service)(nil)
	_ identity.Principals    = (*Service)(nil)
)

// New returns the Service. It draws a random password and salt for the
// stand-in hash of unknown emails but leaves the hash, which takes
// identity.password_hash_memory, to the first sign-in (D-ID-10): a worker
// never signs anyone in, and memory live while a process is assembled sets
// its collector's first goal. It returns an error for invalid Options or a
// failing random source and panics on a missing dependency (a wiring bug).
func New(d Deps, o Options) (*Service, error) {
	if d.Authorizer == nil || d.AppFacts == nil {
		panic("identity: New needs an authorizer and an app facts source")
	}
	c, err := newCore(d.UnitOfWork, d.Store, d.Audit, d.Clock, d.Random, o)
	if err != nil {
		return nil, err
	}
	// The password and the salt are drawn now, so that the hash made later
	// cannot fail for want of randomness.
	secret := make([]byte, domain.TokenBytes+domain.SaltLength)
	if _, err := io.ReadFull(c.random, secret); err != nil {
		return nil, domain.ErrRandom
	}
	pw, salt := string(secret[:domain.TokenBytes]), secret[domain.TokenBytes:]
	dummy := sync.OnceValues(func() (string, error) {
		return domain.HashPassword(pw, o.PasswordParams, bytes.NewReader(salt))
	})
	tokens := newTokenCache(o)
	if tokens.On() {
		d.Changes.Add(tokens)
	}
	return &Service{core: c, az: d.Authorizer, appFacts: d.AppFacts, dummyHash: dummy,
		tokens: tokens, changes: d.Changes}, nil
}

func newCore(uow txn.UnitOfWork, store Store, audit auditing.Recorder, clk clock.Clock, random io.Reader, o Options) (core, error) {
	if uow == nil || store == nil || audit == nil || clk == nil {
		panic("identity: the use cases need a unit of work, a store, an audit recorder and a clock")
	}
	if err := o.validate(); err != nil {
		return core{}, err
	}
	if random == nil {
		random = rand.Reader
	}
	return core{uow: uow, store: store, audit: audit, clock: clk, random: random, opts: o}, nil
}

// newID returns a UUIDv7 stamped with now from the service's random source.
func (c *core) newID(now time.Time) (ids.ID, error) {
	id, err := ids.NewAt(now, c.random)
	if err != nil {
		return ids.Zero, errs.Wrap(domain.ErrRandom, "identity: reading randomness failed")
	}
	return id, nil
}

// errUnauthorized is the one answer to a bad credential, whatever was
// wrong with it.
func errUnauthorized() error { return errs.New(errs.CodeUnauthorized, "authentication required") }

// check asks the authorizer and turns a denial into its error.
func (s *Service) check(ctx context.Context, a authorize.Action, r authorize.Resource) error {
	return authorize.Check(ctx, s.az, actor.From(ctx), a, r)
}
