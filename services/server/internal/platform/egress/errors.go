package egress

import (
	"context"
	"errors"
	"net"
)

// ErrBlocked is wrapped by every *BlockedError: errors.Is(err, ErrBlocked)
// tells a request the policy refused from one that failed on the network.
var ErrBlocked = errors.New("egress: request blocked")

// ErrInvalidOptions is wrapped by every error New returns for bad Options or
// Deps.
var ErrInvalidOptions = errors.New("egress: invalid options")

// The reasons of a BlockedError. They are stable codes: they label the
// bothy.egress.blocked counter and the webhook domain maps them to its
// last_error codes.
const (
	// ReasonAddressBlocked: the host resolved only to addresses the guard
	// refuses (see Permitted), or the dialer was about to connect to one.
	ReasonAddressBlocked = "address_blocked"
	// ReasonHostNotAllowed: the host:port is not in Options.Hosts.
	ReasonHostNotAllowed = "host_not_allowed"
	// ReasonSchemeNotAllowed: the URL scheme is not in Options.Schemes.
	ReasonSchemeNotAllowed = "scheme_not_allowed"
	// ReasonURLNotAllowed: the URL is not absolute, carries user info or a
	// fragment, has an invalid host or port, or the request's Host header
	// names another host.
	ReasonURLNotAllowed = "url_not_allowed"
)

// BlockedError reports a request that the egress policy refused before any
// byte reached the target. It wraps ErrBlocked.
type BlockedError struct {
	// Reason is one of the Reason constants.
	Reason string
	// Host is the canonical host of the request, or "" when the URL had no
	// valid host. Never a path, query or address.
	Host string
}

// Error returns the reason and the host, nothing else of the request.
func (e *BlockedError) Error() string {
	s := ErrBlocked.Error() + ": " + e.Reason
	if e.Host != "" {
		s += " (host " + e.Host + ")"
	}
	return s
}

// Unwrap returns ErrBlocked.
func (e *BlockedError) Unwrap() error { return ErrBlocked }

// BlockReason returns Reason. Callers that must not import egress (the
// webhook domain) find it with errors.As on interface{ BlockReason() string }.
func (e *BlockedError) BlockReason() string { return e.Reason }

// TransportError reports a request that the policy allowed but that failed
// on the way: name resolution, connection, TLS, timeout, a broken response.
// Its message names only the host, because the underlying errors may quote
// bytes the receiver sent; classify with errors.Is and errors.As on the chain
// (context.DeadlineExceeded, *net.DNSError, *tls.CertificateVerificationError,
// net.Error and so on).
type TransportError struct {
	// Host is the canonical host of the request.
	Host string
	// Err is the cause.
	Err error
}

// Error returns a constant phrase with the host.
func (e *TransportError) Error() string {
	if e.Timeout() {
		return "egress: request to " + e.Host + " timed out"
	}
	return "egress: request to " + e.Host + " failed"
}

// Unwrap returns the cause.
func (e *TransportError) Unwrap() error { return e.Err }

// Timeout reports whether the request ran out of time: Options.Timeout, the
// caller's deadline or a network timeout. It makes TransportError a net.Error.
func (e *TransportError) Timeout() bool {
	if errors.Is(e.Err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(e.Err, &ne) && ne.Timeout()
}

// Temporary completes net.Error; it reports the same as Timeout.
func (e *TransportError) Temporary() bool { return e.Timeout() }
