package wire

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// ApplyRuntime sets the Go runtime of this process from
// process.gc_percent and process.memory_limit (the garbage collector,
// D-RT-10, D-RT-15) and process.max_procs (the processors it runs
// goroutines on, D-RT-11), except where the environment sets GOGC,
// GOMEMLIMIT or GOMAXPROCS, which the runtime read at its start and which
// then win. `bothy serve` calls it once before it assembles the process;
// it changes the whole process, so nothing else (tests, the demo, the
// benchmark) does.
func ApplyRuntime(cfg *Config) {
	applyRuntime(cfg.Process, runtimeSetters{
		getenv: os.Getenv, setGCPercent: debug.SetGCPercent,
		keepMemoryLimit: func(limit int64) { keepMemoryLimit(limit, debug.SetMemoryLimit) },
		setMaxProcs:     runtime.GOMAXPROCS,
	})
}

// runtimeSetters are the environment and the runtime's setters that
// applyRuntime uses; tests pass their own.
type runtimeSetters struct {
	getenv          func(string) string
	setGCPercent    func(int) int
	keepMemoryLimit func(int64)
	setMaxProcs     func(int) int
}

// applyRuntime is ApplyRuntime with the environment and the setters of s.
func applyRuntime(p ProcessConfig, s runtimeSetters) {
	if s.getenv("GOGC") == "" {
		s.setGCPercent(p.GCPercent)
	}
	if s.getenv("GOMEMLIMIT") == "" && p.MemoryLimit > 0 {
		s.keepMemoryLimit(p.MemoryLimit)
	}
	if s.getenv("GOMAXPROCS") == "" && p.MaxProcs > 0 {
		s.setMaxProcs(p.MaxProcs)
	}
}

// floorGCPercent is how much the heap may always grow over its live part
// before a collection, whatever the memory limit: Go's own default GOGC.
// A soft limit below the live heap would otherwise make the collector run
// without pause (D-RT-15).
const floorGCPercent = 100

// cycleMemory is what the runtime reports of its memory after a
// collection, in bytes, by the names of runtime/metrics.
type cycleMemory struct {
	live     int64 // /gc/heap/live:bytes, what the collection found live
	total    int64 // /memory/classes/total:bytes, all the runtime mapped
	released int64 // /memory/classes/heap/released:bytes, given back to the system
	objects  int64 // /memory/classes/heap/objects:bytes, in objects, live or not yet swept
	free     int64 // /memory/classes/heap/free:bytes, free and not given back
}

// memoryLimitAfterCycle returns the memory limit for the cycle after the
// one m describes: configured, or more where configured would set the
// collector's goal below the live heap grown by floorGCPercent. Go derives
// its goal from the limit by taking off the memory that is not heap (the
// mapped memory that is neither objects nor free) and a headroom of 3 %,
// at least 1 MiB (runtime/mgcpacer.go, memoryLimitHeapGoal); the floor
// adds them back.
func memoryLimitAfterCycle(configured int64, m cycleMemory) int64 {
	beside := max(m.total-m.released-m.objects-m.free, 0)
	goal := m.live + m.live*floorGCPercent/100
	floor := beside + max(goal*100/97, goal+1<<20)
	return max(configured, floor)
}

// memoryLimitKeeper sets the runtime's memory limit after every
// collection to memoryLimitAfterCycle of the configured one.
type memoryLimitKeeper struct {
	configured int64
	set        func(int64) int64
	last       int64
	samples    []metrics.Sample
	mu         sync.Mutex // held by afterCycle and stop, so no limit is set after stop returns
	stopped    bool
}

// cycleMarker is garbage the keeper makes for every collection: its
// cleanup runs after the collection that found it unreachable. 64 bytes
// keep it out of the tiny allocator, whose blocks are freed together.
type cycleMarker [64]byte

// keepMemoryLimit sets the memory limit to limit through set, then after
// every collection to memoryLimitAfterCycle, until the returned stop is
// called (a process never does; tests do).
//
// Parameters: limit is process.memory_limit in bytes, set is
// debug.SetMemoryLimit or a test's.
func keepMemoryLimit(limit int64, set func(int64) int64) (stop func()) {
	k := &memoryLimitKeeper{configured: limit, set: set, last: limit, samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"}, {Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}}
	set(limit)
	k.arm()
	return func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.stopped = true
	}
}

// arm asks the runtime to call afterCycle once the next collection ends.
func (k *memoryLimitKeeper) arm() {
	runtime.AddCleanup(new(cycleMarker), (*memoryLimitKeeper).afterCycle, k)
}

// afterCycle sets the limit for the next cycle and arms the keeper again.
// It runs on a goroutine of the runtime's cleanups, one call at a time:
// the keeper has one marker armed at a time.
func (k *memoryLimitKeeper) afterCycle() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return
	}
	metrics.Read(k.samples)
	v := func(i int) int64 { return int64(k.samples[i].Value.Uint64()) }
	limit := memoryLimitAfterCycle(k.configured, cycleMemory{live: v(0), total: v(1), released: v(2), objects: v(3), free: v(4)})
	if limit != k.last {
		k.set(limit)
		k.last = limit
	}
	k.arm()
}
