package app

import (
	"slices"
	"sync"

	"bothy/server/internal/authz"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
	eventsync "bothy/server/internal/sync"
)

// reachGuesses keeps, for each place the consumer rounds of this process
// read the reach of, the apps that reach named (ADR 0108). A round reads
// the candidates of the apps it expects for its events' places in the
// round trip of its reach instead of in one after it; what the reach then
// names decides every row, and an app it names that was not expected is
// read after it as before, so what is kept is never more than a guess that
// saves a round trip. No right is decided from it (ADR 0103 keeps apps'
// rights out of every cache). It holds at most max apps over all its
// places: a reach that would go beyond drops what is kept first, and a
// reach that names more than max apps is not kept. It is safe for
// concurrent use.
type reachGuesses struct {
	mu  sync.Mutex
	max int
	n   int // the apps kept over all places
	by  map[reachPlace][]ids.ID
}

// reachPlace is what a reach depends on of an event's resource: its space
// and channel, and the audience of a personal event.
type reachPlace struct {
	space, channel, audience ids.ID
}

// placeOf returns the place of res.
func placeOf(res authorize.Resource) reachPlace {
	return reachPlace{space: res.SpaceID, channel: res.ChannelID, audience: res.Audience}
}

// newReachGuesses returns an empty reachGuesses of at most max apps.
func newReachGuesses(max int) *reachGuesses {
	return &reachGuesses{max: max, by: map[reachPlace][]ids.ID{}}
}

// expect returns, by event type in the order of evs, the apps the last
// reach of each event's place named (its resource in res), each once and
// ordered by id, leaving out those read is true for. A type none of
// whose places is known is left out.
func (g *reachGuesses) expect(evs []eventsync.Event, res []authorize.Resource,
	read func(t eventlog.Type, app ids.ID) bool) ([]eventlog.Type, map[eventlog.Type][]ids.ID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var types []eventlog.Type
	byType := map[eventlog.Type][]ids.ID{}
	for i, ev := range evs {
		for _, p := range g.by[placeOf(res[i])] {
			if read(ev.Type, p) {
				continue
			}
			if _, listed := byType[ev.Type]; !listed {
				types = append(types, ev.Type)
			}
			byType[ev.Type] = append(byType[ev.Type], p)
		}
	}
	for t, ps := range byType {
		slices.SortFunc(ps, ids.Compare)
		byType[t] = slices.Compact(ps)
	}
	return types, byType
}

// remember keeps the apps each reach named for the place of its resource
// in res; a reach of everyone keeps nothing, as its candidates are every
// app's.
func (g *reachGuesses) remember(res []authorize.Resource, reaches []authz.Reach) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, reach := range reaches {
		place := placeOf(res[i])
		g.n -= len(g.by[place])
		delete(g.by, place)
		if reach.Everyone || len(reach.Principals) > g.max {
			continue
		}
		if g.n+len(reach.Principals) > g.max {
			clear(g.by)
			g.n = 0
		}
		// A copy, so what is kept does not hold the round's reach.
		g.by[place] = slices.Clone(reach.Principals)
		g.n += len(reach.Principals)
	}
}
