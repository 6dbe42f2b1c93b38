package contractfuzz_test

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestGoServerAnswersBeforeTheChain pins the answers Go's own HTTP server
// gives before any handler of bothy runs, documented as the exceptions of
// docs/spec/06-api.md: they are plain text without X-Request-Id because
// net/http writes them while it parses the request and offers no hook, but
// none is a 500, none reaches the chain and none touches the database.
// A bad escape in the query, which Go does parse, reaches the chain and is
// a problem document (TestIssue12Examples).
func TestGoServerAnswersBeforeTheChain(t *testing.T) {
	t.Parallel()
	e := newEdge(t, nil)
	srv := httptest.NewServer(e.h)
	t.Cleanup(srv.Close)
	before := e.snapshot(t)
	cases := []struct {
		name, raw string
		status    int
	}{
		{"a bad escape in the path", "GET /api/v1/apps/%zz/webhook-subscriptions HTTP/1.1\r\nHost: api.example.com\r\n\r\n", 400},
		{"a bad request line", "GET /api/v1/me\r\nHost: api.example.com\r\n\r\n", 400},
		{"a method with a space", "G ET /api/v1/me HTTP/1.1\r\nHost: api.example.com\r\n\r\n", 400},
		{"no Host header", "GET /api/v1/me HTTP/1.1\r\n\r\n", 400},
		{"two Host headers", "GET /api/v1/me HTTP/1.1\r\nHost: a.example.com\r\nHost: b.example.com\r\n\r\n", 400},
		{"a NUL in a header", "GET /api/v1/me HTTP/1.1\r\nHost: api.example.com\r\nX-A: a\x00b\r\n\r\n", 400},
		{"an unknown protocol version", "GET /api/v1/me HTTP/9.9\r\nHost: api.example.com\r\n\r\n", 505},
		{"an unsupported transfer coding", "POST /api/v1/spaces HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501},
		{"a header block over the limit", "GET /api/v1/me HTTP/1.1\r\nHost: api.example.com\r\nX-A: " + strings.Repeat("a", http.DefaultMaxHeaderBytes+4096) + "\r\n\r\n", 431},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			require.NoError(t, err)
			defer conn.Close()
			require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
			_, _ = conn.Write([]byte(c.raw))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, c.status, resp.StatusCode)
			require.Empty(t, resp.Header.Get("X-Request-Id"), "Go answered, not the chain")
		})
	}
	require.Equal(t, before, e.snapshot(t), "no table changed")
}
