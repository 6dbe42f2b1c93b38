package domain

import "slices"

// SubscribableEventTypes returns the event types an app subscription may
// name, sorted, as a fresh slice, for the contract test against the webhooks
// of api/openapi.yaml and the receivers of actions.yaml. Production asks
// AppSubscribable, so the list lives in a test file (D-CL-16).
func SubscribableEventTypes() []string { return slices.Clone(subscribable) }

// AppScopes returns the grantable app scopes in catalogue order, as a fresh
// slice, for the tests that compare them with the action catalogue.
// Production asks ValidScope, so the list lives in a test file (D-CL-16).
func AppScopes() []string { return slices.Clone(appScopes) }
