package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/wire"
)

// FreeAddress returns a loopback address (127.0.0.1:port) whose port was
// free a moment ago, for the listeners of a process a test runs.
func FreeAddress(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// RunProcess runs p (built from cfg) in a goroutine until the test ends,
// then stops it and requires that Run returned nil; it returns once the
// operator listener (http.operator_listen_address) answers /readyz with
// 200, and fails the test when that takes more than 20 seconds.
func RunProcess(t testing.TB, p *wire.Process, cfg *wire.Config) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + cfg.HTTP.OperatorListenAddress + "/readyz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 20*time.Second, 50*time.Millisecond, "the process answers /readyz")
}

// Call sends method path (below /api/v1) to the public listener of cfg
// (http.listen_address) with body as JSON (none when nil) and the bearer
// token (none when empty), requires status want and returns the decoded
// JSON object of the answer (nil for an empty one).
func Call(t testing.TB, cfg *wire.Config, token, method, path string, body any, want int) map[string]any {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, "http://"+cfg.HTTP.ListenAddress+"/api/v1"+path, rd)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, want, resp.StatusCode, "%s %s: %s", method, path, data)
	var m map[string]any
	if len(data) > 0 {
		require.NoError(t, json.Unmarshal(data, &m))
	}
	return m
}
