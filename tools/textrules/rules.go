package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net/netip"
	"path"
	"regexp"
	"strings"
)

// Finding is one violation of a text rule at a line of a file.
type Finding struct {
	// Path is the file, relative to the repository root.
	Path string
	// Line is the 1-based line number.
	Line int
	// Rule names the rule: "dash", "white-label" or "citation".
	Rule string
	// Detail says what was found, for the developer.
	Detail string
}

// String formats the finding as path:line: rule: detail, the form editors
// and CI logs link to.
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", f.Path, f.Line, f.Rule, f.Detail)
}

// Allowed is the white-label allow list: host names (each entry also allows
// its subdomains) and literal tokens such as an object identifier that looks
// like an IPv4 address.
type Allowed struct {
	entries map[string]bool
}

// ParseAllowList reads the allow list format of quality/whitelabel-allow.txt:
// one entry per line, the host first, then the reason it is unavoidable.
// Blank lines and lines starting with # are ignored. A line without a reason
// is an error, so that every entry stays justified.
func ParseAllowList(data []byte) (*Allowed, error) {
	a := &Allowed{entries: map[string]bool{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 3 {
			return nil, fmt.Errorf("allow list line %d: an entry needs a host and a reason of at least two words", n)
		}
		a.entries[strings.ToLower(fields[0])] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read allow list: %w", err)
	}
	return a, nil
}

// allows reports whether host is on the list itself or is a subdomain of an
// entry.
func (a *Allowed) allows(host string) bool {
	if a == nil {
		return false
	}
	for h := host; h != ""; {
		if a.entries[h] {
			return true
		}
		i := strings.IndexByte(h, '.')
		if i < 0 {
			break
		}
		h = h[i+1:]
	}
	return false
}

// whiteLabelExempt lists the files the white-label rule does not read:
// dependency manifests, whose module and package names are not ours to
// choose, and the allow list itself.
var whiteLabelExempt = []string{
	"go.mod", "go.sum", "go.work", "go.work.sum",
	"package.json", "package-lock.json",
	"whitelabel-allow.txt",
}

// generatedSuffixes are generated files: they are checked through their
// sources.
var generatedSuffixes = []string{".gen.go", ".sql.go"}

// WhiteLabelApplies reports whether the white-label rule reads the file at
// the slash-separated path p. It applies to every text file (tests, docs,
// examples, code comments, configuration) except dependency manifests,
// license texts and generated code.
func WhiteLabelApplies(p string) bool {
	base := path.Base(p)
	for _, e := range whiteLabelExempt {
		if base == e {
			return false
		}
	}
	for _, s := range generatedSuffixes {
		if strings.HasSuffix(base, s) {
			return false
		}
	}
	upper := strings.ToUpper(base)
	return !strings.HasPrefix(upper, "LICENSE") && !strings.HasPrefix(upper, "COPYING")
}

const (
	enDash = '\u2013'
	emDash = '\u2014'
)

var (
	// urlRE finds scheme://authority; the authority ends at a path, query,
	// fragment, white space, quote or closing bracket.
	urlRE = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://([^/?#\s"'` + "`" + `<>()\[\]{},;|\\]*(?:\[[0-9a-fA-F:.%]+\][^/?#\s"'<>()]*)?)`)
	// bareHostRE finds names that end in a common top-level domain. The list
	// is short on purpose: file extensions (.md, .go, .sh) and Go field
	// names (.app, .ch, .info) would otherwise look like hosts. URLs and
	// e-mail addresses are checked whatever their top-level domain.
	bareHostRE = regexp.MustCompile(`(?:^|[^a-zA-Z0-9._-])((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?:com|org|net|io|dev|edu|gov|de|uk|fr|nl|eu))(?:$|[^a-zA-Z0-9_-])`)
	emailRE    = regexp.MustCompile(`[a-zA-Z0-9._%+-]+@((?:[a-zA-Z0-9-]+\.)+[a-zA-Z]{2,})`)
	// ipRunRE finds runs of characters that IP literals are made of.
	ipRunRE = regexp.MustCompile(`[0-9a-fA-F:.]+`)
	hostRE  = regexp.MustCompile(`^[a-z0-9.-]+$`)
	// designNoteRE finds a citation of a numbered design note of a ticket:
	// the tickets are not in the repository, so a reader cannot follow it.
	designNoteRE = regexp.MustCompile(`\bDesign\s+notes?\b`)
	// sectionRE matches text that ends in a reference to a section.
	sectionRE = regexp.MustCompile(`(?i)(?:section|sections|§)\s*$`)
)

// CheckFile applies the text rules to the content of the file at path p and
// returns the findings in line order. Binary content (a NUL byte) is skipped.
func CheckFile(p string, content []byte, allow *Allowed) []Finding {
	if bytes.IndexByte(content, 0) >= 0 {
		return nil
	}
	wl := WhiteLabelApplies(p)
	goFile := strings.HasSuffix(p, ".go")
	var out []Finding
	for i, line := range strings.Split(string(content), "\n") {
		n := i + 1
		for _, r := range line {
			switch r {
			case enDash:
				out = append(out, Finding{p, n, "dash", "en dash (U+2013); use a hyphen or rephrase"})
			case emDash:
				out = append(out, Finding{p, n, "dash", "em dash (U+2014); use a hyphen or rephrase"})
			}
		}
		if goFile && designNoteRE.MatchString(line) {
			out = append(out, Finding{p, n, "citation", "a ticket's design note is not in the repository; cite docs/adr/NNNN-*.md, a docs/DECISIONS.md row or a docs/spec section, or state the reason in the comment"})
		}
		if wl {
			for _, h := range hostsIn(line) {
				if !hostAllowed(h, allow) {
					out = append(out, Finding{p, n, "white-label", fmt.Sprintf("host %q: use example.com (or a subdomain), localhost, 127.0.0.1 or a documentation address; an unavoidable name goes on quality/whitelabel-allow.txt with its reason", h)})
				}
			}
		}
	}
	return out
}

// hostsIn returns the host names and IP literals a line mentions: URL
// authorities, e-mail domains, bare names with a common top-level domain and
// IP literals, each once.
func hostsIn(line string) []string {
	seen := map[string]bool{}
	var hosts []string
	add := func(h string) {
		h = strings.TrimSuffix(strings.ToLower(h), ".")
		if h == "" || seen[h] {
			return
		}
		seen[h] = true
		hosts = append(hosts, h)
	}
	for _, m := range urlRE.FindAllStringSubmatch(line, -1) {
		if h, ok := urlHost(m[1]); ok {
			add(h)
		}
	}
	for _, m := range emailRE.FindAllStringSubmatch(line, -1) {
		add(m[1])
	}
	for _, m := range bareHostRE.FindAllStringSubmatch(line, -1) {
		add(m[1])
	}
	for _, loc := range ipRunRE.FindAllStringIndex(line, -1) {
		if ip, ok := ipLiteral(line, loc[0], loc[1]); ok {
			add(ip)
		}
	}
	return hosts
}

// urlHost extracts the host of a URL authority (user info and port removed).
// Templates such as {host}, %s or $HOST are not hosts and are skipped, and
// so are single-label names (postgres://db/...): they name no one's public
// host.
func urlHost(auth string) (string, bool) {
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		auth = auth[i+1:]
	}
	if strings.HasPrefix(auth, "[") {
		end := strings.IndexByte(auth, ']')
		if end < 0 {
			return "", false
		}
		return auth[1:end], true
	}
	if i := strings.IndexByte(auth, ':'); i >= 0 {
		auth = auth[:i]
	}
	auth = strings.ToLower(strings.TrimSuffix(auth, "."))
	if auth == "" || !hostRE.MatchString(auth) || !strings.Contains(auth, ".") && auth != "localhost" {
		return "", false
	}
	return auth, true
}

