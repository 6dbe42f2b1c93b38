package egress

import (
	"context"
	"crypto/x509"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"time"

	"go.opentelemetry.io/otel/metric"

	"bothy/server/internal/kernel/hostlist"
)

// HostPolicy is the fixed set of host:port pairs a client may request. Build
// it with NewHostPolicy; the zero value allows nothing.
type HostPolicy struct {
	list hostlist.List
}

// NewHostPolicy returns a policy allowing exactly the host:port pairs of
// list (hostlist rules: canonical host, port 443 when the entry names none).
// The list is copied, so later changes to it do not reach a client. The
// entries' allow_private flags play no part here (see Options.Private).
func NewHostPolicy(list hostlist.List) HostPolicy {
	return HostPolicy{list: slices.Clone(list)}
}

// Allows reports whether host (any case, optional trailing dot) on port is
// in the policy.
func (p HostPolicy) Allows(host string, port int) bool {
	_, ok := p.list.Match(host, port)
	return ok
}

// RedirectMode says what the client does with a 3xx response.
type RedirectMode int

// RedirectNever returns every 3xx response unchanged and never follows it:
// a redirect would lead to a target that no policy check has seen. It is the
// zero value and the only mode.
const RedirectNever RedirectMode = 0

// Options configures one client. A client serves one purpose, and its
// policy is fixed at construction: wire builds one client per purpose, so a
// pooled connection never outlives the policy it was opened under.
type Options struct {
	// Purpose names the client in telemetry (bothy.egress.purpose), for
	// example "webhook". Required.
	Purpose string
	// Hosts lists the host:port pairs that may be requested at all: for the
	// webhook client webhook.allowed_hosts, for other purposes
	// egress.allowed_hosts.
	Hosts HostPolicy
	// Private is egress.allowed_hosts. Only its entries with allow_private
	// count: such an entry lets its host:port resolve to non-public unicast
	// addresses (loopback, RFC 1918, link-local, ULA, ...). A request must
	// first be allowed by Hosts; Private never adds a host, it only widens
	// the addresses an allowed host may resolve to. The allow_private flag on
	// an entry of Hosts has no effect.
	Private hostlist.List
	// Schemes are the URL schemes allowed, of "https" and "http". Empty means
	// https only, which is what webhooks use.
	Schemes []string
	// Redirects is the redirect mode; RedirectNever (the zero value) is the
	// only one.
	Redirects RedirectMode
	// Timeout bounds the whole exchange: name resolution, connect, TLS,
	// request, response headers and the bounded body read. It is
	// webhook.delivery_timeout for the webhook client and egress.timeout for
	// others. Required (above zero).
	Timeout time.Duration
	// MaxResponseBytes is egress.max_response_bytes: the client reads at
	// most this many bytes of a response body and discards the rest. It also
	// bounds the response headers. Required (above zero).
	MaxResponseBytes int64
	// MaxIdleConnsPerHost is egress.max_idle_conns_per_host: how many idle
	// connections the client keeps per host:port for the next requests.
	// Concurrent requests to one HTTP/1.1 host beyond it each open a new
	// connection, with a TLS handshake, when they find none idle. Required
	// (above zero).
	MaxIdleConnsPerHost int
	// IdleConnTimeout is egress.idle_conn_timeout: a pooled connection
	// unused for this long is closed, so the pool holds only the hosts
	// that are in use. Required (above zero).
	IdleConnTimeout time.Duration
	// RootCAs verifies receiver certificates; nil means the system pool.
	// wire adds egress.extra_ca_file; tests pass the pool of their TLS server.
	RootCAs *x509.CertPool
}

// Resolver looks up the addresses of a host name. *net.Resolver satisfies
// it; tests use egresstest.Resolver.
type Resolver interface {
	// LookupNetIP returns the addresses of host for network "ip", "ip4" or
	// "ip6".
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

var _ Resolver = (*net.Resolver)(nil)

// Deps are the collaborators of a client.
type Deps struct {
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
	// Meter records bothy.egress.blocked. Required.
	Meter metric.MeterProvider
	// Logger receives the "egress blocked" warning. Required.
	Logger *slog.Logger
}
