package egress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/metric"

	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/platform/otel/attr"
)

// meterName is the instrumentation scope of the client's metrics.
const meterName = "bothy/server/internal/platform/egress"

// defaultPorts are the ports a URL without port means.
var defaultPorts = map[string]int{"https": 443, "http": 80}

// Client sends HTTP requests under one fixed egress policy. It is safe for
// concurrent use; build one per purpose with New and keep it for the life of
// the process.
type Client struct {
	purpose  string
	hosts    HostPolicy
	private  hostlist.List
	schemes  []string
	timeout  time.Duration
	maxBytes int64
	maxIdle  int
	idleFor  time.Duration
	resolver Resolver
	logger   *slog.Logger
	blocked  metric.Int64Counter
	errors   metric.Int64Counter
	// conns holds the transport and its client; SetRootCAs swaps both at
	// once (roots.go), so a request uses one consistent pair.
	conns atomic.Pointer[conns]

	// dialed, when set, sees every address the dialer is about to connect
	// to. Only the package's own tests set it.
	dialed func(netip.AddrPort)
}

// New returns a client for opts. It copies the host lists, so the policy
// cannot change afterwards. It fails with an error wrapping
// ErrInvalidOptions when Purpose is empty, Timeout, MaxResponseBytes,
// MaxIdleConnsPerHost or IdleConnTimeout is not above zero, a scheme is
// neither https nor http, Redirects is unknown, or Deps.Meter or
// Deps.Logger is nil.
func New(opts Options, deps Deps) (*Client, error) {
	switch {
	case opts.Purpose == "":
		return nil, fmt.Errorf("%w: purpose is required", ErrInvalidOptions)
	case opts.Timeout <= 0:
		return nil, fmt.Errorf("%w: timeout must be above zero", ErrInvalidOptions)
	case opts.MaxResponseBytes <= 0:
		return nil, fmt.Errorf("%w: max response bytes must be above zero", ErrInvalidOptions)
	case opts.MaxIdleConnsPerHost <= 0:
		return nil, fmt.Errorf("%w: max idle connections per host must be above zero", ErrInvalidOptions)
	case opts.IdleConnTimeout <= 0:
		return nil, fmt.Errorf("%w: idle connection timeout must be above zero", ErrInvalidOptions)
	case opts.Redirects != RedirectNever:
		return nil, fmt.Errorf("%w: unknown redirect mode", ErrInvalidOptions)
	case deps.Meter == nil:
		return nil, fmt.Errorf("%w: meter provider is required", ErrInvalidOptions)
	case deps.Logger == nil:
		return nil, fmt.Errorf("%w: logger is required", ErrInvalidOptions)
	}
	schemes := []string{"https"}
	if len(opts.Schemes) > 0 {
		schemes = nil
		for _, s := range opts.Schemes {
			s = strings.ToLower(s)
			if _, ok := defaultPorts[s]; !ok {
				return nil, fmt.Errorf("%w: scheme must be https or http", ErrInvalidOptions)
			}
			schemes = append(schemes, s)
		}
	}
	blocked, err := deps.Meter.Meter(meterName).Int64Counter("bothy.egress.blocked",
		metric.WithDescription("Outgoing requests refused by the egress policy."),
		metric.WithUnit("{request}"))
	if err != nil {
		return nil, fmt.Errorf("egress: create counter: %w", err)
	}
	errorCounter, err := newErrorCounter(deps.Meter)
	if err != nil {
		return nil, fmt.Errorf("egress: create counter: %w", err)
	}

	c := &Client{
		purpose:  opts.Purpose,
		hosts:    NewHostPolicy(opts.Hosts.list),
		schemes:  schemes,
		timeout:  opts.Timeout,
		maxBytes: opts.MaxResponseBytes,
		maxIdle:  opts.MaxIdleConnsPerHost,
		idleFor:  opts.IdleConnTimeout,
		resolver: deps.Resolver,
		logger:   deps.Logger,
		blocked:  blocked,
		errors:   errorCounter,
	}
	if c.resolver == nil {
		c.resolver = net.DefaultResolver
	}
	// Keep only the allow_private entries, so an entry for the same host:port
	// without the flag cannot shadow one with it in Match.
	for _, e := range opts.Private {
		if e.AllowPrivate {
			c.private = append(c.private, e)
		}
	}
	c.conns.Store(c.newConns(opts.RootCAs))
	return c, nil
}

