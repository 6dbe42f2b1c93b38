package egress_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/platform/egress"
	"bothy/server/internal/platform/egress/egresstest"
)

var _ egress.Resolver = (*egresstest.Resolver)(nil)

const (
	hooksHost = "hooks.example.com"
	otherHost = "other.example.com"
	// secretPath and secretQuery must never show in an error or a log line.
	secretPath  = "/deliver/alex-secret-path"
	secretQuery = "token=sam-secret-query"
)

var loopback = netip.MustParseAddr("127.0.0.1")

// testBundle is a TLS receiver for hooks.example.com on 127.0.0.1 that counts
// the requests reaching it, a fake resolver answering hooks.example.com with
// 127.0.0.1, and the metrics and logs the client under test writes to.
type testBundle struct {
	srv      *egresstest.TLSServer
	hits     *atomic.Int64
	resolver *egresstest.Resolver
	metrics  *egresstest.Metrics
	logs     *egresstest.Logs
	logger   *slog.Logger
}

func setup(t testing.TB, handler http.HandlerFunc) *testBundle {
	t.Helper()
	return setupWith(t, egresstest.NewTLSServer, handler)
}

// setupHTTP1 is setup with a receiver that speaks HTTP/1.1 only
// (egresstest.NewHTTP1TLSServer).
func setupHTTP1(t testing.TB, handler http.HandlerFunc) *testBundle {
	t.Helper()
	return setupWith(t, egresstest.NewHTTP1TLSServer, handler)
}

func setupWith(t testing.TB, newServer func(testing.TB, http.Handler, ...string) *egresstest.TLSServer, handler http.HandlerFunc) *testBundle {
	t.Helper()
	hits := &atomic.Int64{}
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		handler(w, r)
	}), hooksHost, otherHost)
	logger, logs := egresstest.NewLogs()
	return &testBundle{
		srv:      srv,
		hits:     hits,
		resolver: egresstest.NewResolver(map[string][]netip.Addr{hooksHost: {loopback}, otherHost: {loopback}}),
		metrics:  egresstest.NewMetrics(t),
		logs:     logs,
		logger:   logger,
	}
}

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "received") }

// hostPort is host:<receiver port>.
func (b *testBundle) hostPort(host string) string { return fmt.Sprintf("%s:%d", host, b.srv.Port) }

// url is an https URL on the receiver's port with a path and query that must
// stay secret.
func (b *testBundle) url(host string) string {
	return "https://" + b.hostPort(host) + secretPath + "?" + secretQuery
}

// options allows hooks.example.com on the receiver's port; with allowPrivate
// egress.allowed_hosts carries the allow_private entry for it.
func (b *testBundle) options(t testing.TB, allowPrivate bool) egress.Options {
	t.Helper()
	hosts := parse(t, b.hostPort(hooksHost))
	var private hostlist.List
	if allowPrivate {
		private = parse(t, b.hostPort(hooksHost)+";allow_private")
	}
	return egress.Options{
		Purpose:          "webhook",
		Hosts:            egress.NewHostPolicy(hosts),
		Private:          private,
		Schemes:          []string{"https"},
		Redirects:        egress.RedirectNever,
		Timeout:          time.Minute,
		MaxResponseBytes: 1 << 16,
		// As many idle connections as any test keeps in flight at once.
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     time.Minute,
		RootCAs:             b.srv.RootCAs,
	}
}

func (b *testBundle) deps() egress.Deps {
	return egress.Deps{Resolver: b.resolver, Meter: b.metrics.Provider(), Logger: b.logger}
}

func (b *testBundle) client(t testing.TB, opts egress.Options) *egress.Client {
	t.Helper()
	c, err := egress.New(opts, b.deps())
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func parse(t testing.TB, entries ...string) hostlist.List {
	t.Helper()
	l, err := hostlist.Parse(entries)
	require.NoError(t, err)
	return l
}

func post(t testing.TB, rawURL string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, rawURL, strings.NewReader(`{"text":"hello Robin"}`))
	require.NoError(t, err)
	return req
}

