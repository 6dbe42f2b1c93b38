package webhookstest

import (
	"strings"
	"time"
)

// MostWithinASecond returns the most of times (in order) that lie within
// any one second of the wall clock. It reads the wall clock, not Go's
// monotonic reading, because that is the clock a subscription's rate window
// is kept in (ADR 0081): the ends it counts are timestamps the workers
// write to the database, the only clock that processes on different hosts
// share, and a step of the wall clock (a virtual machine restored from a
// snapshot, a time daemon stepping) moves the window with it (D-M2-26-71).
func MostWithinASecond(times []time.Time) int {
	most := 0
	for i := range times {
		n := 0
		for j := i; j < len(times) && times[j].Round(0).Sub(times[i].Round(0)) < time.Second; j++ {
			n++
		}
		most = max(most, n)
	}
	return most
}

// Offsets lists times relative to the first, for a failure message: the
// wall clock's offset, and the monotonic one after it where the two differ
// by a millisecond or more, so a failure shows whether the wall clock
// stepped.
func Offsets(times []time.Time) string {
	parts := make([]string, 0, len(times))
	for _, at := range times {
		wall := at.Round(0).Sub(times[0].Round(0))
		part := wall.Round(time.Millisecond).String()
		if mono := at.Sub(times[0]); (wall - mono).Abs() >= time.Millisecond {
			part += " (monotonic " + mono.Round(time.Millisecond).String() + ")"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, " ")
}
