package contractfuzz_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/wire"
	"bothy/server/test/harness"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// edge is the api role of one process over the matrix world, driven
// through its real HTTP chain.
type edge struct {
	w *harness.World
	h http.Handler
}

// newEdge builds the matrix world in a fresh database and a process of
// role api over it with the world's configuration and fake clock, so the
// world's tokens authenticate and Robin's step-up is fresh. The rate limit
// of public_auth is lifted to its largest values: the suite sends
// thousands of requests from one address and must reach validation.
func newEdge(t *testing.T, change func(*wire.Config)) *edge {
	t.Helper()
	db := pgtest.New(t)
	w := harness.BuildMatrixWorld(t, db, harness.WithConfig(func(cfg *wire.Config) {
		cfg.RateLimit.PublicAuth.PerMinute = 100000
		cfg.RateLimit.PublicAuth.Burst = 10000
		if change != nil {
			change(cfg)
		}
	}))
	p, err := wire.NewProcess(context.Background(), w.Services.Config, wire.RoleAPI,
		wire.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Clock: w.Clock})
	require.NoError(t, err)
	return &edge{w: w, h: p.Handler()}
}

// request is one request of a test: method, target below the server root
// (with the query), headers and raw body.
type request struct {
	method, target string
	header         http.Header
	body           string
}

// answer is what the chain answered.
type answer struct {
	status  int
	header  http.Header
	body    []byte
	problem *httpserver.Problem
}

// do sends rq with the bearer token (none when empty) and decodes a
// problem document when the answer has the problem media type.
func (e *edge) do(t testing.TB, token string, rq request) answer {
	t.Helper()
	var body io.Reader
	if rq.body != "" {
		body = strings.NewReader(rq.body)
	}
	r := httptest.NewRequest(rq.method, "http://api.example.com/", body)
	// NewRequest parses the target and panics on what a client may send
	// anyway (bad escapes); set the raw form the server would have parsed.
	r.RequestURI = rq.target
	u, err := r.URL.Parse(rq.target)
	require.NoError(t, err, "the test's target parses as a request URI")
	r.URL = u
	for k, vs := range rq.header {
		r.Header[k] = vs
	}
	if rq.body != "" && r.Header.Get("Content-Type") == "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, r)
	a := answer{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	if rec.Header().Get("Content-Type") == httpserver.ProblemContentType {
		var p httpserver.Problem
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p), "a problem document decodes")
		a.problem = &p
	}
	return a
}
