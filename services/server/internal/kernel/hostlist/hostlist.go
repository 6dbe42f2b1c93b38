// Package hostlist parses and matches the host allow lists of the
// configuration (webhook.allowed_hosts, egress.allowed_hosts). One rule serves
// subscription URLs, manifest addresses and the egress client's host policy
// (docs/DECISIONS.md D-M2-26-8), so an address accepted at subscription time
// is the address the egress client lets through.
//
// An entry has the form host[:port][;allow_private]:
//
//	hooks.example.com            host on the default https port 443
//	hooks.example.com:8443       host on port 8443 only
//	hooks.example.com:8443;allow_private
//	                             the host may resolve to a loopback, private
//	                             or link-local address (operators only)
//
// Hosts are compared in canonical form: lower case, without a trailing dot.
// IP literals are allowed as hosts (IPv6 in brackets).
package hostlist

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// DefaultPort is the port an entry without port allows: the https default.
const DefaultPort = 443

// ErrInvalidEntry is wrapped by ParseEntry for every malformed entry.
var ErrInvalidEntry = errors.New("hostlist: invalid entry")

// Entry is one parsed allow-list entry.
type Entry struct {
	// Host is the canonical host name or IP literal (without brackets).
	Host string
	// Port is the only port the entry allows.
	Port int
	// AllowPrivate lets the host resolve to non-public addresses.
	AllowPrivate bool
}

// String renders the entry in its configuration form.
func (e Entry) String() string {
	s := net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
	if e.AllowPrivate {
		s += ";allow_private"
	}
	return s
}

// List is a parsed allow list. The zero value allows nothing.
type List []Entry

// Parse parses every entry; the error names the index of the first bad one.
func Parse(entries []string) (List, error) {
	l := make(List, 0, len(entries))
	for i, raw := range entries {
		e, err := ParseEntry(raw)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		l = append(l, e)
	}
	return l, nil
}

// ParseEntry parses one entry of the form host[:port][;allow_private]. It
// rejects schemes, paths, user info, empty hosts and ports outside 1..65535.
func ParseEntry(raw string) (Entry, error) {
	var e Entry
	s := strings.TrimSpace(raw)
	if rest, ok := strings.CutSuffix(s, ";allow_private"); ok {
		s, e.AllowPrivate = rest, true
	}
	if s == "" || strings.ContainsAny(s, "/?#@; \t") {
		return e, fmt.Errorf("%w: want host[:port][;allow_private]", ErrInvalidEntry)
	}
	host, port := s, DefaultPort
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return e, fmt.Errorf("%w: port must be 1 to 65535", ErrInvalidEntry)
		}
		host, port = h, n
	} else if strings.Count(s, ":") == 1 || strings.HasPrefix(s, "[") {
		return e, fmt.Errorf("%w: malformed port", ErrInvalidEntry)
	}
	host = Canonical(host)
	if !ValidHost(host) {
		return e, fmt.Errorf("%w: host must be a DNS name or an IP literal", ErrInvalidEntry)
	}
	e.Host, e.Port = host, port
	return e, nil
}

// Canonical returns host in the form entries are compared in: lower case,
// without a trailing dot and without IPv6 brackets; an IP literal in its
// shortest form.
func Canonical(host string) string {
	h := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), ".")
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.Unmap().String()
	}
	return h
}

// ValidHost reports whether a canonical host is an IP literal or a DNS name of
// letters, digits and hyphens in dot-separated labels of 1 to 63 characters.
func ValidHost(host string) bool {
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	if host == "" || len(host) > 253 {
		return false
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// Match returns the entry that allows host on port. host is canonicalised
// first; port must be the effective port (443 for https without a port).
func (l List) Match(host string, port int) (Entry, bool) {
	h := Canonical(host)
	for _, e := range l {
		if e.Host == h && e.Port == port {
			return e, true
		}
	}
	return Entry{}, false
}

// HostListed reports whether host appears in the list on any port. Callers
// use it to tell "host not listed" from "port not listed" in messages.
func (l List) HostListed(host string) bool {
	h := Canonical(host)
	for _, e := range l {
		if e.Host == h {
			return true
		}
	}
	return false
}

// Strings renders the list in configuration form.
func (l List) Strings() []string {
	out := make([]string, len(l))
	for i, e := range l {
		out[i] = e.String()
	}
	return out
}
