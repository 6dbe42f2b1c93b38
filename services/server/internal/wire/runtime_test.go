package wire

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestApplyRuntimeSetsTheRuntimeUnlessTheEnvironmentDoes (D-RT-10,
// D-RT-11): the keys process.gc_percent, process.memory_limit and
// process.max_procs reach the runtime's setters; GOGC, GOMEMLIMIT and
// GOMAXPROCS in the environment win, and a limit or a number of
// processors of 0 sets none.
func TestApplyRuntimeSetsTheRuntimeUnlessTheEnvironmentDoes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		env      map[string]string
		cfg      ProcessConfig
		percent  int
		limit    int64
		procs    int
		setsGC   bool
		setLimit bool
		setProcs bool
	}{
		{name: "every key reaches the runtime", cfg: ProcessConfig{GCPercent: 400, MemoryLimit: 256 << 20, MaxProcs: 1},
			percent: 400, limit: 256 << 20, procs: 1, setsGC: true, setLimit: true, setProcs: true},
		{name: "a limit and processors of 0 set none", cfg: ProcessConfig{GCPercent: 400}, percent: 400, setsGC: true},
		{name: "the environment wins", env: map[string]string{"GOGC": "100", "GOMEMLIMIT": "1GiB", "GOMAXPROCS": "2"},
			cfg: ProcessConfig{GCPercent: 400, MemoryLimit: 256 << 20, MaxProcs: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var percent, procs int
			var limit int64
			var setGC, setLimit, setProcs bool
			applyRuntime(tc.cfg, runtimeSetters{
				getenv:          func(k string) string { return tc.env[k] },
				setGCPercent:    func(p int) int { percent, setGC = p, true; return 100 },
				keepMemoryLimit: func(l int64) { limit, setLimit = l, true },
				setMaxProcs:     func(n int) int { procs, setProcs = n, true; return 2 },
			})
			require.Equal(t, tc.setsGC, setGC)
			require.Equal(t, tc.percent, percent)
			require.Equal(t, tc.setLimit, setLimit)
			require.Equal(t, tc.limit, limit)
			require.Equal(t, tc.setProcs, setProcs)
			require.Equal(t, tc.procs, procs)
		})
	}
}

// TestMemoryLimitAfterCycleKeepsTwiceTheLiveHeap (D-RT-15): after a
// collection the limit is the configured one, or, where that would set
// the collector's goal below twice the live heap (Go's default
// process.gc_percent of 100), as much more as the heap, the memory
// beside the heap and the runtime's headroom need.
func TestMemoryLimitAfterCycleKeepsTwiceTheLiveHeap(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	small := cycleMemory{live: 20 * mib, total: 120 * mib, released: 10 * mib, objects: 60 * mib, free: 30 * mib}
	require.Equal(t, int64(160*mib), memoryLimitAfterCycle(160*mib, small), "a small live heap keeps the configured limit")
	large := cycleMemory{live: 100 * mib, total: 300 * mib, released: 10 * mib, objects: 220 * mib, free: 50 * mib}
	got := memoryLimitAfterCycle(160*mib, large)
	// Beside the heap 300-10-220-50 = 20 MiB; the goal twice 100 MiB, after Go
	// takes its headroom of 3 % and at least 1 MiB from the limit.
	goal := got - 20*mib
	goal -= max(goal*3/100, mib)
	require.GreaterOrEqual(t, goal, int64(200*mib), "the goal stays at twice the live heap: limit %d MiB", got/mib)
	require.Less(t, got, int64(230*mib), "and not much more: limit %d MiB", got/mib)
}

// TestKeepMemoryLimitFollowsTheLiveHeap (D-RT-15): with the runtime itself,
// a live heap of 64 MiB more under a configured limit of 8 MiB raises the
// limit to at least twice that heap after a collection, instead of leaving
// the collector to run without pause; once the 64 MiB are garbage the
// limit falls back by about twice as much. Not parallel: it sets the
// memory limit of the whole test process.
func TestKeepMemoryLimitFollowsTheLiveHeap(t *testing.T) {
	const mib = 1 << 20
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	stop := keepMemoryLimit(8*mib, debug.SetMemoryLimit)
	t.Cleanup(stop)
	require.Equal(t, int64(8*mib), debug.SetMemoryLimit(-1), "the configured limit is set at once")
	var risen, fallen int64
	func() { // the 64 MiB are garbage once it returns
		live := make([][]byte, 64)
		for i := range live {
			live[i] = make([]byte, mib)
			live[i][0] = 1
		}
		assert.Eventually(t, func() bool {
			runtime.GC()
			risen = debug.SetMemoryLimit(-1)
			return risen >= 128*mib
		}, 10*time.Second, 10*time.Millisecond)
		require.GreaterOrEqual(t, risen, int64(128*mib), "the limit rises to twice the live heap: %d MiB", risen/mib)
		runtime.KeepAlive(live)
	}()
	assert.Eventually(t, func() bool {
		runtime.GC()
		fallen = debug.SetMemoryLimit(-1)
		return fallen <= risen-100*mib
	}, 10*time.Second, 10*time.Millisecond)
	require.LessOrEqual(t, fallen, risen-100*mib, "the limit falls back once the heap is garbage: %d MiB from %d MiB", fallen/mib, risen/mib)
}
