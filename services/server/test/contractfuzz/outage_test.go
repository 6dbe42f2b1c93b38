package contractfuzz_test

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/wire"
)

// proxy is a TCP proxy on 127.0.0.1 in front of the test cluster, so a test
// can cut the process off its database as an outage would: Close refuses
// new connections and resets the open ones.
type proxy struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

// newProxy forwards every connection to target (host:port).
func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{l: l}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
			go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
		}
	}()
	t.Cleanup(p.Close)
	return p
}

// Close stops the proxy: the port refuses connections from now on and
// every forwarded connection is closed.
func (p *proxy) Close() {
	_ = p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// TestADatabaseOutageAnswers503 cuts a process of role api off its
// database and requires that every kind of request (a public one, an
// authenticated read, a write) answers 503 unavailable with the
// Retry-After of http.unavailable_retry_after, never 500 internal.
func TestADatabaseOutageAnswers503(t *testing.T) {
	t.Parallel()
	var px *proxy
	e := newEdge(t, func(cfg *wire.Config) {
		u, err := url.Parse(cfg.Database.URL)
		require.NoError(t, err)
		px = newProxy(t, u.Host)
		u.Host = px.l.Addr().String()
		cfg.Database.URL = u.String()
	})
	w := e.w
	requests := []struct {
		token string
		rq    request
	}{
		{"", request{method: "GET", target: "/api/v1/instance/webhook-keys"}},
		{w.Robin.Token, request{method: "GET", target: "/api/v1/apps/" + w.Tracker.ID.String() + "/webhook-subscriptions"}},
		{w.Alex.Token, request{method: "POST", target: "/api/v1/channels/" + w.Eskalation.String() + "/messages", body: `{"text":"Hello Sam"}`}},
	}
	for _, c := range requests {
		a := e.do(t, c.token, c.rq)
		require.Less(t, a.status, 300, "%s %s works through the proxy: %s", c.rq.method, c.rq.target, a.body)
	}
	px.Close()
	for _, c := range requests {
		a := e.do(t, c.token, c.rq)
		require.Equal(t, http.StatusServiceUnavailable, a.status, "%s %s: %s", c.rq.method, c.rq.target, a.body)
		require.NotNil(t, a.problem)
		require.Equal(t, errs.CodeUnavailable, a.problem.Code)
		require.Equal(t, "5", a.header.Get("Retry-After"), "http.unavailable_retry_after")
	}
}
