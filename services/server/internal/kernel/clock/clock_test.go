package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/clock"
)

func TestFakeSetAndAdvance(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	f := clock.NewFake(start)
	require.Equal(t, start, f.Now())
	require.Equal(t, start.Add(time.Minute), f.Advance(time.Minute))
	f.Set(start)
	require.Equal(t, start, f.Now())
}

func TestRealIsUTC(t *testing.T) {
	t.Parallel()
	require.Equal(t, time.UTC, clock.Real{}.Now().Location())
}

func TestSleepAdvancesAFakeAndWaitsOnTheRealClock(t *testing.T) {
	start := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	f := clock.NewFake(start)
	require.NoError(t, clock.Sleep(context.Background(), f, 3*time.Second))
	require.Equal(t, start.Add(3*time.Second), f.Now())

	began := time.Now()
	require.NoError(t, clock.Sleep(context.Background(), clock.Real{}, 20*time.Millisecond))
	require.GreaterOrEqual(t, time.Since(began), 20*time.Millisecond)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, clock.Sleep(ctx, clock.Real{}, time.Hour), context.Canceled)
	require.ErrorIs(t, clock.Sleep(ctx, f, time.Second), context.Canceled)
	require.Equal(t, start.Add(3*time.Second), f.Now(), "a cancelled sleep does not advance the fake")
}

func TestStampIsUTCToTheMicrosecond(t *testing.T) {
	t.Parallel()
	berlin := time.FixedZone("CET", 3600)
	f := clock.NewFake(time.Date(2026, 12, 2, 8, 0, 0, 123456789, berlin))
	got := clock.Stamp(f)
	require.Equal(t, time.Date(2026, 12, 2, 7, 0, 0, 123456000, time.UTC), got)
	require.Equal(t, time.UTC, got.Location())
}
