package egress

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/platform/egress/egresstest"
)

// These tests look inside the dialer: which addresses it connects to, the
// Control hook and the transport settings the guard depends on.

const hooksHost = "hooks.example.com"

type dialBundle struct {
	srv      *egresstest.TLSServer
	hits     *atomic.Int64
	resolver *egresstest.Resolver
	metrics  *egresstest.Metrics
	mu       sync.Mutex
	dialed   []netip.AddrPort
}

func setupDial(t *testing.T) *dialBundle {
	t.Helper()
	b := &dialBundle{hits: &atomic.Int64{}, metrics: egresstest.NewMetrics(t)}
	b.srv = egresstest.NewTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		b.hits.Add(1)
		_, _ = io.WriteString(w, "received")
	}))
	b.resolver = egresstest.NewResolver(nil)
	return b
}

// client allows hooks.example.com on the receiver's port, with
// allow_private when allowPrivate, and records every dialed address.
func (b *dialBundle) client(t *testing.T, allowPrivate bool) *Client {
	t.Helper()
	hostPort := fmt.Sprintf("%s:%d", hooksHost, b.srv.Port)
	hosts, err := hostlist.Parse([]string{hostPort})
	require.NoError(t, err)
	var private hostlist.List
	if allowPrivate {
		private, err = hostlist.Parse([]string{hostPort + ";allow_private"})
		require.NoError(t, err)
	}
	logger, _ := egresstest.NewLogs()
	c, err := New(Options{
		Purpose:             "webhook",
		Hosts:               NewHostPolicy(hosts),
		Private:             private,
		Timeout:             time.Minute,
		MaxResponseBytes:    1 << 16,
		MaxIdleConnsPerHost: 2, IdleConnTimeout: time.Minute,
		RootCAs: b.srv.RootCAs,
	}, Deps{Resolver: b.resolver, Meter: b.metrics.Provider(), Logger: logger})
	require.NoError(t, err)
	c.dialed = func(ap netip.AddrPort) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.dialed = append(b.dialed, ap)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func (b *dialBundle) do(t *testing.T, c *Client) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost,
		fmt.Sprintf("https://%s:%d/deliver", hooksHost, b.srv.Port), strings.NewReader("{}"))
	require.NoError(t, err)
	return c.Do(req)
}

func (b *dialBundle) dialedAddrs() []netip.AddrPort {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]netip.AddrPort(nil), b.dialed...)
}

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

func TestDialConnectsOnlyToPermittedAddresses(t *testing.T) {
	t.Parallel()
	b := setupDial(t)
	// Refused addresses first: 0.0.0.0 would even reach the receiver on
	// 127.0.0.1, multicast and broadcast are never unicast targets.
	b.resolver.Set(hooksHost, addrs("0.0.0.0", "224.0.0.1", "255.255.255.255", "127.0.0.1")...)

	resp, err := b.do(t, b.client(t, true))

	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	want := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(b.srv.Port))
	require.Equal(t, []netip.AddrPort{want}, b.dialedAddrs(), "only the permitted address was dialed")
	require.Equal(t, int64(1), b.hits.Load())
	require.Zero(t, b.metrics.Blocked(t, "webhook", ReasonAddressBlocked), "a request that went out is not counted as blocked")
}

func TestDialSkipsPrivateAnswersWithoutAllowPrivate(t *testing.T) {
	t.Parallel()
	b := setupDial(t)
	b.resolver.Set(hooksHost, addrs("127.0.0.1", "10.0.0.1", "::ffff:192.168.0.1", "fd00::1")...)

	_, err := b.do(t, b.client(t, false))

	require.ErrorIs(t, err, ErrBlocked)
	require.Empty(t, b.dialedAddrs(), "no refused address was dialed")
	require.Zero(t, b.hits.Load())
}

func TestDialConnectsToAnIPv4MappedAnswerAsIPv4(t *testing.T) {
	t.Parallel()
	b := setupDial(t)
	b.resolver.Set(hooksHost, addrs("::ffff:127.0.0.1")...)

	_, err := b.do(t, b.client(t, true))

	require.NoError(t, err)
	want := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(b.srv.Port))
	require.Equal(t, []netip.AddrPort{want}, b.dialedAddrs())
}

func TestDialReusesTheCheckedConnection(t *testing.T) {
	t.Parallel()
	b := setupDial(t)
	b.resolver.Set(hooksHost, addrs("127.0.0.1")...)
	c := b.client(t, true)
	for range 3 {
		_, err := b.do(t, c)
		require.NoError(t, err)
	}
	require.Len(t, b.dialedAddrs(), 1, "later requests reuse the pooled connection")
	require.Equal(t, 1, b.resolver.Lookups(hooksHost))
}

func TestDialRefusesAHostOutsideThePolicy(t *testing.T) {
	t.Parallel()
	b := setupDial(t)
	c := b.client(t, true)
	_, err := c.dial(context.Background(), "tcp", "other.example.com:443")
	var be *BlockedError
	require.ErrorAs(t, err, &be)
	require.Equal(t, ReasonHostNotAllowed, be.Reason)
	require.Zero(t, b.resolver.Lookups("other.example.com"))
}

