package domain

import (
	"slices"

	"bothy/server/internal/kernel/authorize"
)

// deferred lists the actions whose requirements need facts that a later
// change brings (docs/spec/07-permissions.md 4.2 "Requirements that need
// facts of a later milestone"). They are in the catalogue, so routes and
// audit entries may name them, but deciding one is a wiring bug: Decide
// returns ErrDeferred. The change that delivers the facts removes the entry
// and adds the requirement (see the README of internal/authz). The list is
// empty since webhook_out.deliver got its requirement (AtomDelivery,
// docs/spec/07-permissions.md 8.1).
var deferred = map[authorize.Action]string{}

// Deferred returns the deferred actions sorted by id.
func Deferred() []authorize.Action {
	out := make([]authorize.Action, 0, len(deferred))
	for a := range deferred {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// IsDeferred reports whether a is deferred.
func IsDeferred(a authorize.Action) bool {
	_, ok := deferred[a]
	return ok
}

// DeferredIDs returns Deferred as strings: the deferred actions of
// api.VerifyRegistrations, so an operation naming one cannot be enabled.
func DeferredIDs() []string {
	var out []string
	for _, a := range Deferred() {
		out = append(out, string(a))
	}
	return out
}
