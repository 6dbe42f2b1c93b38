// Package egress is the only way bothy makes outgoing HTTP requests (webhook
// deliveries first). It answers threat T-NW-01, server-side request forgery
// and DNS rebinding (SEC-NET-1 to SEC-NET-5): an app owner chooses the address
// a webhook goes to, so without a guard a subscription could make the worker
// call the cloud metadata service, the database or any service on the private
// network, and a DNS name that first resolves to a public address and then to
// a private one could slip past a check made at subscription time.
//
// A Client holds one fixed policy, built by New from Options:
//
//   - The URL is checked before anything else: scheme in Options.Schemes
//     (https only for webhooks), no user info, no fragment, a valid host and
//     port, no Host header for another name, and host:port in Options.Hosts
//     (webhook.allowed_hosts for the webhook client).
//   - Name resolution happens in the dialer, through Deps.Resolver, once per
//     connection. Every resolved address is checked with Permitted; the
//     dialer connects only to the checked IP literals, so there is no second
//     lookup a rebinding DNS server could answer differently. A net.Dialer
//     Control hook checks the socket's real destination again before connect.
//   - Non-public unicast addresses (loopback, RFC 1918, link-local, ULA,
//     CGNAT, documentation, reserved, ...) pass only when Options.Private
//     (egress.allowed_hosts) has an entry with allow_private for the same
//     host:port. The host must still be in Options.Hosts. The unspecified
//     address, 0.0.0.0/8, multicast and broadcast never pass.
//   - No proxy (a proxy would connect past the guard), TLS 1.2 at least with
//     the requested host as server name, redirects never followed
//     (RedirectNever), Options.Timeout over the whole exchange, at most
//     Options.MaxResponseBytes of a response body read.
//
// A refused request returns a *BlockedError (wrapping ErrBlocked) with one of
// the Reason constants, increments bothy.egress.blocked (attributes
// bothy.egress.purpose and bothy.reason) and logs "egress blocked" at warn
// with server.address and bothy.reason; nothing else about the request is
// recorded. Every other failure is a *TransportError whose message names only
// the host.
//
// The client pools connections per host:port. Because its policy cannot
// change after New and each purpose has its own client, a pooled connection
// is only ever reused under the policy it was checked against.
package egress
