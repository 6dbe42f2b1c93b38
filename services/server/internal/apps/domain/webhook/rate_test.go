package webhook_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/errs"
)

var rateStart = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return rateStart.Add(time.Duration(ms) * time.Millisecond) }

func TestRateWindowOpensAtOnceBelowTheLimit(t *testing.T) {
	w := webhook.RateWindow{at(0), at(10)}
	require.True(t, w.OpensAt(3).IsZero(), "two of three attempts used")
	require.True(t, w.OpensAt(0).IsZero(), "no limit")
	require.True(t, webhook.RateWindow(nil).OpensAt(1).IsZero(), "nothing remembered")
}

func TestRateWindowOpensASecondAfterTheLimitThLatestEnd(t *testing.T) {
	w := webhook.RateWindow{at(0), at(10), at(20)}
	require.Equal(t, at(1010), w.OpensAt(2))
	require.Equal(t, at(1000), w.OpensAt(3))
	require.Equal(t, at(1020), w.OpensAt(1))
}

func TestRateWindowEndedKeepsTheLatestLimitEndsInOrder(t *testing.T) {
	w := webhook.RateWindow{at(0), at(10), at(20)}
	next := w.Ended(at(30), 3)
	require.Equal(t, webhook.RateWindow{at(10), at(20), at(30)}, next)
	require.Equal(t, webhook.RateWindow{at(0), at(10), at(20)}, w, "the window it was asked of stays")

	// An end stamped by a clock behind the others sorts into place.
	require.Equal(t, webhook.RateWindow{at(10), at(15), at(20)}, w.Ended(at(15), 3))
	// A lowered limit drops the older ends at the next end.
	require.Equal(t, webhook.RateWindow{at(40)}, w.Ended(at(40), 1))
	require.Nil(t, w.Ended(at(40), 0), "no limit remembers nothing")
}

// TestRateWindowNeverLetsMoreThanTheLimitIntoASecond plays a subscription
// whose attempts each end d after their claim, claiming whenever the
// window opens, and checks every second of the claims.
func TestRateWindowNeverLetsMoreThanTheLimitIntoASecond(t *testing.T) {
	for _, limit := range []int{1, 2, 5, 50} {
		for _, d := range []time.Duration{0, time.Millisecond, 37 * time.Millisecond, 400 * time.Millisecond} {
			var (
				w      webhook.RateWindow
				claims []time.Time
				now    = rateStart
			)
			for range 200 {
				if open := w.OpensAt(limit); now.Before(open) {
					now = open
				}
				claims = append(claims, now)
				now = now.Add(d)
				w = w.Ended(now, limit)
			}
			for i := limit; i < len(claims); i++ {
				// The request of claim i-limit arrived before its end,
				// which is before claims[i-limit+1]: so limit + 1
				// requests never share a second when claims[i] is more
				// than a second after the end of claim i-limit.
				endOfFirst := claims[i-limit].Add(d)
				require.GreaterOrEqual(t, claims[i].Sub(endOfFirst), time.Second,
					"limit %d, attempts of %s: claim %d", limit, d, i)
			}
			if d == 0 {
				// An answer at once reaches the limit.
				span := claims[len(claims)-1].Sub(claims[0])
				require.InDelta(t, float64(len(claims)-1)/float64(limit), span.Seconds(), 1.0)
			}
		}
	}
}

func TestValidateMaxPerSecondBoundsTheLimit(t *testing.T) {
	for _, n := range []int{0, 1, 100} {
		require.NoError(t, webhook.ValidateMaxPerSecond(n, 100), "%d", n)
	}
	for n, item := range map[int]string{-1: "minimum", 101: "maximum"} {
		e, ok := errs.As(webhook.ValidateMaxPerSecond(n, 100))
		require.True(t, ok, "%d", n)
		require.Equal(t, errs.CodeValidationFailed, e.Code)
		require.Equal(t, []errs.FieldError{errs.Field("/max_per_second", item)}, e.Fields)
	}
}
