// Package gopool runs short functions on goroutines that outlive them, so
// that a function starts on a stack its forerunners already grew (ADR
// 0109).
//
// A goroutine starts with a small stack and, each time a call goes deeper
// than the stack holds, copies it to one twice as large. The short-lived
// goroutines of a worker go deep (a delivery run through the use case,
// pgx and the TLS client; the statements of a unit of work gathered from
// several functions), and a CPU profile at 200 messages/s found 9 % of
// the worker's CPU in those copies. A goroutine of this package takes the
// next function once its function returned; the garbage collector shrinks
// the stack of one that waits long, so the memory follows the load.
//
// Goroutines that wait are kept for the process's life: at most as many
// as functions ran at the same time, each waiting on a stack the
// collector shrinks.
package gopool

import "sync/atomic"

// next hands a function to a goroutine that waits for one. Unbuffered: a
// send succeeds only while a goroutine waits, so Go never queues a
// function behind another.
var next = make(chan func())

// idle counts the goroutines that wait on next, started those Go
// started; for the tests.
var idle, started atomic.Int64

// Go runs fn on a goroutine of its own, as the go statement does: fn runs
// at once and concurrently with its caller and every other function
// given to Go. The goroutine is one that waits for a function when there
// is one, else a new one that waits for the next function once fn
// returned. A panic in fn ends the process, as in a goroutine of the go
// statement; recover it in fn.
func Go(fn func()) {
	select {
	case next <- fn:
	default:
		started.Add(1)
		go serve(fn)
	}
}

// serve runs fn, then every function Go hands it, one after the other.
func serve(fn func()) {
	for {
		// fn is not live while the goroutine waits (Go's stack maps are
		// precise), so what it held does not wait with it.
		fn()
		idle.Add(1)
		fn = <-next
		idle.Add(-1)
	}
}
