package wire

import (
	"os"
	"runtime/debug"
)

// ApplyRuntime sets the garbage collector of the Go runtime of this
// process from process.gc_percent and process.memory_limit (D-RT-10),
// except where the environment sets GOGC or GOMEMLIMIT, which the runtime
// read at its start and which then win. `bothy serve` calls it once before
// it assembles the process; it changes the whole process, so nothing else
// (tests, the demo, the benchmark) does.
func ApplyRuntime(cfg *Config) {
	applyRuntime(cfg.Process, os.Getenv, debug.SetGCPercent, debug.SetMemoryLimit)
}

// applyRuntime is ApplyRuntime with the environment and the runtime's
// setters passed in.
func applyRuntime(p ProcessConfig, getenv func(string) string, setGCPercent func(int) int, setMemoryLimit func(int64) int64) {
	if getenv("GOGC") == "" {
		setGCPercent(p.GCPercent)
	}
	if getenv("GOMEMLIMIT") == "" && p.MemoryLimit > 0 {
		setMemoryLimit(p.MemoryLimit)
	}
}
