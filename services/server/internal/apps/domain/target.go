package domain

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/hostlist"
)

// Target is a validated subscription address.
type Target struct {
	// URL is the normalised address to store and send to: scheme https,
	// canonical host, the port only when it is not 443, path and query as
	// given.
	URL string
	// Host is the canonical host (lower case, no trailing dot, IP literals
	// without brackets in their shortest form); the only part of the
	// address that audit entries and logs may carry.
	Host string
	// Port is the effective port: the URL's port or 443.
	Port int
}

// Item codes of the field errors of ValidateTarget, pointer /url.
const (
	itemRequired         = "required"
	itemHTTPSRequired    = "https_required"
	itemUserinfo         = "userinfo_not_allowed"
	itemFragment         = "fragment_not_allowed"
	itemInvalidURL       = "invalid_url"
	itemHostNotAllowed   = "webhook_host_not_allowed"
	itemNotSubscribable  = "not_subscribable"
	itemNotGranted       = "not_granted"
	itemDuplicate        = "duplicate"
	pointerURL           = "/url"
	pointerEventTypes    = "/event_types"
	detailHostNotListed  = "host is not in webhook.allowed_hosts"
	detailPortNotAllowed = "port is not allowed for this host in webhook.allowed_hosts"
)

// ValidateTarget checks a subscription address against webhook.allowed_hosts
// (D-M2-26-8, R-DM-17). The address is accepted when it parses as an
// absolute URL with scheme https, a host and no user info or fragment, and
// its canonical host with its effective port (443 when absent) matches an
// entry of allowed. Upper case and a trailing dot in the host are normalised
// away, as is an explicit :443.
//
// Errors, all *errs.Error with one field error at pointer /url:
// validation_failed with item code required (empty), https_required (any
// other scheme, or none), userinfo_not_allowed, fragment_not_allowed or
// invalid_url (unparsable, a character outside RFC 3986 such as a space or
// non-ASCII text that is not percent-encoded, opaque, no host, a malformed or out-of-range
// port, a host that is neither a DNS name nor an IP literal, an IPv6 zone);
// webhook_host_not_allowed with item code webhook_host_not_allowed when the
// host, or the host on that port, is not listed (the detail tells which).
// Defects of form are reported before the host list is consulted, so an
// http address is always https_required. Error texts never contain the
// address.
func ValidateTarget(raw string, allowed hostlist.List) (Target, error) {
	if raw == "" {
		return Target{}, urlDefect(itemRequired)
	}
	u, err := url.Parse(raw)
	if err != nil || !uriChars(raw) {
		return Target{}, urlDefect(itemInvalidURL)
	}
	switch {
	case u.Scheme != "https":
		return Target{}, urlDefect(itemHTTPSRequired)
	case u.Opaque != "" || u.Host == "":
		return Target{}, urlDefect(itemInvalidURL)
	case u.User != nil:
		return Target{}, urlDefect(itemUserinfo)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return Target{}, urlDefect(itemFragment)
	}
	port := hostlist.DefaultPort
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Target{}, urlDefect(itemInvalidURL)
		}
		port = n
	} else if strings.HasSuffix(u.Host, ":") {
		return Target{}, urlDefect(itemInvalidURL)
	}
	host := hostlist.Canonical(u.Hostname())
	if !hostlist.ValidHost(host) {
		return Target{}, urlDefect(itemInvalidURL)
	}
	ip, err := netip.ParseAddr(host)
	isIP := err == nil
	if isIP && ip.Zone() != "" {
		return Target{}, urlDefect(itemInvalidURL)
	}
	if _, ok := allowed.Match(host, port); !ok {
		detail := detailHostNotListed
		if allowed.HostListed(host) {
			detail = detailPortNotAllowed
		}
		e := errs.New(errs.CodeWebhookHostNotAllowed, "webhook host not allowed")
		e.Fields = []errs.FieldError{{Pointer: pointerURL, Code: itemHostNotAllowed, Detail: detail}}
		return Target{}, e
	}
	u.Host = host
	if isIP && ip.Is6() {
		u.Host = "[" + host + "]"
	}
	if port != hostlist.DefaultPort {
		u.Host += ":" + strconv.Itoa(port)
	}
	return Target{URL: u.String(), Host: host, Port: port}, nil
}

// TargetHost returns the canonical host of a stored subscription address
// (lower case, no trailing dot, an IP literal without brackets in its
// shortest form, as Target.Host), or "" when raw does not parse. It is the
// one way to name the host of an address in telemetry and audit entries,
// which may carry the host but never the path or query. For an address
// that ValidateTarget stored, it equals the host of net/url.
func TargetHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return hostlist.Canonical(u.Hostname())
}

// uriChars reports whether s holds only the characters RFC 3986 allows in a
// URI: ASCII letters and digits, "-._~", the reserved characters and "%".
// net/url lets spaces, backslashes and non-ASCII through in paths and
// queries; they would reach the request line unescaped, so an address must
// come percent-encoded.
func uriChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("-._~:/?#[]@!$&'()*+,;=%", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

func urlDefect(item string) *errs.Error {
	return errs.Validation(errs.Field(pointerURL, item))
}
