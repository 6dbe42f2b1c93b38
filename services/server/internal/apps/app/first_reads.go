package app

import (
	"cmp"
	"slices"
	"sync"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/ids"
	eventsync "bothy/server/internal/sync"
)

// firstReads keeps what the consumer rounds of this process expect the
// first claims of the runs they start to read (ADR 0104): for each
// subscription a round scheduled that had no open row before it, the keys
// of the rows it made (its heads), in seq order, and the subscription's
// app. The first step of a run of that
// subscription in this process takes them and reads those events and the
// app's rights in the round trip of its lock, instead of in one after
// it; the claim uses what was read only where it covers the heads the
// lock found, and reads the rest as any run does, so what is kept is
// never more than a guess that saves a round trip. It holds at most max
// keys: a round that would go beyond drops what is kept first (runs that
// went to another process leave theirs behind). It is safe for
// concurrent use.
type firstReads struct {
	mu  sync.Mutex
	max int
	n   int
	by  map[ids.ID]*firstRead
}

// firstRead is what firstReads keeps for one subscription.
type firstRead struct {
	app  actor.Principal
	keys []eventsync.EventKey
}

// newFirstReads returns an empty firstReads of at most max keys.
func newFirstReads(max int) *firstReads {
	return &firstReads{max: max, by: map[ids.ID]*firstRead{}}
}

// keep adds the reads of a committed round, by subscription, each with
// its keys in seq order: a subscription's keys join those kept for it
// and stay its lowest perSubscription, as many as its first claim can
// take.
func (f *firstReads) keep(reads map[ids.ID]*firstRead, perSubscription int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for sub, r := range reads {
		old, kept := f.by[sub]
		keys := r.keys
		if kept {
			f.n -= len(old.keys)
			keys = append(slices.Clone(old.keys), keys...)
			slices.SortFunc(keys, func(a, b eventsync.EventKey) int { return cmp.Compare(a.Seq, b.Seq) })
			keys = slices.CompactFunc(keys, func(a, b eventsync.EventKey) bool { return a.Seq == b.Seq })
		}
		// A copy, so what is kept does not hold the round's rows.
		keys = slices.Clone(keys[:min(len(keys), perSubscription)])
		if f.n+len(keys) > f.max {
			clear(f.by)
			f.n = 0
			if len(keys) > f.max {
				continue
			}
		}
		f.by[sub] = &firstRead{app: r.app, keys: keys}
		f.n += len(keys)
	}
}

// take removes what is kept for subs and returns the keys of all of them,
// each seq once, and their apps, each once.
func (f *firstReads) take(subs []ids.ID) ([]eventsync.EventKey, []actor.Principal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var keys []eventsync.EventKey
	var apps []actor.Principal
	seen := map[int64]bool{}
	for _, sub := range subs {
		r, kept := f.by[sub]
		if !kept {
			continue
		}
		delete(f.by, sub)
		f.n -= len(r.keys)
		if !slices.ContainsFunc(apps, func(p actor.Principal) bool { return p.ID == r.app.ID }) {
			apps = append(apps, r.app)
		}
		for _, k := range r.keys {
			if !seen[k.Seq] {
				seen[k.Seq] = true
				keys = append(keys, k)
			}
		}
	}
	return keys, apps
}