// requireBlocked asserts err is a *BlockedError with reason and host whose
// text names neither the path nor the query.
func requireBlocked(t *testing.T, err error, reason, host string) {
	t.Helper()
	require.ErrorIs(t, err, egress.ErrBlocked)
	var b *egress.BlockedError
	require.ErrorAs(t, err, &b)
	require.Equal(t, reason, b.BlockReason())
	require.Equal(t, host, b.Host)
	requireNoSecrets(t, err.Error())
}

func requireNoSecrets(t *testing.T, s string) {
	t.Helper()
	require.NotContains(t, s, "secret")
	require.NotContains(t, s, "deliver")
	require.NotContains(t, s, "token")
	require.NotContains(t, s, "Robin")
}

// requireBlockedLog asserts the only log line is the warning with the host
// and the reason and nothing else.
func (b *testBundle) requireBlockedLog(t *testing.T, host, reason string) {
	t.Helper()
	want := map[string]string{"bothy.reason": reason}
	if host != "" {
		want["server.address"] = host
	}
	require.Equal(t, []egresstest.Record{{Level: slog.LevelWarn, Message: "egress blocked", Attrs: want}}, b.logs.Records())
}

func TestNewRejectsInvalidOptions(t *testing.T) {
	t.Parallel()
	b := setup(t, ok)
	for _, tc := range []struct {
		name   string
		change func(*egress.Options, *egress.Deps)
	}{
		{"a missing purpose", func(o *egress.Options, _ *egress.Deps) { o.Purpose = "" }},
		{"a zero timeout", func(o *egress.Options, _ *egress.Deps) { o.Timeout = 0 }},
		{"a zero response limit", func(o *egress.Options, _ *egress.Deps) { o.MaxResponseBytes = 0 }},
		{"no idle connections per host", func(o *egress.Options, _ *egress.Deps) { o.MaxIdleConnsPerHost = 0 }},
		{"a zero idle connection timeout", func(o *egress.Options, _ *egress.Deps) { o.IdleConnTimeout = 0 }},
		{"an unknown scheme", func(o *egress.Options, _ *egress.Deps) { o.Schemes = []string{"ftp"} }},
		{"an unknown redirect mode", func(o *egress.Options, _ *egress.Deps) { o.Redirects = egress.RedirectMode(7) }},
		{"a missing logger", func(_ *egress.Options, d *egress.Deps) { d.Logger = nil }},
		{"a missing meter provider", func(_ *egress.Options, d *egress.Deps) { d.Meter = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts, deps := b.options(t, true), b.deps()
			tc.change(&opts, &deps)
			_, err := egress.New(opts, deps)
			require.ErrorIs(t, err, egress.ErrInvalidOptions)
		})
	}
}

func TestDoRefusesURLsOutsideThePolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		url    func(b *testBundle) string
		host   func(r *http.Request)
		reason string
		// blockedHost is the host the error and log name ("" for none).
		blockedHost string
	}{
		{
			name:        "http is refused for the webhook purpose",
			url:         func(b *testBundle) string { return "http://" + b.hostPort(hooksHost) + secretPath + "?" + secretQuery },
			reason:      "scheme_not_allowed",
			blockedHost: hooksHost,
		},
		{
			name:        "user info is refused",
			url:         func(b *testBundle) string { return "https://sam:secret@" + b.hostPort(hooksHost) + secretPath },
			reason:      "url_not_allowed",
			blockedHost: hooksHost,
		},
		{
			name:        "a fragment is refused",
			url:         func(b *testBundle) string { return b.url(hooksHost) + "#secret-fragment" },
			reason:      "url_not_allowed",
			blockedHost: hooksHost,
		},
		{
			name:        "an unlisted host is refused",
			url:         func(b *testBundle) string { return b.url(otherHost) },
			reason:      "host_not_allowed",
			blockedHost: otherHost,
		},
		{
			name:        "a listed host on an unlisted port is refused",
			url:         func(*testBundle) string { return "https://" + hooksHost + secretPath + "?" + secretQuery },
			reason:      "host_not_allowed",
			blockedHost: hooksHost,
		},
		{
			name:        "a host in another case and with a trailing dot is the listed host on an unlisted port",
			url:         func(*testBundle) string { return "https://HOOKS.example.com.:8443" + secretPath },
			reason:      "host_not_allowed",
			blockedHost: hooksHost,
		},
		{
			name:   "a relative URL is refused",
			url:    func(*testBundle) string { return secretPath + "?" + secretQuery },
			reason: "url_not_allowed",
		},
		{
			name:   "a host that is no DNS name is refused without naming it",
			url:    func(*testBundle) string { return "https://secret_host.example.com" + secretPath },
			reason: "url_not_allowed",
		},
		{
			name:        "a port out of range is refused",
			url:         func(*testBundle) string { return "https://" + hooksHost + ":70000" + secretPath },
			reason:      "url_not_allowed",
			blockedHost: hooksHost,
		},
		{
			name:        "a Host header naming another host is refused",
			url:         func(b *testBundle) string { return b.url(hooksHost) },
			host:        func(r *http.Request) { r.Host = otherHost },
			reason:      "url_not_allowed",
			blockedHost: hooksHost,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, ok)
			c := b.client(t, b.options(t, true))
			req := post(t, tc.url(b))
			if tc.host != nil {
				tc.host(req)
			}

			resp, err := c.Do(req)

			require.Nil(t, resp)
			requireBlocked(t, err, tc.reason, tc.blockedHost)
			require.Zero(t, b.hits.Load(), "the receiver got a request")
			require.Zero(t, b.resolver.Lookups(hooksHost)+b.resolver.Lookups(otherHost), "the URL check comes before any lookup")
			require.Equal(t, int64(1), b.metrics.Blocked(t, "webhook", tc.reason))
			b.requireBlockedLog(t, tc.blockedHost, tc.reason)
		})
	}
}

func TestDoRefusesAnUnparsableURL(t *testing.T) {
	t.Parallel()
	b := setup(t, ok)
	c := b.client(t, b.options(t, true))
	req := post(t, b.url(hooksHost))
	req.URL = nil
	_, err := c.Do(req)
	requireBlocked(t, err, "url_not_allowed", "")
}

func TestDoReachesTheReceiverWithAllowPrivate(t *testing.T) {
	t.Parallel()
	var got struct {
		host, path, body, proto string
	}
	b := setup(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got.host, got.path, got.body, got.proto = r.Host, r.URL.Path, string(body), r.TLS.ServerName
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "received")
	})
	c := b.client(t, b.options(t, true))

	resp, err := c.Do(post(t, b.url(hooksHost)))

	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.Equal(t, "7", resp.Header.Get("Retry-After"))
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, "received", string(body))
	require.Equal(t, int64(1), b.hits.Load())
	require.Equal(t, b.hostPort(hooksHost), got.host)
	require.Equal(t, secretPath, got.path)
	require.Equal(t, `{"text":"hello Robin"}`, got.body)
	require.Equal(t, hooksHost, got.proto, "the TLS server name is the requested host")
	require.Equal(t, 1, b.resolver.Lookups(hooksHost), "one lookup, made by the dialer: no second resolution")
	require.Zero(t, b.metrics.Blocked(t, "webhook", "address_blocked"))
	require.Empty(t, b.logs.Records())
}

func TestDoRefusesLoopbackWithoutAllowPrivate(t *testing.T) {
	t.Parallel()
	b := setup(t, ok)
	c := b.client(t, b.options(t, false))

	resp, err := c.Do(post(t, b.url(hooksHost)))

	require.Nil(t, resp)
	requireBlocked(t, err, "address_blocked", hooksHost)
	require.Zero(t, b.hits.Load(), "no connection reached the receiver")
	require.Equal(t, int64(1), b.metrics.Blocked(t, "webhook", "address_blocked"))
	b.requireBlockedLog(t, hooksHost, "address_blocked")
}

