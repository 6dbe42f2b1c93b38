// Package egress is the only way bothy makes outgoing HTTP requests (webhook
// deliveries first). It answers threat T-NW-01 (server-side request forgery
// and DNS rebinding): an app owner chooses the address a webhook goes to, so
// without a guard a subscription could make the worker call the cloud
// metadata service, the database or any service on the private network.
//
// Permitted is the address guard: it decides which resolved IP addresses a
// connection may reach.
package egress
