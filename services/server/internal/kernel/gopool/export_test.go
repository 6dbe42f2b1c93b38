package gopool

// Idle is the count of goroutines that wait for a function.
func Idle() int { return int(idle.Load()) }

// Started is the count of goroutines Go started.
func Started() int { return int(started.Load()) }