func TestDoAllowPrivateNeedsAnEntryForTheSameHostAndPort(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		private func(b *testBundle) []string
	}{
		{"an entry for another port", func(*testBundle) []string { return []string{hooksHost + ":8443;allow_private"} }},
		{"an entry for another host", func(b *testBundle) []string { return []string{b.hostPort(otherHost) + ";allow_private"} }},
		{"an entry without the flag", func(b *testBundle) []string { return []string{b.hostPort(hooksHost)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, ok)
			opts := b.options(t, false)
			opts.Private = parse(t, tc.private(b)...)
			_, err := b.client(t, opts).Do(post(t, b.url(hooksHost)))
			requireBlocked(t, err, "address_blocked", hooksHost)
			require.Zero(t, b.hits.Load())
		})
	}
}

func TestDoFlagOnTheHostPolicyDoesNotAllowPrivate(t *testing.T) {
	t.Parallel()
	b := setup(t, ok)
	opts := b.options(t, false)
	opts.Hosts = egress.NewHostPolicy(parse(t, b.hostPort(hooksHost)+";allow_private"))
	_, err := b.client(t, opts).Do(post(t, b.url(hooksHost)))
	requireBlocked(t, err, "address_blocked", hooksHost)
	require.Zero(t, b.hits.Load())
}

func TestDoRefusesPrivateAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		addrs []string
	}{
		{"an RFC 1918 answer", []string{"10.0.0.5"}},
		{"RFC 1918 answers of every block", []string{"192.168.1.10", "172.16.0.3", "10.20.30.40"}},
		{"the cloud metadata address", []string{"169.254.169.254"}},
		{"an IPv4-mapped loopback answer", []string{"::ffff:127.0.0.1"}},
		{"a NAT64 answer embedding a private IPv4", []string{"64:ff9b::a00:5"}},
		{"a unique local IPv6 answer", []string{"fd00::5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, ok)
			var addrs []netip.Addr
			for _, s := range tc.addrs {
				addrs = append(addrs, netip.MustParseAddr(s))
			}
			b.resolver.Set(hooksHost, addrs...)
			_, err := b.client(t, b.options(t, false)).Do(post(t, b.url(hooksHost)))
			requireBlocked(t, err, "address_blocked", hooksHost)
			require.Equal(t, int64(1), b.metrics.Blocked(t, "webhook", "address_blocked"))
		})
	}
}

func TestDoRefusesANeverReachableAnswerEvenWithAllowPrivate(t *testing.T) {
	t.Parallel()
	b := setup(t, ok)
	b.resolver.Set(hooksHost, netip.MustParseAddr("0.0.0.0"), netip.MustParseAddr("224.0.0.1"))
	_, err := b.client(t, b.options(t, true)).Do(post(t, b.url(hooksHost)))
	requireBlocked(t, err, "address_blocked", hooksHost)
	require.Zero(t, b.hits.Load(), "0.0.0.0 would have reached the receiver on 127.0.0.1")
}

func TestDoRefusesAnIPLiteralHostWithoutAllowPrivate(t *testing.T) {
	t.Parallel()
	b := setup(t, ok)
	opts := b.options(t, false)
	opts.Hosts = egress.NewHostPolicy(parse(t, fmt.Sprintf("127.0.0.1:%d", b.srv.Port)))
	_, err := b.client(t, opts).Do(post(t, fmt.Sprintf("https://127.0.0.1:%d/", b.srv.Port)))
	requireBlocked(t, err, "address_blocked", "127.0.0.1")
	require.Zero(t, b.hits.Load())
}

func TestDoReturnsARedirectUnchanged(t *testing.T) {
	t.Parallel()
	other := setup(t, ok)
	b := setup(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.url(otherHost), http.StatusFound)
	})
	opts := b.options(t, true)
	// The redirect target is allowed and private addresses are allowed for
	// it: only the redirect rule keeps the client away.
	opts.Hosts = egress.NewHostPolicy(parse(t, b.hostPort(hooksHost), other.hostPort(otherHost)))
	opts.Private = parse(t, b.hostPort(hooksHost)+";allow_private", other.hostPort(otherHost)+";allow_private")

	resp, err := b.client(t, opts).Do(post(t, b.url(hooksHost)))

	require.NoError(t, err)
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.Equal(t, other.url(otherHost), resp.Header.Get("Location"))
	require.Equal(t, int64(1), b.hits.Load())
	require.Zero(t, other.hits.Load(), "the Location host received nothing")
}

func TestDoEnforcesTheTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		handler func(release <-chan struct{}) http.HandlerFunc
	}{
		{"a receiver that never answers", func(release <-chan struct{}) http.HandlerFunc {
			return func(_ http.ResponseWriter, r *http.Request) {
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}
		}},
		{"a receiver that stops in the middle of the body", func(release <-chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusOK)
				_, _ = io.WriteString(w, "partial")
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			b := setup(t, tc.handler(release))
			t.Cleanup(func() { close(release) })
			opts := b.options(t, true)
			opts.Timeout = 200 * time.Millisecond

			resp, err := b.client(t, opts).Do(post(t, b.url(hooksHost)))

			require.Nil(t, resp)
			require.Error(t, err)
			require.NotErrorIs(t, err, egress.ErrBlocked)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			var netErr net.Error
			require.ErrorAs(t, err, &netErr)
			require.True(t, netErr.Timeout())
			var te *egress.TransportError
			require.ErrorAs(t, err, &te)
			require.Equal(t, hooksHost, te.Host)
			requireNoSecrets(t, err.Error())
		})
	}
}

func TestDoBoundsTheResponseBody(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		size int
		want int
	}{
		{"a body above the limit is cut at the limit", 1 << 20, 1 << 10},
		{"a body of exactly the limit is kept", 1 << 10, 1 << 10},
		{"a body below the limit is kept", 10, 10},
		{"an empty body stays empty", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, func(w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte(strings.Repeat("x", tc.size)))
			})
			opts := b.options(t, true)
			opts.MaxResponseBytes = 1 << 10

			resp, err := b.client(t, opts).Do(post(t, b.url(hooksHost)))

			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			require.Len(t, body, tc.want)
			require.Equal(t, int64(tc.want), resp.ContentLength)
		})
	}
}

func TestDoVerifiesTheReceiverCertificate(t *testing.T) {
	t.Parallel()
	t.Run("against the configured roots", func(t *testing.T) {
		t.Parallel()
		b := setup(t, ok)
		opts := b.options(t, true)
		opts.RootCAs = x509.NewCertPool()
		_, err := b.client(t, opts).Do(post(t, b.url(hooksHost)))
		var verr *tls.CertificateVerificationError
		require.ErrorAs(t, err, &verr)
		require.NotErrorIs(t, err, egress.ErrBlocked)
		require.Zero(t, b.hits.Load())
		requireNoSecrets(t, err.Error())
	})
	t.Run("for the requested host name", func(t *testing.T) {
		t.Parallel()
		b := setup(t, ok)
		// A server whose certificate names only other.example.com, reached
		// under the name hooks.example.com.
		srv := egresstest.NewTLSServer(t, http.HandlerFunc(ok), otherHost)
		opts := b.options(t, true)
		opts.Hosts = egress.NewHostPolicy(parse(t, fmt.Sprintf("%s:%d", hooksHost, srv.Port)))
		opts.Private = parse(t, fmt.Sprintf("%s:%d;allow_private", hooksHost, srv.Port))
		opts.RootCAs = srv.RootCAs
		_, err := b.client(t, opts).Do(post(t, fmt.Sprintf("https://%s:%d/", hooksHost, srv.Port)))
		var herr x509.HostnameError
		require.ErrorAs(t, err, &herr)
	})
}

func TestDoReportsAnUnknownHostAsATransportError(t *testing.T) {
	t.Parallel()
	b := setup(t, ok)
	b.resolver = egresstest.NewResolver(nil)
	_, err := b.client(t, b.options(t, true)).Do(post(t, b.url(hooksHost)))
	var dnsErr *net.DNSError
	require.ErrorAs(t, err, &dnsErr)
	require.NotErrorIs(t, err, egress.ErrBlocked)
	requireNoSecrets(t, err.Error())
}

func TestDoKeepsTheCallersCancellation(t *testing.T) {
	t.Parallel()
	b := setup(t, ok)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := post(t, b.url(hooksHost)).WithContext(ctx)
	_, err := b.client(t, b.options(t, true)).Do(req)
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, b.hits.Load())
}

