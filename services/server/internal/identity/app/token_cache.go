package app

import (
	"context"

	"bothy/server/internal/identity/domain"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/watched"
)

// cachedOwner is the owner of one token, with the kind of the token it was
// looked up for.
type cachedOwner struct {
	kind  domain.TokenKind
	owner TokenOwner
}

// newTokenCache returns the cache of token owners (sessions, personal and
// app tokens; ADR 0102): most requests then authenticate without a
// database round trip. An entry serves while the watch listens, for less
// than identity.token_cache_ttl and before its session or token expires;
// a change of the owner's credentials (the trigger of migrations 00062 and
// 00063 notifies the owner's principal ID) forgets it. An app's
// installation facts are not kept: Authenticate reads them on every
// request.
func newTokenCache(o Options) *watched.Cache[domain.TokenHash, cachedOwner] {
	return watched.NewCache(o.TokenCacheTTL, o.TokenCacheEntries,
		func(_ domain.TokenHash, c cachedOwner) ids.ID { return c.owner.PrincipalID })
}

// lookupToken finds the owner of a token of kind with hash: from the cache
// while it may serve it, else from the store, whose answer the cache keeps
// unless a change arrived while the store was asked.
func (s *Service) lookupToken(ctx context.Context, kind domain.TokenKind, hash domain.TokenHash) (TokenOwner, bool, error) {
	if c, ok := s.tokens.Get(ctx, hash, s.clock.Now()); ok && c.kind == kind {
		return c.owner, true, nil
	}
	generation := s.tokens.Begin()
	now := s.clock.Now()
	owner, ok, err := s.store.LookupToken(ctx, kind, hash, now)
	if err == nil && ok {
		s.tokens.Put(ctx, generation, hash, cachedOwner{kind: kind, owner: owner}, now, owner.ExpiresAt)
	}
	return owner, ok, err
}

// forgetTokensAfterCommit reports that the unit of work of ctx changes the
// credentials of principalID: at its commit every cache of this process
// forgets them (watched.Hub.ChangedAtCommit), so the change's next request
// is answered from the store without waiting for the trigger's
// notification, which tells the other processes.
func (s *Service) forgetTokensAfterCommit(ctx context.Context, principalID ids.ID) {
	s.changes.ChangedAtCommit(ctx, principalID)
}
