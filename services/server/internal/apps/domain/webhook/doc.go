// Package webhook holds the pure rules of outgoing webhooks once a
// subscription exists: its state machine and the changes an owner or the
// system makes to it (subscription.go, standing.go, update.go), the outcome,
// backoff, deadline and settlement of a delivery attempt (delivery.go,
// settle.go), and the Standard Webhooks signatures with the HMAC key
// derivation (signature.go).
//
// The rules of admission (which addresses an app may name, which event
// types it may subscribe to, the installation it belongs to) are those of
// the parent package internal/apps/domain, which this package may use and
// which never uses this one (ADR 0072).
//
// A rule returns the change it decides (Standing.Apply, PlanUpdate,
// Settle); the use cases of internal/apps/app persist it, audit it and log
// it. Everything here is a function of its arguments: no I/O, no clock, no
// randomness of its own, and no import beyond the standard library,
// internal/kernel, the port internal/apps and internal/apps/domain.
package webhook
