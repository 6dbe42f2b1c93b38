package egress

import "net/netip"

// verdict is the address guard's class of an address.
type verdict uint8

// The classes, ordered from most to least permissive so that max combines
// the verdicts of embedded addresses conservatively.
const (
	// verdictPublic: a globally routable unicast address; always allowed.
	verdictPublic verdict = iota
	// verdictPrivate: a unicast address that is not globally routable
	// (loopback, RFC 1918, link-local, ULA, documentation, reserved, ...);
	// allowed only for a host:port with allow_private.
	verdictPrivate
	// verdictNever: an address that is no unicast destination at all
	// (unspecified, this network, multicast, limited broadcast). No operator
	// needs to reach one, and 0.0.0.0 silently reaches the local host on
	// Linux, so even allow_private does not admit it.
	verdictNever
)

// Permitted reports whether the guard lets a connection reach addr. Without
// allowPrivate only globally routable unicast addresses pass; allowPrivate
// (an egress.allowed_hosts entry with allow_private for the host:port) also
// admits loopback, private, link-local and other non-public unicast
// addresses. The unspecified address, 0.0.0.0/8, multicast and the limited
// broadcast address never pass. Addresses that embed an IPv4 address
// (IPv4-mapped, IPv4-compatible, NAT64 64:ff9b::/96, 6to4, Teredo) are judged
// by the IPv4 they lead to, so a refused IPv4 cannot be reached in IPv6
// clothing. An address with a zone is at best private. The zero Addr never
// passes.
func Permitted(addr netip.Addr, allowPrivate bool) bool {
	switch classify(addr) {
	case verdictPublic:
		return true
	case verdictPrivate:
		return allowPrivate
	default:
		return false
	}
}

func classify(a netip.Addr) verdict {
	if !a.IsValid() {
		return verdictNever
	}
	zoned := a.Zone() != ""
	a = a.WithZone("")
	v := classify6(a)
	if a.Is4() {
		v = classify4(a)
	}
	if zoned {
		// A zone names a local interface: whatever sits behind it is local.
		v = max(v, verdictPrivate)
	}
	return v
}

// IPv4 ranges of the IANA special-purpose address registry (RFC 6890 and
// successors) that are not globally routable.
var (
	never4 = prefixes(
		"0.0.0.0/8",          // "this network" (RFC 791); 0.0.0.0 reaches the local host
		"224.0.0.0/4",        // multicast (RFC 5771)
		"255.255.255.255/32", // limited broadcast (RFC 919)
	)
	private4 = prefixes(
		"10.0.0.0/8",      // private use (RFC 1918)
		"100.64.0.0/10",   // shared address space, CGNAT (RFC 6598)
		"127.0.0.0/8",     // loopback (RFC 1122)
		"169.254.0.0/16",  // link-local, cloud metadata (RFC 3927)
		"172.16.0.0/12",   // private use (RFC 1918)
		"192.0.0.0/24",    // IETF protocol assignments (RFC 6890)
		"192.0.2.0/24",    // documentation TEST-NET-1 (RFC 5737)
		"192.88.99.0/24",  // deprecated 6to4 relay anycast (RFC 7526)
		"192.168.0.0/16",  // private use (RFC 1918)
		"198.18.0.0/15",   // benchmarking (RFC 2544)
		"198.51.100.0/24", // documentation TEST-NET-2 (RFC 5737)
		"203.0.113.0/24",  // documentation TEST-NET-3 (RFC 5737)
		"240.0.0.0/4",     // reserved (RFC 1112)
	)
)

// IPv6 ranges. Those that embed an IPv4 address are handled in classify6.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96") // well-known NAT64 prefix (RFC 6052)
	sixToFour = netip.MustParsePrefix("2002::/16")    // 6to4 (RFC 3056)
	teredo    = netip.MustParsePrefix("2001::/32")    // Teredo (RFC 4380)
	global6   = netip.MustParsePrefix("2000::/3")     // global unicast space (RFC 4291)
	never6    = prefixes(
		"ff00::/8", // multicast (RFC 4291)
	)
	private6 = prefixes(
		"64:ff9b:1::/48", // local-use NAT64 (RFC 8215): operator-defined layout
		"100::/64",       // discard-only (RFC 6666)
		"2001::/23",      // IETF protocol assignments (RFC 2928), Teredo aside
		"2001:db8::/32",  // documentation (RFC 3849)
		"3fff::/20",      // documentation (RFC 9637)
		"5f00::/16",      // SRv6 SIDs (RFC 9602)
		"fc00::/7",       // unique local (RFC 4193)
		"fe80::/10",      // link-local (RFC 4291)
		"fec0::/10",      // deprecated site-local (RFC 3879)
	)
)

func classify4(a netip.Addr) verdict {
	switch {
	case contains(never4, a):
		return verdictNever
	case contains(private4, a):
		return verdictPrivate
	default:
		return verdictPublic
	}
}

func classify6(a netip.Addr) verdict {
	b := a.As16()
	switch {
	case a.Is4In6():
		// ::ffff:a.b.c.d is a.b.c.d on a dual-stack socket.
		return classify4(a.Unmap())
	case a == netip.IPv6Unspecified():
		return verdictNever
	case a == netip.IPv6Loopback():
		return verdictPrivate
	case isZero(b[:12]):
		// IPv4-compatible ::a.b.c.d (deprecated by RFC 4291): never public.
		return max(verdictPrivate, classify4(v4(b[12:])))
	case nat64.Contains(a):
		// A NAT64 gateway forwards to the embedded IPv4.
		return classify4(v4(b[12:]))
	case sixToFour.Contains(a):
		// A 6to4 relay forwards to the IPv4 in bits 16 to 47.
		return classify4(v4(b[2:6]))
	case teredo.Contains(a):
		// Teredo embeds the server's IPv4 in bits 32 to 63 and the client's,
		// inverted, in bits 96 to 127; both must be acceptable.
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return max(classify4(v4(b[4:8])), classify4(netip.AddrFrom4(client)))
	case contains(never6, a):
		return verdictNever
	case contains(private6, a), !global6.Contains(a):
		// Outside 2000::/3 nothing is allocated for global unicast.
		return verdictPrivate
	default:
		return verdictPublic
	}
}

func v4(b []byte) netip.Addr { return netip.AddrFrom4([4]byte(b)) }

func isZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

func contains(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func prefixes(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, p := range s {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}