func TestBlockedErrorNamesReasonAndHostOnly(t *testing.T) {
	t.Parallel()
	err := &egress.BlockedError{Reason: egress.ReasonAddressBlocked, Host: hooksHost}
	require.Equal(t, "egress: request blocked: address_blocked (host hooks.example.com)", err.Error())
	require.ErrorIs(t, err, egress.ErrBlocked)
	require.Equal(t, "address_blocked", err.BlockReason())

	// The webhook domain classifies through this interface without
	// importing egress.
	var classified interface{ BlockReason() string }
	require.True(t, errors.As(fmt.Errorf("deliver: %w", err), &classified))
	require.Equal(t, "address_blocked", classified.BlockReason())
}

// BenchmarkDo measures one webhook-sized POST through the client to a local
// TLS receiver over a pooled connection, guard and bounded read included.
func BenchmarkDo(b *testing.B) {
	bundle := setup(b, ok)
	c := bundle.client(b, bundle.options(b, true))
	target := bundle.url(hooksHost)
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Do(post(b, target))
		if err != nil {
			b.Fatal(err)
		}
		_ = resp.Body.Close()
	}
}

// TestDoReusesTheConnectionsOfOneHost sends two waves of requests to one
// HTTP/1.1 receiver, each wave with Options.MaxIdleConnsPerHost requests in
// flight at once: the second wave goes out on the connections the first
// one left idle, so it resolves no name and makes no TLS handshake
// (net/http keeps only two idle connections per host unless told more,
// which made a new handshake for most webhook deliveries to a host that
// serves many subscriptions).
func TestDoReusesTheConnectionsOfOneHost(t *testing.T) {
	t.Parallel()
	const inFlight = 8
	var arrived atomic.Int64
	var waves [2]chan struct{}
	for i := range waves {
		waves[i] = make(chan struct{})
	}
	// The handler holds every request until its whole wave arrived, so
	// each wave has inFlight connections in use at once.
	b := setupHTTP1(t, func(w http.ResponseWriter, _ *http.Request) {
		n := arrived.Add(1)
		wave := waves[(n-1)/inFlight]
		if n%inFlight == 0 {
			close(wave)
		}
		<-wave
		_, _ = io.WriteString(w, "received")
	})
	opts := b.options(t, true)
	require.Equal(t, inFlight, opts.MaxIdleConnsPerHost)
	c := b.client(t, opts)
	send := func() {
		errc := make(chan error, inFlight)
		for range inFlight {
			go func() {
				resp, err := c.Do(post(t, b.url(hooksHost)))
				if err == nil && resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
				errc <- err
			}()
		}
		for range inFlight {
			require.NoError(t, <-errc)
		}
	}
	send()
	require.Equal(t, inFlight, b.resolver.Lookups(hooksHost), "the first wave opens one connection per request in flight")
	send()
	require.Equal(t, inFlight, b.resolver.Lookups(hooksHost), "the second wave reuses the idle connections of the first")
}

// TestDoClosesConnectionsIdleLongerThanTheTimeout lets a connection sit
// idle well past Options.IdleConnTimeout: the next request opens a new
// one, while a request right after the first reuses it.
func TestDoClosesConnectionsIdleLongerThanTheTimeout(t *testing.T) {
	t.Parallel()
	b := setupHTTP1(t, ok)
	opts := b.options(t, true)
	opts.IdleConnTimeout = 50 * time.Millisecond
	c := b.client(t, opts)
	for range 2 {
		_, err := c.Do(post(t, b.url(hooksHost)))
		require.NoError(t, err)
	}
	require.Equal(t, 1, b.resolver.Lookups(hooksHost), "a request within the idle timeout reuses the connection")
	time.Sleep(20 * opts.IdleConnTimeout)
	_, err := c.Do(post(t, b.url(hooksHost)))
	require.NoError(t, err)
	require.Equal(t, 2, b.resolver.Lookups(hooksHost), "a request after the idle timeout opens a new connection")
}
