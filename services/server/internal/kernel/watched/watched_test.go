package watched_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/kernel/watched"
)

var t0 = time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)

// owned is a value about a principal, as a token's owner is.
type owned struct{ principal ids.ID }

func newCache(entries int) *watched.Cache[string, owned] {
	return watched.NewCache(time.Minute, entries, func(_ string, v owned) ids.ID { return v.principal })
}

// TestCacheRefusesALookupThatAnEventOvertook: a lookup that began before a
// change, a Lost or a new Watching may have read what the change replaced,
// so its answer is never stored.
func TestCacheRefusesALookupThatAnEventOvertook(t *testing.T) {
	ctx := context.Background()
	alex := ids.New()
	for name, overtake := range map[string]func(c *watched.Cache[string, owned]){
		"a change of the principal": func(c *watched.Cache[string, owned]) { c.Changed(alex) },
		"a change of another one":   func(c *watched.Cache[string, owned]) { c.Changed(ids.New()) },
		"a change of everyone":      func(c *watched.Cache[string, owned]) { c.ChangedAll() },
		"the watch lost and again":  func(c *watched.Cache[string, owned]) { c.Lost(); c.Watching() },
	} {
		t.Run(name, func(t *testing.T) {
			c := newCache(10)
			c.Watching()
			generation := c.Begin()
			overtake(c)
			c.Put(ctx, generation, "alex", owned{alex}, t0, time.Time{})
			_, ok := c.Get(ctx, "alex", t0)
			require.False(t, ok)

			c.Put(ctx, c.Begin(), "alex", owned{alex}, t0, time.Time{})
			got, ok := c.Get(ctx, "alex", t0)
			require.True(t, ok, "a lookup nothing overtook is stored")
			require.Equal(t, owned{alex}, got)
		})
	}
}

// TestCacheServesOnlyWhileWatched: nothing is stored or served before the
// first Watching and after Lost, which also forgets everything.
func TestCacheServesOnlyWhileWatched(t *testing.T) {
	ctx := context.Background()
	c := newCache(10)
	c.Put(ctx, c.Begin(), "sam", owned{ids.New()}, t0, time.Time{})
	_, ok := c.Get(ctx, "sam", t0)
	require.False(t, ok, "not yet watched")

	c.Watching()
	c.Put(ctx, c.Begin(), "sam", owned{ids.New()}, t0, time.Time{})
	_, ok = c.Get(ctx, "sam", t0)
	require.True(t, ok)

	c.Lost()
	_, ok = c.Get(ctx, "sam", t0)
	require.False(t, ok, "lost")
	c.Put(ctx, c.Begin(), "sam", owned{ids.New()}, t0, time.Time{})
	c.Watching()
	_, ok = c.Get(ctx, "sam", t0)
	require.False(t, ok, "Lost forgot the entry and nothing was stored while lost")
}

// TestCacheEntriesAgeAndExpire: an entry serves for less than the cache's
// ttl and only before its own expiry.
func TestCacheEntriesAgeAndExpire(t *testing.T) {
	ctx := context.Background()
	c := newCache(10)
	c.Watching()
	c.Put(ctx, c.Begin(), "session", owned{ids.New()}, t0, t0.Add(30*time.Second))
	c.Put(ctx, c.Begin(), "token", owned{ids.New()}, t0, time.Time{})

	_, ok := c.Get(ctx, "session", t0.Add(30*time.Second-time.Nanosecond))
	require.True(t, ok)
	_, ok = c.Get(ctx, "session", t0.Add(30*time.Second))
	require.False(t, ok, "expired")
	_, ok = c.Get(ctx, "token", t0.Add(time.Minute-time.Nanosecond))
	require.True(t, ok, "no expiry of its own")
	_, ok = c.Get(ctx, "token", t0.Add(time.Minute))
	require.False(t, ok, "older than the ttl")
}

