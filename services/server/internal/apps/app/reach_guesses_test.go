package app

import (
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/authz"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
	eventsync "bothy/server/internal/sync"
)

// TestReachGuessesExpectWhatTheLastReachNamed (ADR 0108): per place, the
// apps of the last reach, by event type, each once and ordered, without
// those the round has read; a reach of everyone or of nobody leaves
// nothing to expect.
func TestReachGuessesExpectWhatTheLastReachNamed(t *testing.T) {
	t.Parallel()
	a, b, c := ids.New(), ids.New(), ids.New()
	alpha := authorize.Resource{ChannelID: ids.New()}
	beta := authorize.Resource{ChannelID: ids.New()}
	g := newReachGuesses(10)
	g.remember([]authorize.Resource{alpha, beta}, []authz.Reach{{Principals: []ids.ID{a, b}}, {Principals: []ids.ID{b, c}}})

	created, deleted := eventlog.Type("message.created"), eventlog.Type("message.deleted")
	evs := []eventsync.Event{{Type: created}, {Type: created}, {Type: deleted}}
	none := func(eventlog.Type, ids.ID) bool { return false }
	types, byType := g.expect(evs, []authorize.Resource{alpha, beta, alpha}, none)
	require.Equal(t, []eventlog.Type{created, deleted}, types)
	require.ElementsMatch(t, []ids.ID{a, b, c}, byType[created], "b once")
	require.True(t, ids.Compare(byType[created][0], byType[created][1]) < 0, "ordered by id")
	require.ElementsMatch(t, []ids.ID{a, b}, byType[deleted])

	readB := func(_ eventlog.Type, p ids.ID) bool { return p == b }
	_, byType = g.expect(evs[:1], []authorize.Resource{alpha}, readB)
	require.Equal(t, []ids.ID{a}, byType[created], "an app the round read is not read again")

	g.remember([]authorize.Resource{alpha, beta}, []authz.Reach{{Everyone: true}, {}})
	types, _ = g.expect(evs, []authorize.Resource{alpha, beta, alpha}, none)
	require.Empty(t, types, "everyone and nobody leave nothing to expect")
}

// TestReachGuessesHoldAtMostTheirApps (ADR 0108): the apps kept over all
// places stay at most the bound: a reach that would go beyond drops what
// is kept, one larger than the bound is not kept.
func TestReachGuessesHoldAtMostTheirApps(t *testing.T) {
	t.Parallel()
	g := newReachGuesses(3)
	place := func() authorize.Resource { return authorize.Resource{ChannelID: ids.New()} }
	one, two, three := place(), place(), place()
	g.remember([]authorize.Resource{one, two}, []authz.Reach{{Principals: []ids.ID{ids.New()}}, {Principals: []ids.ID{ids.New()}}})
	g.remember([]authorize.Resource{one}, []authz.Reach{{Principals: []ids.ID{ids.New(), ids.New()}}})
	require.Equal(t, 3, g.n, "a place's new reach replaces its old one")
	g.remember([]authorize.Resource{three}, []authz.Reach{{Principals: []ids.ID{ids.New()}}})
	require.Equal(t, 1, g.n, "beyond the bound, what was kept is dropped")
	require.Len(t, g.by, 1)
	g.remember([]authorize.Resource{one}, []authz.Reach{{Principals: []ids.ID{ids.New(), ids.New(), ids.New(), ids.New()}}})
	require.Equal(t, 1, g.n, "a reach larger than the bound is not kept")
	_, kept := g.by[placeOf(three)]
	require.True(t, kept)
}
