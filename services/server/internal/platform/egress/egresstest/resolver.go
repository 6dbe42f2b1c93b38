// Package egresstest helps tests that send requests through the egress client
// (internal/platform/egress): a fake DNS resolver, a TLS receiver on 127.0.0.1
// with a certificate for example.com names, a reader of the
// bothy.egress.blocked counter and a recorder of log lines.
//
// A webhook integration test reaches its receiver like this:
//
//	srv := egresstest.NewTLSServer(t, handler)             // hooks.example.com
//	res := egresstest.NewResolver(map[string][]netip.Addr{
//		"hooks.example.com": {netip.MustParseAddr("127.0.0.1")},
//	})
//	hosts, _ := hostlist.Parse([]string{fmt.Sprintf("hooks.example.com:%d", srv.Port)})
//	private, _ := hostlist.Parse([]string{fmt.Sprintf("hooks.example.com:%d;allow_private", srv.Port)})
//	// egress.Options{Hosts: egress.NewHostPolicy(hosts), Private: private, RootCAs: srv.RootCAs, ...}
//	// egress.Deps{Resolver: res, ...}
//
// The package does not import egress, so the egress package's own internal
// tests may use it too.
package egresstest

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"sync"

	"bothy/server/internal/kernel/hostlist"
)

// Resolver is a fake DNS resolver: it answers from a fixed map of host names
// to addresses and fails with a not-found *net.DNSError for any other host. It
// satisfies egress.Resolver and is safe for concurrent use.
type Resolver struct {
	mu      sync.Mutex
	hosts   map[string][]netip.Addr
	lookups map[string]int
}

// NewResolver returns a resolver answering hosts. Host names are compared in
// canonical form (lower case, no trailing dot); the map is copied.
func NewResolver(hosts map[string][]netip.Addr) *Resolver {
	r := &Resolver{hosts: make(map[string][]netip.Addr, len(hosts)), lookups: map[string]int{}}
	for h, addrs := range hosts {
		r.hosts[hostlist.Canonical(h)] = slices.Clone(addrs)
	}
	return r
}

// Set replaces the answer for host, for example to simulate a DNS record
// that changes between two requests (rebinding).
func (r *Resolver) Set(host string, addrs ...netip.Addr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hosts[hostlist.Canonical(host)] = slices.Clone(addrs)
}

// LookupNetIP returns the configured addresses of host in their configured
// order, filtered by network ("ip" for all, "ip4" or "ip6"). It returns the
// context's error when ctx is done, and a *net.DNSError with IsNotFound for an
// unknown host or an empty answer.
func (r *Resolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h := hostlist.Canonical(host)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups[h]++
	var out []netip.Addr
	for _, a := range r.hosts[h] {
		switch {
		case network == "ip4" && !a.Unmap().Is4(),
			network == "ip6" && a.Unmap().Is4():
			continue
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: h, IsNotFound: true}
	}
	return out, nil
}

// Lookups returns how many times host was looked up.
func (r *Resolver) Lookups(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups[hostlist.Canonical(host)]
}
