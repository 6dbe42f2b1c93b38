package app

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/identity/domain"
	"bothy/server/internal/kernel/ids"
)

var cacheT0 = time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)

func cachedSession(person ids.ID, expires time.Time) TokenOwner {
	return TokenOwner{ID: ids.New(), PrincipalID: person, Role: "member", ExpiresAt: expires}
}

// TestTokenCacheRefusesALookupThatAChangeOvertook: a lookup that began
// before a change, a Lost or a new Watching may have read what the change
// replaced, so its answer is never stored.
func TestTokenCacheRefusesALookupThatAChangeOvertook(t *testing.T) {
	person := ids.New()
	hash := domain.TokenHash{1}
	owner := cachedSession(person, cacheT0.Add(time.Hour))
	for name, overtake := range map[string]func(c *tokenCache){
		"a change of the person":   func(c *tokenCache) { c.forget(person) },
		"a change of another one":  func(c *tokenCache) { c.forget(ids.New()) },
		"a change of everyone":     func(c *tokenCache) { c.forgetAll() },
		"the watch lost and again": func(c *tokenCache) { c.reset(false); c.reset(true) },
	} {
		t.Run(name, func(t *testing.T) {
			c := newTokenCache(time.Minute, 10)
			c.reset(true)
			generation := c.begin()
			overtake(c)
			c.put(generation, domain.TokenSession, hash, owner, cacheT0)
			_, ok := c.get(domain.TokenSession, hash, cacheT0)
			require.False(t, ok)

			c.put(c.begin(), domain.TokenSession, hash, owner, cacheT0)
			got, ok := c.get(domain.TokenSession, hash, cacheT0)
			require.True(t, ok, "a lookup nothing overtook is stored")
			require.Equal(t, owner, got)
		})
	}
}

// TestTokenCacheServesOnlyWhileWatched: nothing is stored or served before
// the first Watching and after Lost, which also forgets everything.
func TestTokenCacheServesOnlyWhileWatched(t *testing.T) {
	c := newTokenCache(time.Minute, 10)
	hash := domain.TokenHash{2}
	owner := cachedSession(ids.New(), time.Time{})
	c.put(c.begin(), domain.TokenPersonal, hash, owner, cacheT0)
	_, ok := c.get(domain.TokenPersonal, hash, cacheT0)
	require.False(t, ok, "not yet watched")

	c.reset(true)
	c.put(c.begin(), domain.TokenPersonal, hash, owner, cacheT0)
	_, ok = c.get(domain.TokenPersonal, hash, cacheT0)
	require.True(t, ok)
	_, ok = c.get(domain.TokenSession, hash, cacheT0)
	require.False(t, ok, "an entry serves only its own kind of token")

	c.reset(false)
	_, ok = c.get(domain.TokenPersonal, hash, cacheT0)
	require.False(t, ok, "lost")
	c.reset(true)
	_, ok = c.get(domain.TokenPersonal, hash, cacheT0)
	require.False(t, ok, "Lost forgot the entry")
}

// TestTokenCacheEntriesAgeAndExpire: an entry serves for less than the
// cache's ttl and only before its token's expiry.
func TestTokenCacheEntriesAgeAndExpire(t *testing.T) {
	c := newTokenCache(time.Minute, 10)
	c.reset(true)
	session, personal := domain.TokenHash{3}, domain.TokenHash{4}
	c.put(c.begin(), domain.TokenSession, session, cachedSession(ids.New(), cacheT0.Add(30*time.Second)), cacheT0)
	c.put(c.begin(), domain.TokenPersonal, personal, cachedSession(ids.New(), time.Time{}), cacheT0)

	_, ok := c.get(domain.TokenSession, session, cacheT0.Add(30*time.Second-time.Nanosecond))
	require.True(t, ok)
	_, ok = c.get(domain.TokenSession, session, cacheT0.Add(30*time.Second))
	require.False(t, ok, "the session expired")
	_, ok = c.get(domain.TokenPersonal, personal, cacheT0.Add(time.Minute-time.Nanosecond))
	require.True(t, ok, "a token without expiry")
	_, ok = c.get(domain.TokenPersonal, personal, cacheT0.Add(time.Minute))
	require.False(t, ok, "older than identity.token_cache_ttl")
}

// TestTokenCacheForgetsOnlyThePerson and empties itself when full.
func TestTokenCacheForgetsOnlyThePersonAndEmptiesWhenFull(t *testing.T) {
	c := newTokenCache(time.Minute, 2)
	c.reset(true)
	alex, sam := ids.New(), ids.New()
	c.put(c.begin(), domain.TokenSession, domain.TokenHash{5}, cachedSession(alex, time.Time{}), cacheT0)
	c.put(c.begin(), domain.TokenSession, domain.TokenHash{6}, cachedSession(sam, time.Time{}), cacheT0)
	c.forget(alex)
	_, ok := c.get(domain.TokenSession, domain.TokenHash{5}, cacheT0)
	require.False(t, ok)
	_, ok = c.get(domain.TokenSession, domain.TokenHash{6}, cacheT0)
	require.True(t, ok, "another person's token stays")

	c.put(c.begin(), domain.TokenSession, domain.TokenHash{7}, cachedSession(alex, time.Time{}), cacheT0)
	c.put(c.begin(), domain.TokenSession, domain.TokenHash{8}, cachedSession(alex, time.Time{}), cacheT0)
	require.Len(t, c.owners, 1, "a full cache (identity.token_cache_entries) was emptied before the third entry")
	_, ok = c.get(domain.TokenSession, domain.TokenHash{8}, cacheT0)
	require.True(t, ok)
}