// Do sends req under the client's policy and returns the response with its
// body already read: at most Options.MaxResponseBytes bytes of it, the rest
// discarded unread (the connection is then closed, not reused). The returned
// body is in memory, so closing it is optional, and resp.ContentLength is the
// number of bytes kept. A 3xx response is returned as it is, never followed.
// Options.Timeout bounds the whole exchange including the body read; the
// caller's context may end it earlier. Do closes req.Body, also on error.
//
// Checks, in order: the URL (scheme, user info, fragment, host and port
// syntax, Host header) and its host:port against Options.Hosts, before any
// lookup; then, in the dialer, every resolved address against Permitted.
//
// Any error is a *BlockedError (errors.Is(err, ErrBlocked); nothing was sent,
// and bothy.egress.blocked and an "egress blocked" warning record it) or a
// *TransportError (counted in bothy.egress.errors by class unless the
// caller cancelled).
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	ctx := context.Background()
	if req != nil {
		ctx = req.Context()
	}
	host, berr := c.checkURL(req)
	if berr != nil {
		if req != nil && req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, c.refuse(ctx, berr)
	}

	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.conns.Load().http.Do(req.WithContext(ctx))
	if err != nil {
		return nil, c.fail(ctx, host, err)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes))
	_ = resp.Body.Close()
	if err != nil {
		return nil, c.fail(ctx, host, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Request = req
	return resp, nil
}

// CloseIdleConnections closes the pooled connections that are not in use.
// A process calls it when it stops, once nothing sends any more
// (internal/wire, the drain), so receivers see the connections end.
func (c *Client) CloseIdleConnections() { c.conns.Load().transport.CloseIdleConnections() }

// checkURL applies the URL rules and Options.Hosts; it returns the canonical
// host.
func (c *Client) checkURL(req *http.Request) (string, *BlockedError) {
	if req == nil || req.URL == nil {
		return "", &BlockedError{Reason: ReasonURLNotAllowed}
	}
	u := req.URL
	if !u.IsAbs() || u.Opaque != "" || u.Host == "" {
		return "", &BlockedError{Reason: ReasonURLNotAllowed}
	}
	host := hostlist.Canonical(u.Hostname())
	if !hostlist.ValidHost(host) {
		// Not naming the host: it is not a host name, and may be anything.
		return "", &BlockedError{Reason: ReasonURLNotAllowed}
	}
	scheme := strings.ToLower(u.Scheme)
	if !slices.Contains(c.schemes, scheme) {
		return host, &BlockedError{Reason: ReasonSchemeNotAllowed, Host: host}
	}
	if u.User != nil || u.Fragment != "" || u.RawFragment != "" {
		return host, &BlockedError{Reason: ReasonURLNotAllowed, Host: host}
	}
	port := defaultPorts[scheme]
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return host, &BlockedError{Reason: ReasonURLNotAllowed, Host: host}
		}
		port = n
	}
	if req.Host != "" && req.Host != u.Host {
		// A Host header for another name would reach a virtual host the
		// policy never saw.
		return host, &BlockedError{Reason: ReasonURLNotAllowed, Host: host}
	}
	if !c.hosts.Allows(host, port) {
		return host, &BlockedError{Reason: ReasonHostNotAllowed, Host: host}
	}
	return host, nil
}

// fail turns an error of the exchange into the error Do returns.
func (c *Client) fail(ctx context.Context, host string, err error) error {
	var b *BlockedError
	if errors.As(err, &b) {
		return c.refuse(ctx, b)
	}
	// url.Error quotes the whole URL, path and query included: drop it.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	// A read cut short by the deadline may surface as a plain I/O error; keep
	// the deadline in the chain so callers classify it as a timeout.
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w: %w", err, cerr)
	}
	te := &TransportError{Host: host, Err: err}
	c.countError(ctx, te)
	return te
}

