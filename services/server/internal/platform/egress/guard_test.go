package egress_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/egress"
)

// class is what the guard should answer for an address: public addresses
// pass always, private ones only for a host with allow_private, and never
// ones under no circumstances.
type class int

const (
	public class = iota
	private
	never
)

// No test names a real host (the white label of quality/README.md). A
// public address is built by prefix arithmetic next to a documentation
// range, range edges are computed from the prefixes, and the IPv6 forms
// that embed an IPv4 address are built from their IPv4 address.
var (
	// publicV4 and publicV6 stand for any globally routable unicast address:
	// the address just below TEST-NET-1 (RFC 5737) and the one just below
	// 2001:db8::/32 (RFC 3849).
	publicV4 = before("192.0.2.0/24")
	publicV6 = before("2001:db8::/32")
)

// before returns the address just below prefix p.
func before(p string) netip.Addr { return netip.MustParsePrefix(p).Masked().Addr().Prev() }

// after returns the address just above prefix p.
func after(p string) netip.Addr { return last(p).Next() }

// last returns the highest address of prefix p: all host bits set.
func last(p string) netip.Addr {
	pre := netip.MustParsePrefix(p).Masked()
	b := pre.Addr().AsSlice()
	for i := pre.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// around returns the addresses just below and just above each prefix.
func around(ps ...string) []string {
	var out []string
	for _, p := range ps {
		out = append(out, before(p).String(), after(p).String())
	}
	return out
}

// mapped returns the IPv4-mapped form ::ffff:a.b.c.d of v4.
func mapped(v4 netip.Addr) netip.Addr { return netip.AddrFrom16(v4.As16()) }

// in96 returns v4 in the last 32 bits of the /96 prefix p: the
// IPv4-compatible form for ::/96, the NAT64 form for 64:ff9b::/96 (RFC 6052).
func in96(p string, v4 netip.Addr) netip.Addr {
	b := netip.MustParsePrefix(p).Addr().As16()
	v := v4.As4()
	copy(b[12:], v[:])
	return netip.AddrFrom16(b)
}

// sixToFour returns the 6to4 address of v4 (RFC 3056): 2002, the 32 bits
// of v4, then ::1.
func sixToFour(v4 netip.Addr) netip.Addr {
	b := [16]byte{0x20, 0x02}
	v := v4.As4()
	copy(b[2:6], v[:])
	b[15] = 1
	return netip.AddrFrom16(b)
}

// teredo returns the Teredo address of a client behind server (RFC 4380):
// 2001:0000, the server's IPv4, flags 8000, an obscured port, and the
// client's IPv4 with every bit inverted.
func teredo(server, client netip.Addr) netip.Addr {
	b := [16]byte{0: 0x20, 1: 0x01, 8: 0x80, 10: 0x63, 11: 0xbf}
	sv, cv := server.As4(), client.As4()
	copy(b[4:8], sv[:])
	for i, c := range cv {
		b[12+i] = ^c
	}
	return netip.AddrFrom16(b)
}

// strs returns the text forms of addrs.
func strs(addrs ...netip.Addr) []string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.String()
	}
	return out
}

func TestPermittedAddressRanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		addrs []string
		want  class
	}{
		// IPv4
		{"a public IPv4 address passes", strs(publicV4), public},
		{"the IPv4 addresses next to each refused range pass", append(strs(after("0.0.0.0/8"), before("224.0.0.0/4")), around(
			"10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24",
			"192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24")...), public},
		{"this network 0.0.0.0/8 is never reached", []string{"0.0.0.0", "0.0.0.1", "0.255.255.255"}, never},
		{"RFC 1918 10/8 is private", []string{"10.0.0.0", "10.1.2.3", "10.255.255.255"}, private},
		{"RFC 1918 172.16/12 is private", []string{"172.16.0.0", "172.20.1.1", "172.31.255.255"}, private},
		{"RFC 1918 192.168/16 is private", []string{"192.168.0.0", "192.168.1.1", "192.168.255.255"}, private},
		{"CGNAT 100.64/10 is private", []string{"100.64.0.0", "100.100.100.100", "100.127.255.255"}, private},
		{"loopback 127/8 is private", []string{"127.0.0.1", "127.1.2.3", "127.255.255.255"}, private},
		{"link-local 169.254/16 and the metadata address are private", []string{"169.254.0.0", "169.254.169.254", "169.254.255.255"}, private},
		{"IETF protocol assignments 192.0.0/24 are private", []string{"192.0.0.0", "192.0.0.8", "192.0.0.255"}, private},
		{"TEST-NET-1 192.0.2/24 is private", []string{"192.0.2.0", "192.0.2.10", "192.0.2.255"}, private},
		{"the 6to4 relay anycast 192.88.99/24 is private", []string{"192.88.99.0", "192.88.99.1", "192.88.99.255"}, private},
		{"benchmarking 198.18/15 is private", []string{"198.18.0.0", "198.19.1.1", "198.19.255.255"}, private},
		{"TEST-NET-2 198.51.100/24 is private", []string{"198.51.100.0", "198.51.100.7", "198.51.100.255"}, private},
		{"TEST-NET-3 203.0.113/24 is private", []string{"203.0.113.0", "203.0.113.9", "203.0.113.255"}, private},
		{"multicast 224/4 is never reached", []string{"224.0.0.0", "224.0.0.1", "239.255.255.255"}, never},
		{"reserved 240/4 is private", []string{"240.0.0.0", "250.1.2.3", "255.255.255.254"}, private},
		{"limited broadcast is never reached", []string{"255.255.255.255"}, never},

		// IPv6
		{"a public IPv6 address passes", strs(publicV6), public},
		{"the former 6bone 3ffe::/16 passes", []string{"3ffe::1"}, public},
		{"the edges of 2000::/3 pass", strs(netip.MustParsePrefix("2000::/3").Addr(), last("2000::/3")), public},
		{"the IPv6 addresses next to each refused range inside 2000::/3 pass", around("2001::/23", "2001:db8::/32", "2002::/16", "3fff::/20"), public},
		{"the IPv6 addresses next to 2000::/3 are private", strs(before("2000::/3"), after("2000::/3")), private},
		{"unspecified :: is never reached", []string{"::"}, never},
		{"loopback ::1 is private", []string{"::1"}, private},
		{"IPv4-mapped forms take the verdict of their IPv4 (public)", strs(mapped(publicV4), mapped(after("10.0.0.0/8"))), public},
		{"IPv4-mapped forms take the verdict of their IPv4 (private)", []string{"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:192.168.1.1"}, private},
		{"IPv4-mapped forms take the verdict of their IPv4 (never)", []string{"::ffff:0.0.0.0", "::ffff:224.0.0.1", "::ffff:255.255.255.255"}, never},
		{"IPv4-compatible forms are at least private", append(strs(in96("::/96", publicV4)), "::127.0.0.1", "::10.0.0.1", "::240.0.0.1"), private},
		{"IPv4-compatible forms of never-reached IPv4 are never reached", []string{"::224.0.0.1", "::0.0.0.2", "::255.255.255.255"}, never},
		{"NAT64 64:ff9b::/96 with a public IPv4 passes", strs(in96("64:ff9b::/96", publicV4), in96("64:ff9b::/96", after("10.0.0.0/8"))), public},
		{"NAT64 64:ff9b::/96 with a refused IPv4 is refused", []string{"64:ff9b::127.0.0.1", "64:ff9b::10.0.0.1", "64:ff9b::169.254.169.254", "64:ff9b::192.0.2.1"}, private},
		{"NAT64 64:ff9b::/96 with multicast is never reached", []string{"64:ff9b::224.0.0.1"}, never},
		{"local-use NAT64 64:ff9b:1::/48 is private", append(strs(in96("64:ff9b:1::/96", publicV4)), "64:ff9b:1:ffff::1"), private},
		{"discard-only 100::/64 is private", []string{"100::", "100::ffff:ffff:ffff:ffff"}, private},
		{"6to4 2002::/16 with a public IPv4 passes", strs(sixToFour(publicV4), sixToFour(after("10.0.0.0/8"))), public},
		{"6to4 2002::/16 with a refused IPv4 is refused", []string{"2002:7f00:1::1", "2002:a00:1::", "2002:a9fe:a9fe::1", "2002:c0a8:101::1"}, private},
		{"6to4 2002::/16 with multicast is never reached", []string{"2002:e000:1::1"}, never},
		// Teredo: server IPv4 in bits 32 to 63, client IPv4 inverted in bits 96 to 127.
		{"Teredo 2001::/32 with public server and client passes", strs(teredo(publicV4, after("10.0.0.0/8"))), public},
		{"Teredo 2001::/32 with a private client is refused", strs(teredo(publicV4, netip.MustParseAddr("127.0.0.1")), teredo(publicV4, netip.MustParseAddr("10.0.0.1"))), private},
		{"Teredo 2001::/32 with a private server is refused", strs(teredo(netip.MustParseAddr("10.0.0.1"), publicV4)), private},
		{"other IETF protocol assignments 2001::/23 are private", []string{"2001:2::1", "2001:10::1", "2001:1ff:ffff::1"}, private},
		{"documentation 2001:db8::/32 is private", []string{"2001:db8::", "2001:db8::1", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"}, private},
		{"documentation 3fff::/20 is private", []string{"3fff::1", "3fff:fff::1"}, private},
		{"SRv6 SIDs 5f00::/16 are private", []string{"5f00::1"}, private},
		{"unique local fc00::/7 is private", []string{"fc00::1", "fd12:3456:789a::1", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, private},
		{"link-local fe80::/10 is private", []string{"fe80::", "fe80::1", "febf:ffff::1"}, private},
		{"deprecated site-local fec0::/10 is private", []string{"fec0::1", "feff::1"}, private},
		{"multicast ff00::/8 is never reached", []string{"ff00::", "ff02::1", "ff05::1:3", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, never},
		{"space outside 2000::/3 is private", []string{"4000::1", "1::1", "8000::1", "e000::1"}, private},
		{"a zone turns a public address private", strs(publicV6.WithZone("eth0")), private},
		{"a zoned link-local address is private", []string{"fe80::1%eth0"}, private},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, s := range tc.addrs {
				a := netip.MustParseAddr(s)
				require.Equal(t, tc.want == public, egress.Permitted(a, false), "%s without allow_private", s)
				require.Equal(t, tc.want != never, egress.Permitted(a, true), "%s with allow_private", s)
			}
		})
	}
}

func TestPermittedRefusesTheZeroAddress(t *testing.T) {
	t.Parallel()
	require.False(t, egress.Permitted(netip.Addr{}, false))
	require.False(t, egress.Permitted(netip.Addr{}, true))
}

// FuzzAddressGuard checks the guard's invariants over arbitrary 4- and
// 16-byte addresses: it never panics, it only lets a globally routable
// unicast address through without allow_private, allow_private only widens
// what passes, and an IPv4 address and its IPv4-mapped IPv6 form get the
// same verdict.
func FuzzAddressGuard(f *testing.F) {
	for _, s := range []string{
		publicV4.String(),  // public IPv4
		"127.0.0.1",        // loopback
		"10.0.0.1",         // RFC 1918
		"169.254.169.254",  // cloud metadata, link-local
		"100.64.0.1",       // CGNAT
		"0.0.0.0",          // unspecified
		"255.255.255.255",  // broadcast
		"224.0.0.1",        // multicast
		"::ffff:127.0.0.1", // IPv4-mapped loopback
		"::127.0.0.1",      // IPv4-compatible loopback
		"64:ff9b::a00:1",   // NAT64 of 10.0.0.1
		"64:ff9b:1::1",     // local-use NAT64
		"2002:7f00:1::1",   // 6to4 of 127.0.0.1
		teredo(publicV4, netip.MustParseAddr("10.0.0.1")).String(), // Teredo with client 10.0.0.1
		"2001:db8::1",     // documentation
		"fd00::1",         // ULA
		"fe80::1",         // link-local
		"ff02::1",         // multicast
		"::1",             // loopback
		"::",              // unspecified
		publicV6.String(), // public IPv6
	} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		strict, loose := egress.Permitted(a, false), egress.Permitted(a, true)
		if strict {
			u := a.Unmap()
			if !u.IsGlobalUnicast() || u.IsPrivate() || u.IsLoopback() || u.IsLinkLocalUnicast() || u.IsMulticast() || u.IsUnspecified() {
				t.Fatalf("%s passes without allow_private but is not a global unicast address", a)
			}
			if !loose {
				t.Fatalf("%s passes without allow_private but not with it", a)
			}
		}
		if a.Is4() {
			m := netip.AddrFrom16(a.As16())
			if egress.Permitted(m, false) != strict || egress.Permitted(m, true) != loose {
				t.Fatalf("%s and %s get different verdicts", a, m)
			}
		}
		if a.Is4In6() {
			u := a.Unmap()
			if egress.Permitted(u, false) != strict || egress.Permitted(u, true) != loose {
				t.Fatalf("%s and %s get different verdicts", a, u)
			}
		}
	})
}
