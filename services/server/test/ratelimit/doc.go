// Package ratelimit tests a subscription's max_per_second (ADR 0081) in
// the shape operators run it: one process of role api and two of role
// worker, each assembled like `bothy serve` with its own pools, job
// runtime and consumers, on one database, delivering to a TLS receiver
// that notes when each request arrived.
package ratelimit
