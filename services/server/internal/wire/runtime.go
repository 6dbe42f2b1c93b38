package wire

import (
	"os"
	"runtime"
	"runtime/debug"
)

// ApplyRuntime sets the Go runtime of this process from
// process.gc_percent and process.memory_limit (the garbage collector,
// D-RT-10) and process.max_procs (the processors it runs goroutines on,
// D-RT-11), except where the environment sets GOGC, GOMEMLIMIT or
// GOMAXPROCS, which the runtime read at its start and which then win.
// `bothy serve` calls it once before it assembles the process; it changes
// the whole process, so nothing else (tests, the demo, the benchmark)
// does.
func ApplyRuntime(cfg *Config) {
	applyRuntime(cfg.Process, runtimeSetters{
		getenv: os.Getenv, setGCPercent: debug.SetGCPercent,
		setMemoryLimit: debug.SetMemoryLimit, setMaxProcs: runtime.GOMAXPROCS,
	})
}

// runtimeSetters are the environment and the runtime's setters that
// applyRuntime uses; tests pass their own.
type runtimeSetters struct {
	getenv         func(string) string
	setGCPercent   func(int) int
	setMemoryLimit func(int64) int64
	setMaxProcs    func(int) int
}

// applyRuntime is ApplyRuntime with the environment and the setters of s.
func applyRuntime(p ProcessConfig, s runtimeSetters) {
	if s.getenv("GOGC") == "" {
		s.setGCPercent(p.GCPercent)
	}
	if s.getenv("GOMEMLIMIT") == "" && p.MemoryLimit > 0 {
		s.setMemoryLimit(p.MemoryLimit)
	}
	if s.getenv("GOMAXPROCS") == "" && p.MaxProcs > 0 {
		s.setMaxProcs(p.MaxProcs)
	}
}