// refuse records a refused request and returns b.
func (c *Client) refuse(ctx context.Context, b *BlockedError) *BlockedError {
	c.blocked.Add(ctx, 1, metric.WithAttributes(
		attr.EgressPurpose.String(c.purpose),
		attr.Reason.String(b.Reason)))
	attrs := make([]slog.Attr, 0, 2)
	if b.Host != "" {
		attrs = append(attrs, slog.String(string(attr.ServerAddress), b.Host))
	}
	attrs = append(attrs, slog.String(string(attr.Reason), b.Reason))
	c.logger.LogAttrs(ctx, slog.LevelWarn, "egress blocked", attrs...)
	return b
}

// allowPrivate reports whether egress.allowed_hosts has an allow_private
// entry for host:port.
func (c *Client) allowPrivate(host string, port int) bool {
	_, ok := c.private.Match(host, port)
	return ok
}

// dial is the transport's only way to open a connection; the guard lives
// here. It resolves the host once through the client's Resolver, keeps the
// addresses Permitted accepts, and connects to those IP literals in turn, so
// the address that was checked is the address connected to: there is no
// second lookup a rebinding DNS server could answer differently. The Control
// hook checks the socket's actual destination once more before connect.
func (c *Client) dial(ctx context.Context, network, address string) (net.Conn, error) {
	h, p, err := net.SplitHostPort(address)
	if err != nil {
		return nil, &BlockedError{Reason: ReasonURLNotAllowed}
	}
	host := hostlist.Canonical(h)
	port, err := strconv.Atoi(p)
	if err != nil || !c.hosts.Allows(host, port) {
		// Unreachable through Do, which checked the URL; kept so that the
		// dialer never trusts its caller.
		return nil, &BlockedError{Reason: ReasonHostNotAllowed, Host: host}
	}
	allowPrivate := c.allowPrivate(host, port)

	// The transport dials with a context detached from the request (so a
	// finished dial can serve a later request): it carries no deadline. Bound
	// lookup and connect here, or a silent DNS server or address would hold
	// this goroutine and its socket long after Do returned.
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	addrs, err := c.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var targets []netip.AddrPort
	for _, a := range addrs {
		if Permitted(a, allowPrivate) {
			targets = append(targets, netip.AddrPortFrom(a.Unmap(), uint16(port)))
		}
	}
	if len(targets) == 0 {
		return nil, &BlockedError{Reason: ReasonAddressBlocked, Host: host}
	}

	d := &net.Dialer{Control: control(host, allowPrivate)}
	var firstErr error
	for i, target := range targets {
		conn, err := c.dialOne(ctx, d, network, target, len(targets)-i)
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// dialOne connects to target with an equal share of the remaining time
// among the remaining addresses, as net.Dialer does, so one address that
// swallows packets does not use up the whole timeout.
func (c *Client) dialOne(ctx context.Context, d *net.Dialer, network string, target netip.AddrPort, remaining int) (net.Conn, error) {
	if deadline, ok := ctx.Deadline(); ok && remaining > 1 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Until(deadline)/time.Duration(remaining))
		defer cancel()
	}
	if c.dialed != nil {
		c.dialed(target)
	}
	return d.DialContext(ctx, network, target.String())
}

// resolve returns the addresses of host: the address itself for an IP
// literal, else the Resolver's answer.
func (c *Client) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	addrs, err := c.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return addrs, nil
}

// control returns the net.Dialer Control hook: it runs after the socket is
// created and before connect, with the destination the kernel will use, and
// refuses it unless Permitted. With dial connecting only to checked IP
// literals it cannot fire today; it is defence in depth against a future
// change that lets a name reach net.Dialer.
func control(host string, allowPrivate bool) func(network, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !Permitted(ap.Addr(), allowPrivate) {
			return &BlockedError{Reason: ReasonAddressBlocked, Host: host}
		}
		return nil
	}
}