func TestControlHookRechecksTheDestination(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		address      string
		allowPrivate bool
		refused      bool
	}{
		// The address just below TEST-NET-1: public, and no one's well-known host.
		{"a public address passes", netip.AddrPortFrom(netip.MustParsePrefix("192.0.2.0/24").Addr().Prev(), 443).String(), false, false},
		{"a loopback address is refused", "127.0.0.1:443", false, true},
		{"a loopback address passes with allow_private", "127.0.0.1:443", true, false},
		{"an IPv4-mapped private address is refused", "[::ffff:10.0.0.1]:443", false, true},
		{"the unspecified address is refused even with allow_private", "0.0.0.0:443", true, true},
		{"an unparsable address is refused", "hooks.example.com:443", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := control(hooksHost, tc.allowPrivate)("tcp", tc.address, nil)
			if !tc.refused {
				require.NoError(t, err)
				return
			}
			var be *BlockedError
			require.ErrorAs(t, err, &be)
			require.Equal(t, ReasonAddressBlocked, be.Reason)
			require.Equal(t, hooksHost, be.Host)
		})
	}
}

func TestTransportSettingsTheGuardReliesOn(t *testing.T) {
	t.Parallel()
	b := setupDial(t)
	c := b.client(t, false)
	tr, hc := c.conns.Load().transport, c.conns.Load().http
	require.Nil(t, tr.Proxy, "no proxy, not even from the environment")
	require.NotNil(t, tr.DialContext)
	require.Nil(t, tr.DialTLSContext)
	require.Nil(t, tr.Dial) //nolint:staticcheck // the deprecated hook must stay unset too
	require.Equal(t, uint16(tls.VersionTLS12), tr.TLSClientConfig.MinVersion)
	require.Empty(t, tr.TLSClientConfig.ServerName, "the transport uses the requested host")
	require.False(t, tr.TLSClientConfig.InsecureSkipVerify)
	require.NotNil(t, hc.CheckRedirect)
}

func TestNewCopiesTheHostLists(t *testing.T) {
	t.Parallel()
	b := setupDial(t)
	hosts, err := hostlist.Parse([]string{fmt.Sprintf("%s:%d", hooksHost, b.srv.Port)})
	require.NoError(t, err)
	policy := NewHostPolicy(hosts)
	hosts[0].Host = "other.example.com"
	require.True(t, policy.Allows(hooksHost, b.srv.Port), "a change to the list after NewHostPolicy has no effect")
}

// blockingResolver answers no lookup until its context ends, then reports
// that on returned.
type blockingResolver struct{ returned chan error }

func (r blockingResolver) LookupNetIP(ctx context.Context, _, _ string) ([]netip.Addr, error) {
	<-ctx.Done()
	r.returned <- ctx.Err()
	return nil, ctx.Err()
}

// The transport dials with a context detached from the request, so the
// request's deadline does not end a dial; the dialer must bound itself or a
// silent DNS server or receiver would hold a goroutine and a socket forever.
func TestDialIsBoundedByTheTimeoutOnItsOwn(t *testing.T) {
	t.Parallel()
	b := setupDial(t)
	c := b.client(t, true)
	res := blockingResolver{returned: make(chan error, 1)}
	c.resolver = res
	c.timeout = 100 * time.Millisecond

	_, err := b.do(t, c)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, <-res.returned, context.DeadlineExceeded, "the lookup ended by the dialer's own deadline")
}

func TestDoAbandonsASilentTLSHandshake(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	closed := make(chan struct{})
	go func() {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		// Never answer the ClientHello; wait for the client to give up.
		_, _ = io.Copy(io.Discard, conn)
		close(closed)
	}()
	port := l.Addr().(*net.TCPAddr).Port
	hostPort := fmt.Sprintf("%s:%d", hooksHost, port)
	hosts, err := hostlist.Parse([]string{hostPort})
	require.NoError(t, err)
	private, err := hostlist.Parse([]string{hostPort + ";allow_private"})
	require.NoError(t, err)
	logger, _ := egresstest.NewLogs()
	c, err := New(Options{
		Purpose: "webhook", Hosts: NewHostPolicy(hosts), Private: private,
		Timeout: 100 * time.Millisecond, MaxResponseBytes: 1 << 10, MaxIdleConnsPerHost: 2, IdleConnTimeout: time.Minute,
	}, Deps{
		Resolver: egresstest.NewResolver(map[string][]netip.Addr{hooksHost: addrs("127.0.0.1")}),
		Meter:    egresstest.NewMetrics(t).Provider(),
		Logger:   logger,
	})
	require.NoError(t, err)

	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "https://"+hostPort+"/", nil)
	require.NoError(t, err)
	_, err = c.Do(req)
	var te *TransportError
	require.ErrorAs(t, err, &te)
	require.True(t, te.Timeout())
	<-closed // the background handshake was given up, not left hanging
}