// ipLiteral reports whether line[start:end] is an IP literal: four dotted
// decimals (not part of a version such as v1.2.3.4 or a longer dotted run)
// or an IPv6 address with at least two colons.
func ipLiteral(line string, start, end int) (string, bool) {
	tok := strings.TrimRight(line[start:end], ":.")
	if start > 0 {
		c := line[start-1]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return "", false
		}
	}
	if sectionRE.MatchString(line[:start]) {
		return "", false // "section 5.1.1.2" of an RFC, not an address
	}
	if end < len(line) {
		c := line[end]
		if c == '_' || c >= 'g' && c <= 'z' || c >= 'G' && c <= 'Z' {
			return "", false
		}
	}
	if i := strings.IndexByte(tok, ':'); i >= 0 && strings.Count(tok, ":") == 1 {
		tok = tok[:i] // address:port
	}
	switch {
	case strings.Count(tok, ":") >= 2:
	case strings.Count(tok, ".") == 3 && !strings.ContainsAny(tok, ":abcdefABCDEF"):
	default:
		return "", false
	}
	a, err := netip.ParseAddr(tok)
	if err != nil {
		return "", false
	}
	return a.String(), true
}

// hostAllowed is the white-label decision for one host or IP literal.
func hostAllowed(h string, allow *Allowed) bool {
	if a, err := netip.ParseAddr(h); err == nil {
		return ipAllowed(a) || allow.allows(h)
	}
	switch {
	case h == "localhost", strings.HasSuffix(h, ".localhost"):
		return true
	case h == "example.com", strings.HasSuffix(h, ".example.com"):
		return true
	}
	return allow.allows(h)
}

// prefixes returns the parsed prefixes; it panics on a typo, which the
// tests catch at once.
func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// nonGlobal are the documentation ranges (RFC 5737, RFC 3849, RFC 9637) and
// the special-purpose ranges of the IANA registries that are no one's public
// host: private, loopback, link-local, shared, benchmarking, multicast,
// reserved. Tests of the egress guard need them; a public unicast address
// would name a real host and is refused.
var nonGlobal = prefixes(
	// IPv4
	"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
	"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24",
	"192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
	"224.0.0.0/4", "240.0.0.0/4",
	// IPv6
	"::/127", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "3fff::/20",
	"fc00::/7", "fe80::/10", "ff00::/8",
)

// embedsIPv4 are IPv6 forms that carry an IPv4 address (mapped,
// IPv4-compatible, NAT64, 6to4); they are judged by that address.
var embedsIPv4 = prefixes("::ffff:0:0/96", "::/96", "64:ff9b::/96", "2002::/16")

// globalUnicast6 is the only IPv6 range allocated to public hosts; anything
// outside it is reserved and no one's host. 3ffe::/16 (the former 6bone)
// was returned.
var (
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
	sixBone        = netip.MustParsePrefix("3ffe::/16")
)

// ipAllowed reports whether a is a documentation or special-purpose address.
func ipAllowed(a netip.Addr) bool {
	a = a.WithZone("")
	for _, p := range nonGlobal {
		if p.Contains(a) {
			return true
		}
	}
	if a.Is6() {
		b := a.As16()
		for _, p := range embedsIPv4 {
			if !p.Contains(a) {
				continue
			}
			var v4 [4]byte
			if p.Addr().As16()[0] == 0x20 { // 2002:AABB:CCDD::/48
				copy(v4[:], b[2:6])
			} else {
				copy(v4[:], b[12:16])
			}
			return ipAllowed(netip.AddrFrom4(v4))
		}
		return !globalUnicast6.Contains(a) || sixBone.Contains(a)
	}
	return false
}
