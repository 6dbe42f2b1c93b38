// Package domain holds the pure rules of the apps platform: what an app is
// and may declare, be granted and subscribe to. Manifests, app scopes and
// their validation (manifest.go); installation states, granted scopes and
// event subscriptions (installation.go); the HTTPS addresses an app may be
// reached at, checked against webhook.allowed_hosts (target.go); and the
// event types an app may subscribe to (event_types.go).
//
// How webhook subscriptions and deliveries behave once they exist (states,
// outcomes, timing, signatures) is the subpackage webhook, which builds on
// these rules and never the reverse (ADR 0072).
//
// Everything here is a function of its arguments: no I/O, no clock, no
// randomness of its own (callers pass now and a random source), and no import
// beyond the standard library, internal/kernel and the module's own port
// internal/apps. Limits and windows arrive as arguments named after their
// configuration keys. The use cases in internal/apps/app apply these rules
// inside their units of work.
package domain
