package app

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/ids"
	eventsync "bothy/server/internal/sync"
)

func keysOf(seqs ...int64) []eventsync.EventKey {
	at := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	out := make([]eventsync.EventKey, len(seqs))
	for i, s := range seqs {
		out[i] = eventsync.EventKey{Seq: s, OccurredAt: at}
	}
	return out
}

// TestFirstReadsKeepTheLowestKeysOfEachSubscription (ADR 0104): a round's
// keys join those an earlier round left for the same subscription, in
// seq order and each once, and at most as many as a first claim takes.
func TestFirstReadsKeepTheLowestKeysOfEachSubscription(t *testing.T) {
	t.Parallel()
	sub, app := ids.New(), actor.Principal{ID: ids.New(), Kind: actor.KindApp}
	f := newFirstReads(100)
	f.keep(map[ids.ID]*firstRead{sub: {app: app, keys: keysOf(5, 7)}}, 3)
	f.keep(map[ids.ID]*firstRead{sub: {app: app, keys: keysOf(7, 8, 9)}}, 3)
	keys, apps := f.take([]ids.ID{sub})
	require.Equal(t, keysOf(5, 7, 8), keys)
	require.Equal(t, []actor.Principal{app}, apps)
	keys, apps = f.take([]ids.ID{sub})
	require.Empty(t, keys, "taken once")
	require.Empty(t, apps)
}

// TestFirstReadsTakeEachKeyAndAppOnce: the runs of one job that share an
// event (a fan-out) and an app read each once.
func TestFirstReadsTakeEachKeyAndAppOnce(t *testing.T) {
	t.Parallel()
	a, b, c := ids.New(), ids.New(), ids.New()
	app := actor.Principal{ID: ids.New(), Kind: actor.KindApp}
	other := actor.Principal{ID: ids.New(), Kind: actor.KindApp}
	f := newFirstReads(100)
	f.keep(map[ids.ID]*firstRead{
		a: {app: app, keys: keysOf(1, 2)},
		b: {app: app, keys: keysOf(2, 3)},
		c: {app: other, keys: keysOf(4)},
	}, 10)
	keys, apps := f.take([]ids.ID{a, b})
	require.Equal(t, keysOf(1, 2, 3), keys)
	require.Equal(t, []actor.Principal{app}, apps)
	keys, apps = f.take([]ids.ID{c})
	require.Equal(t, keysOf(4), keys)
	require.Equal(t, []actor.Principal{other}, apps)
}

// TestFirstReadsHoldAtMostTheirKeys: a round that would go beyond the
// bound drops what earlier rounds left (runs that started elsewhere
// leave theirs behind), so what is kept never grows past it.
func TestFirstReadsHoldAtMostTheirKeys(t *testing.T) {
	t.Parallel()
	old, sub := ids.New(), ids.New()
	app := actor.Principal{ID: ids.New(), Kind: actor.KindApp}
	f := newFirstReads(4)
	f.keep(map[ids.ID]*firstRead{old: {app: app, keys: keysOf(1, 2, 3)}}, 10)
	f.keep(map[ids.ID]*firstRead{sub: {app: app, keys: keysOf(4, 5)}}, 10)
	require.Equal(t, 2, f.n)
	keys, _ := f.take([]ids.ID{old})
	require.Empty(t, keys, "dropped for the newer round")
	keys, _ = f.take([]ids.ID{sub})
	require.Equal(t, keysOf(4, 5), keys)
	require.Zero(t, f.n)

	f.keep(map[ids.ID]*firstRead{sub: {app: app, keys: keysOf(1, 2, 3, 4, 5, 6)}}, 10)
	require.Zero(t, f.n, "more than the bound alone is not kept")
}
