package app

import (
	"context"
	"sync"
	"time"

	"bothy/server/internal/identity/domain"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
)

// CredentialEvents is how a process learns that stored credentials
// changed (ADR 0102). The watcher of the postgres adapter
// (WatchCredentials) calls it from the notifications of channel
// bothy_credentials, which a trigger sends for every update, delete and
// truncate of people, sessions, personal_tokens (migration 00062) and
// app_tokens (00063). The
// Service implements it for its cache of token owners.
type CredentialEvents interface {
	// Watching says the watcher listens from now on: every change
	// committed after this call will be reported. Until the first call,
	// and after Lost, the cache serves nothing.
	Watching()
	// Lost says the watcher stopped listening (its connection ended):
	// changes may go unreported, so the cache forgets everything and
	// serves nothing until the next Watching.
	Lost()
	// Changed says a credential of the person or app principalID, or the
	// person, changed: every cached token of that principal is forgotten.
	Changed(principalID ids.ID)
	// ChangedAll says credentials of unknown people changed (a truncate,
	// a payload that names no principal): everything is forgotten.
	ChangedAll()
}

// tokenCache keeps the owners of recently used tokens (sessions, personal
// and app tokens) so that most requests authenticate without a database
// round trip (ADR 0102). An entry is served only
//
//   - while the watcher listens and has listened since the entry's lookup
//     began (a Lost or any change in between refuses to store it: the
//     lookup may have read a credential a change then replaced),
//   - for at most ttl after it was stored (identity.token_cache_ttl), and
//   - while the session or token has not expired by the clock.
//
// An app's installation facts are not kept here: Authenticate reads them
// on every request. A zero ttl or entries turns the cache off.
type tokenCache struct {
	ttl     time.Duration
	entries int

	mu sync.Mutex
	// generation counts the events that may make a lookup in flight
	// stale (changes, Watching, Lost); a lookup stores its owner only
	// when the generation it began at is still current.
	generation uint64
	watching   bool
	owners     map[domain.TokenHash]cachedOwner
}

// cachedOwner is one cached lookup.
type cachedOwner struct {
	kind     domain.TokenKind
	owner    TokenOwner
	storedAt time.Time
}

func newTokenCache(ttl time.Duration, entries int) *tokenCache {
	return &tokenCache{ttl: ttl, entries: entries, owners: map[domain.TokenHash]cachedOwner{}}
}

// on reports whether the cache is configured at all.
func (c *tokenCache) on() bool { return c.ttl > 0 && c.entries > 0 }

// get returns the cached owner of hash when it may be served at now. No
// entry exists while the watch is not listening: reset(false) empties the
// cache and put stores nothing then.
func (c *tokenCache) get(kind domain.TokenKind, hash domain.TokenHash, now time.Time) (TokenOwner, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.owners[hash]
	if !ok || e.kind != kind {
		return TokenOwner{}, false
	}
	if !now.Before(e.storedAt.Add(c.ttl)) || (!e.owner.ExpiresAt.IsZero() && !now.Before(e.owner.ExpiresAt)) {
		delete(c.owners, hash)
		return TokenOwner{}, false
	}
	return e.owner, true
}

// begin returns the generation a lookup starts at; put takes it back.
func (c *tokenCache) begin() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.generation
}

// put stores the owner a lookup that began at generation found, unless
// anything happened since that may make it stale. A full cache is
// emptied first: the next lookups refill it with what is in use.
func (c *tokenCache) put(generation uint64, kind domain.TokenKind, hash domain.TokenHash, o TokenOwner, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.watching || generation != c.generation {
		return
	}
	if len(c.owners) >= c.entries {
		clear(c.owners)
	}
	c.owners[hash] = cachedOwner{kind: kind, owner: o, storedAt: now}
}

// forget drops every entry of principalID.
func (c *tokenCache) forget(principalID ids.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	for h, e := range c.owners {
		if e.owner.PrincipalID == principalID {
			delete(c.owners, h)
		}
	}
}

// reset drops every entry and sets whether entries may be served.
func (c *tokenCache) reset(watching bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	c.watching = watching
	clear(c.owners)
}

// forgetTokensAfterCommit forgets the cached tokens of principalID once
// the unit of work of ctx, which changes one of them, has committed: this
// process then answers the change's next request from the store at once,
// without waiting for the trigger's notification, which tells the other
// processes (and this one again).
func (s *Service) forgetTokensAfterCommit(ctx context.Context, principalID ids.ID) {
	txn.AfterCommit(ctx, func() { s.tokens.forget(principalID) })
}

// CachesTokens reports whether the Service keeps token owners at all
// (identity.token_cache_ttl and identity.token_cache_entries above 0): only
// then does a process need WatchCredentials.
func (s *Service) CachesTokens() bool { return s.tokens.on() }

// Watching implements CredentialEvents.
func (s *Service) Watching() { s.tokens.reset(true) }

// Lost implements CredentialEvents.
func (s *Service) Lost() { s.tokens.reset(false) }

// Changed implements CredentialEvents.
func (s *Service) Changed(principalID ids.ID) { s.tokens.forget(principalID) }

// ChangedAll implements CredentialEvents.
func (s *Service) ChangedAll() { s.tokens.forgetAll() }

// forgetAll drops every entry; whether entries may be served stays.
func (c *tokenCache) forgetAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	clear(c.owners)
}