// TestCacheForgetsOnlyTheChangedAndEmptiesWhenFull.
func TestCacheForgetsOnlyTheChangedAndEmptiesWhenFull(t *testing.T) {
	ctx := context.Background()
	c := newCache(2)
	c.Watching()
	alex, sam := ids.New(), ids.New()
	c.Put(ctx, c.Begin(), "a1", owned{alex}, t0, time.Time{})
	c.Put(ctx, c.Begin(), "s1", owned{sam}, t0, time.Time{})
	c.Changed(alex)
	_, ok := c.Get(ctx, "a1", t0)
	require.False(t, ok)
	_, ok = c.Get(ctx, "s1", t0)
	require.True(t, ok, "another principal's entry stays")

	c.Put(ctx, c.Begin(), "a2", owned{alex}, t0, time.Time{})
	c.Put(ctx, c.Begin(), "a3", owned{alex}, t0, time.Time{})
	_, ok = c.Get(ctx, "s1", t0)
	require.False(t, ok, "a full cache was emptied before the third entry")
	_, ok = c.Get(ctx, "a3", t0)
	require.True(t, ok)
}

// TestCacheOffStoresNothing: a zero ttl or entries keeps nothing.
func TestCacheOffStoresNothing(t *testing.T) {
	ctx := context.Background()
	for _, c := range []*watched.Cache[string, owned]{
		watched.NewCache(0, 10, func(_ string, v owned) ids.ID { return v.principal }),
		watched.NewCache(time.Minute, 0, func(_ string, v owned) ids.ID { return v.principal }),
	} {
		require.False(t, c.On())
		c.Watching()
		c.Put(ctx, c.Begin(), "robin", owned{ids.New()}, t0, time.Time{})
		_, ok := c.Get(ctx, "robin", t0)
		require.False(t, ok)
	}
}

// TestHubChangedAtCommit: every cache of the hub forgets at the commit of
// the unit of work that reported the change, not before and not after a
// rollback; that unit of work neither reads nor fills a cache meanwhile.
func TestHubChangedAtCommit(t *testing.T) {
	alex := ids.New()
	tokens, standings := newCache(10), newCache(10)
	var hub watched.Hub
	hub.Add(tokens)
	hub.Add(standings)
	hub.Watching()
	background := context.Background()
	tokens.Put(background, tokens.Begin(), "alex", owned{alex}, t0, time.Time{})
	standings.Put(background, standings.Begin(), "alex", owned{alex}, t0, time.Time{})

	uow, commit := txn.WithAfterCommit(txn.WithMemo(background))
	_, ok := tokens.Get(uow, "alex", t0)
	require.True(t, ok, "a unit of work that changes nothing is served")
	hub.ChangedAtCommit(uow, alex)
	_, ok = tokens.Get(uow, "alex", t0)
	require.False(t, ok, "the changing unit of work reads its own writes")
	standings.Put(uow, standings.Begin(), "sam", owned{ids.New()}, t0, time.Time{})
	_, ok = standings.Get(background, "sam", t0)
	require.False(t, ok, "the changing unit of work fills no cache")
	_, ok = tokens.Get(background, "alex", t0)
	require.True(t, ok, "others are served until the commit")

	commit()
	for _, c := range []*watched.Cache[string, owned]{tokens, standings} {
		_, ok = c.Get(background, "alex", t0)
		require.False(t, ok, "forgotten at the commit")
	}

	tokens.Put(background, tokens.Begin(), "alex", owned{alex}, t0, time.Time{})
	rolledBack, _ := txn.WithAfterCommit(txn.WithMemo(background))
	hub.ChangedAtCommit(rolledBack, alex)
	_, ok = tokens.Get(background, "alex", t0)
	require.True(t, ok, "a unit of work that does not commit changes nothing")

	hub.Lost()
	_, ok = tokens.Get(background, "alex", t0)
	require.False(t, ok, "Lost reaches every cache")
}

// TestNilHubTakesNoCache: a module given no hub keeps nothing: the cache
// it adds is never watched, so it never serves, and its changes report
// to nobody.
func TestNilHubTakesNoCache(t *testing.T) {
	var hub *watched.Hub
	c := newCache(10)
	hub.Add(c)
	require.True(t, hub.Empty())
	hub.Watching()
	c.Put(context.Background(), c.Begin(), "alex", owned{ids.New()}, t0, time.Time{})
	_, ok := c.Get(context.Background(), "alex", t0)
	require.False(t, ok)
	hub.ChangedAtCommit(context.Background(), ids.New())
}
