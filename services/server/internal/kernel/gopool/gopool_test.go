package gopool_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/gopool"
)

func TestGoRunsEveryFunctionAtOnce(t *testing.T) {
	// Every function runs at the same time as the others, as with the go
	// statement: none waits for another to return.
	const n = 50
	var started, release sync.WaitGroup
	started.Add(n)
	release.Add(1)
	var done sync.WaitGroup
	done.Add(n)
	// From a goroutine of the test's own, so that a Go that waits shows
	// as a failure below and not as a test that hangs.
	go func() {
		for range n {
			gopool.Go(func() {
				defer done.Done()
				started.Done()
				release.Wait()
			})
		}
	}()
	allStarted := make(chan struct{})
	go func() {
		started.Wait()
		close(allStarted)
	}()
	select {
	case <-allStarted:
	case <-time.After(10 * time.Second):
		// A pool that makes a function wait for another to return ends
		// here.
		t.Fatal("not every function started while the others ran")
	}
	release.Done()
	done.Wait()
}

func TestGoRunsTheNextFunctionOnAnIdleGoroutine(t *testing.T) {
	// One function after the other: once one returned, its goroutine
	// takes the next, so almost none of them needs a new goroutine (a
	// function given while the last one's goroutine is between its
	// function and its wait gets a new one).
	ran := make(chan struct{})
	before := gopool.Started()
	const n = 20
	for range n {
		gopool.Go(func() { ran <- struct{}{} })
		<-ran
		require.Eventually(t, func() bool { return gopool.Idle() > 0 }, 5*time.Second, time.Millisecond,
			"the goroutine of a function that returned waits for the next")
	}
	require.Less(t, gopool.Started()-before, n/2, "most functions ran on a goroutine that waited")
}

// deep uses about n KiB of stack before it returns.
//
//go:noinline
func deep(n int) byte {
	var pad [1024]byte
	pad[n%1024] = byte(n)
	if n == 0 {
		return pad[0]
	}
	return deep(n-1) + pad[n%1024]
}

// benchmarkDeep starts b.N functions that each use 64 KiB of stack, one
// at a time, with start: the cost of a goroutine whose stack grows to
// what a delivery run or a gathered statement needs.
func benchmarkDeep(b *testing.B, start func(func())) {
	done := make(chan struct{})
	for b.Loop() {
		start(func() {
			deep(64)
			done <- struct{}{}
		})
		<-done
	}
}

func BenchmarkDeepStackGoStatement(b *testing.B) {
	benchmarkDeep(b, func(fn func()) { go fn() })
}

func BenchmarkDeepStackGopool(b *testing.B) {
	benchmarkDeep(b, gopool.Go)
}
