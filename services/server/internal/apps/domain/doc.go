// Package domain holds the pure rules of the apps module: manifests, app
// scopes and their validation (manifest.go), installation states, granted
// scopes and event subscriptions (installation.go), and for outgoing
// webhooks the subscription states and targets (subscription.go), the
// outcome, backoff and deadline of a delivery attempt (delivery.go), and the
// Standard Webhooks signatures with the HMAC key derivation (signature.go).
//
// Everything here is a function of its arguments: no I/O, no clock, no
// randomness of its own (callers pass now and a random source), and no import
// beyond the standard library, internal/kernel and the module's own port
// internal/apps. Limits and windows arrive as arguments named after their
// configuration keys. The use cases in internal/apps/app apply these rules
// inside their units of work.
package domain
