// Package webhookverify verifies, at the receiver, the outgoing webhooks of
// a bothy server (docs/api/webhooks.md): the Ed25519 signatures (v1a) with
// the public keys of getWebhookKeys, optionally the HMAC-SHA256
// signatures (v1) with the subscription's whsec_ secret, and the freshness
// of webhook-timestamp. The Standard Webhooks reference libraries verify v1
// only; this package does both, with the standard library alone.
//
// A receiver builds one Verifier and either calls Verify with the headers
// and the raw body of each request or wraps its handler with
// Verifier.Middleware:
//
//	keys, err := webhookverify.NewKeySource("https://chat.example.com", webhookverify.KeySourceOptions{})
//	v, err := webhookverify.New(webhookverify.Options{Keys: keys})
//	http.Handle("POST /bothy/events", v.Middleware(events))
//
// A KeySource fetches getWebhookKeys with the caller's http.Client, keeps
// the keys for the max-age of the answer's Cache-Control, and fetches them
// again when no key verifies a delivery, at most once per
// KeySourceOptions.MinRefetchInterval. Errors wrap the sentinel errors of
// this package (errors.Is); StatusCode maps them to the answer a receiver
// gives.
//
// The package has no dependency outside the standard library and nothing
// of the server: it is its own Go module, versioned with tags
// libraries/go/webhookverify/vX.Y.Z (README.md).
package webhookverify
