package wire

import (
	"testing"

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
				getenv:         func(k string) string { return tc.env[k] },
				setGCPercent:   func(p int) int { percent, setGC = p, true; return 100 },
				setMemoryLimit: func(l int64) int64 { limit, setLimit = l, true; return 0 },
				setMaxProcs:    func(n int) int { procs, setProcs = n, true; return 2 },
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
