package app

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/ids"
)

// TestSendPacesKeepAPaceForTwoSpans (D-M2-26-89): a pace is used until two
// spans after it was learned, then forgotten, whatever the generations.
func TestSendPacesKeepAPaceForTwoSpans(t *testing.T) {
	t.Parallel()
	p := newSendPaces(time.Minute)
	start := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	alex, sam := ids.New(), ids.New()
	p.set(alex, 4, start)
	p.set(sam, 9, start.Add(119*time.Second))
	require.Equal(t, 4, p.get(alex, start.Add(119*time.Second)))
	require.Equal(t, 0, p.get(alex, start.Add(2*time.Minute)), "two spans after it was learned")
	require.Equal(t, 9, p.get(sam, start.Add(2*time.Minute)), "kept across a new generation")
	require.Equal(t, 9, p.get(sam, start.Add(238*time.Second)))
	require.Equal(t, 0, p.get(sam, start.Add(239*time.Second)))
}

// TestSendPacesKeepOnlyRecentSubscriptions (D-M2-26-89): what is kept is
// bounded by time: the entries of subscriptions that learned no pace for
// four spans are gone, and a pace of the most a claim takes is not kept.
func TestSendPacesKeepOnlyRecentSubscriptions(t *testing.T) {
	t.Parallel()
	p := newSendPaces(time.Minute)
	start := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	for range 1000 {
		p.set(ids.New(), 3, start)
	}
	robin := ids.New()
	p.set(robin, 5, start.Add(time.Second))
	p.set(robin, 0, start.Add(2*time.Second))
	require.Equal(t, 0, p.get(robin, start.Add(2*time.Second)), "the most a claim takes forgets the pace")
	require.Len(t, p.current, 1000)
	p.set(robin, 6, start.Add(2*time.Minute))
	require.Len(t, p.current, 1, "a new generation")
	require.Len(t, p.previous, 1000)
	sam := ids.New()
	p.set(sam, 7, start.Add(4*time.Minute))
	require.Len(t, p.current, 1)
	require.Len(t, p.previous, 1, "the generation of the thousand is gone, Robin's is the older one")
	require.Equal(t, 7, p.get(sam, start.Add(4*time.Minute)))
	p.set(ids.New(), 8, start.Add(9*time.Minute))
	require.Len(t, p.previous, 0, "both generations are gone after four spans without a pace")
}
