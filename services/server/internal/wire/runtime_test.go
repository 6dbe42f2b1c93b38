package wire

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestApplyRuntimeSetsTheCollectorUnlessTheEnvironmentDoes (D-RT-10): the
// keys process.gc_percent and process.memory_limit reach the runtime's
// setters; GOGC and GOMEMLIMIT in the environment win, and a limit of 0
// sets none.
func TestApplyRuntimeSetsTheCollectorUnlessTheEnvironmentDoes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		env           map[string]string
		cfg           ProcessConfig
		percent       int
		limit         int64
		setsPercent   bool
		setsTheLimits bool
	}{
		{name: "both keys reach the runtime", cfg: ProcessConfig{GCPercent: 400, MemoryLimit: 256 << 20},
			percent: 400, limit: 256 << 20, setsPercent: true, setsTheLimits: true},
		{name: "a limit of 0 sets none", cfg: ProcessConfig{GCPercent: 400}, percent: 400, setsPercent: true},
		{name: "the environment wins", env: map[string]string{"GOGC": "100", "GOMEMLIMIT": "1GiB"},
			cfg: ProcessConfig{GCPercent: 400, MemoryLimit: 256 << 20}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var percent int
			var limit int64
			var setPercent, setLimit bool
			applyRuntime(tc.cfg, func(k string) string { return tc.env[k] },
				func(p int) int { percent, setPercent = p, true; return 100 },
				func(l int64) int64 { limit, setLimit = l, true; return 0 })
			require.Equal(t, tc.setsPercent, setPercent)
			require.Equal(t, tc.percent, percent)
			require.Equal(t, tc.setsTheLimits, setLimit)
			require.Equal(t, tc.limit, limit)
		})
	}
}
