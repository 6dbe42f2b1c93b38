// Package watched keeps facts read from the database in the memory of a
// process for as long as the process hears of their every change (ADR
// 0102, ADR 0103): the owners of bearer tokens, a person's standing (grants
// and memberships) and channels.
//
// A trigger notifies every change of such a fact at its commit with the ID
// it concerns (a principal or a channel; platform/pg.WatchChanges listens),
// and a use case that changes one reports it to its own process at its
// commit (Hub.ChangedAtCommit), so its next request needs no notification.
// A Cache serves an entry only while the watch listens and has listened
// since the entry's lookup began, and for less than its time to live.
package watched

import (
	"context"
	"sync"
	"time"

	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
)

// Events is how a process learns that watched facts changed. The watch of
// the database (platform/pg.WatchChanges) calls it; a Hub passes each call
// on to every Cache of the process.
type Events interface {
	// Watching says the watch listens from now on: every change committed
	// after this call will be reported. Until the first call, and after
	// Lost, a cache serves nothing.
	Watching()
	// Lost says the watch stopped listening (its connection ended):
	// changes may go unreported, so a cache forgets everything and serves
	// nothing until the next Watching.
	Lost()
	// Changed says facts about id (a principal or a channel) changed:
	// every entry about id is forgotten.
	Changed(id ids.ID)
	// ChangedAll says facts of unknown IDs changed (a truncate, a payload
	// that names no ID): everything is forgotten.
	ChangedAll()
}

// Cache keeps values of type V by keys of type K, each about one ID (a
// token's owner, a principal, a channel). The zero ttl or entries turns it
// off: it then stores nothing.
//
// A lookup that may be cached runs as: Get; on a miss, Begin, read the
// store, Put with Begin's generation. Put refuses a value that any event
// overtook (a change, Watching, Lost): the lookup may have read what the
// change replaced.
type Cache[K comparable, V any] struct {
	ttl     time.Duration
	entries int
	about   func(K, V) ids.ID

	mu sync.Mutex
	// generation counts the events that may make a lookup in flight
	// stale; a lookup stores its value only when the generation it began
	// at is still current.
	generation uint64
	watching   bool
	values     map[K]entry[V]
}

// entry is one cached value.
type entry[V any] struct {
	value     V
	storedAt  time.Time
	expiresAt time.Time
}

var _ Events = (*Cache[int, int])(nil)

// NewCache returns a cache whose entries serve for less than ttl and that
// holds at most entries of them; about names the ID an entry is about
// (Changed forgets the entries it names). A full cache empties itself
// before the next entry: the lookups that follow refill it with what is in
// use. It panics on a nil about (a wiring bug).
func NewCache[K comparable, V any](ttl time.Duration, entries int, about func(K, V) ids.ID) *Cache[K, V] {
	if about == nil {
		panic("watched: NewCache needs about")
	}
	return &Cache[K, V]{ttl: ttl, entries: entries, about: about, values: map[K]entry[V]{}}
}

// On reports whether the cache is configured to keep anything (ttl and
// entries above 0): only then does its process need the watch.
func (c *Cache[K, V]) On() bool { return c.ttl > 0 && c.entries > 0 }

// Get returns the value of k when it may be served at now to the unit of
// work of ctx. A unit of work that changes watched facts (ChangedAtCommit)
// is never served: it must read its own writes.
func (c *Cache[K, V]) Get(ctx context.Context, k K, now time.Time) (V, bool) {
	var zero V
	if changing(ctx) {
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.values[k]
	if !ok {
		return zero, false
	}
	if !now.Before(e.storedAt.Add(c.ttl)) || (!e.expiresAt.IsZero() && !now.Before(e.expiresAt)) {
		delete(c.values, k)
		return zero, false
	}
	return e.value, true
}

// Begin returns the generation a lookup starts at; Put takes it back.
func (c *Cache[K, V]) Begin() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.generation
}

// Put stores v, read by a lookup of ctx that began at generation, for k
// from now until the cache's ttl or expiresAt (zero: no expiry), whichever
// comes first. It stores nothing while the watch does not listen, when any
// event came since generation, and from a unit of work that changes
// watched facts (it may have read its own writes, which a rollback would
// undo).
func (c *Cache[K, V]) Put(ctx context.Context, generation uint64, k K, v V, now, expiresAt time.Time) {
	if !c.On() || changing(ctx) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.watching || generation != c.generation {
		return
	}
	if len(c.values) >= c.entries {
		clear(c.values)
	}
	c.values[k] = entry[V]{value: v, storedAt: now, expiresAt: expiresAt}
}

// Watching implements Events.
func (c *Cache[K, V]) Watching() { c.reset(true) }

// Lost implements Events.
func (c *Cache[K, V]) Lost() { c.reset(false) }

// Changed implements Events: every entry about id goes.
func (c *Cache[K, V]) Changed(id ids.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	for k, e := range c.values {
		if c.about(k, e.value) == id {
			delete(c.values, k)
		}
	}
}

// ChangedAll implements Events: every entry goes; whether entries may be
// served stays.
func (c *Cache[K, V]) ChangedAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	clear(c.values)
}

// reset drops every entry and sets whether entries may be stored.
func (c *Cache[K, V]) reset(watching bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	c.watching = watching
	clear(c.values)
}

// Hub passes every event to each Events added to it: the caches of a
// process. The watch of the database reports to the process's one Hub, and
// so do its use cases (ChangedAtCommit). The zero Hub has no caches; a nil
// *Hub takes none (Add does nothing), so a cache given a nil hub is never
// watched and never serves.
type Hub struct {
	mu     sync.Mutex
	caches []Events
}

var _ Events = (*Hub)(nil)

// Add makes e hear every later event.
func (h *Hub) Add(e Events) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.caches = append(h.caches, e)
}

// Empty reports whether nothing was added: a process whose hub is empty
// keeps nothing in memory and needs no watch.
func (h *Hub) Empty() bool {
	if h == nil {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.caches) == 0
}

// each calls fn for every Events added.
func (h *Hub) each(fn func(Events)) {
	if h == nil {
		return
	}
	h.mu.Lock()
	caches := h.caches
	h.mu.Unlock()
	for _, e := range caches {
		fn(e)
	}
}

// Watching implements Events.
func (h *Hub) Watching() { h.each(Events.Watching) }

// Lost implements Events.
func (h *Hub) Lost() { h.each(Events.Lost) }

// Changed implements Events.
func (h *Hub) Changed(id ids.ID) { h.each(func(e Events) { e.Changed(id) }) }

// ChangedAll implements Events.
func (h *Hub) ChangedAll() { h.each(Events.ChangedAll) }

// ChangedAtCommit reports that the unit of work of ctx changes facts about
// id: once it has committed, every cache of the process forgets them, so
// the change's next request reads the store without waiting for the
// trigger's notification (which tells the other processes, and this one
// again). Until its end the unit of work reads no cache and fills none
// (Get, Put). Outside a unit of work the change is reported at once.
func (h *Hub) ChangedAtCommit(ctx context.Context, id ids.ID) {
	changingKey.Set(ctx, true)
	txn.AfterCommit(ctx, func() { h.Changed(id) })
}

// changingKey marks a unit of work that changes watched facts.
var changingKey = txn.NewKey[bool]("watched.changing")

// changing reports whether the unit of work of ctx changes watched facts.
func changing(ctx context.Context) bool {
	v, _ := changingKey.Get(ctx)
	return v
}
