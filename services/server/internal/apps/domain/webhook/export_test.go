package webhook

import "crypto/ed25519"

// The helpers below serve the tests only (D-CL-16).

// Ed25519Signature returns the v1a signature of content with key (crypto/
// ed25519, pure Ed25519 without prehash), as the instance's signer makes
// it; the tests sign their vectors with it.
func Ed25519Signature(key ed25519.PrivateKey, content []byte) []byte {
	return ed25519.Sign(key, content)
}

// SubscriptionEvents returns every event NextSubscriptionState knows, in
// declaration order, so a test can check that the table covers each.
func SubscriptionEvents() []SubscriptionEvent {
	return []SubscriptionEvent{
		EventOwnerPause, EventOwnerResume, EventGone, EventMaxConsecutiveFailures,
		EventRetryMaxAge, EventGap, EventMaxPending, EventUninstall,
	}
}
