// Package httpservertest helps tests of HTTP handlers: an Env with a real
// httpserver.Server (idempotency on a pgtest database, a fake clock, a test
// authenticator and captured logs), requests made as a principal, and
// decoding and assertions of problem documents.
package httpservertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/idempotencypg"
	"bothy/server/internal/platform/otel/oteltest"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

// Start is the instant the fake clock of an Env shows first.
var Start = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// Options returns the test configuration of a Server: small limits, so tests
// reach them with few requests. Tests change fields as they need.
func Options() httpserver.Options {
	return httpserver.Options{
		MaxBodyBytes:   4096,
		BodyLimits:     map[httpserver.BodyClass]int64{httpserver.BodyClassPublicAuth: 1024},
		RequestTimeout: 30 * time.Second,
		// UnavailableRetryAfter rounds up to 3 seconds.
		UnavailableRetryAfter: 2500 * time.Millisecond,
		RateLimits: map[httpserver.RateClass]httpserver.RateLimit{
			httpserver.RateClassPublicAuth: {PerMinute: 60, Burst: 3},
		},
	}
}

// KeyTTL is the idempotency.key_ttl of an Env.
const KeyTTL = 24 * time.Hour

// Env is a Server with its test collaborators.
type Env struct {
	// Server is the server under test; register routes, then call Do.
	Server *httpserver.Server
	// Auth resolves the tokens made by As.
	Auth *Authenticator
	// Clock drives rate limits and idempotency expiry.
	Clock *clock.Fake
	// Logs holds every record the server logged, as JSON lines.
	Logs *LogBuffer
	// DB is the test database; UnitOfWork is the pg unit of work over it.
	DB         *pgtest.DB
	UnitOfWork *pg.UnitOfWork
	// Idempotency is the store the server uses.
	Idempotency *idempotencypg.Store
	// Metrics holds what the server's metrics recorded.
	Metrics *oteltest.Metrics
}

// New returns an Env over db with options o (usually Options()).
func New(t testing.TB, db *pgtest.DB, o httpserver.Options) *Env {
	t.Helper()
	clk := clock.NewFake(Start)
	uow := pg.NewUnitOfWork(db.App, 3, 5*time.Second)
	store, err := idempotencypg.New(db.App, uow, clk, idempotencypg.Options{KeyTTL: KeyTTL, PurgeBatchSize: 100})
	require.NoError(t, err)
	logs := &LogBuffer{}
	auth := NewAuthenticator()
	metrics := oteltest.NewMetrics(t)
	srv, err := httpserver.New(o, httpserver.Deps{
		Log:           slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Clock:         clk,
		Authenticator: auth,
		Idempotency:   store,
		Unavailable:   pg.IsUnavailable,
		Meter:         metrics.Provider,
	})
	require.NoError(t, err)
	return &Env{Server: srv, Auth: auth, Clock: clk, Logs: logs, DB: db, UnitOfWork: uow, Idempotency: store, Metrics: metrics}
}

// Do serves r and returns the response (its body is fully buffered).
func (e *Env) Do(r *http.Request) *http.Response {
	rec := httptest.NewRecorder()
	e.Server.ServeHTTP(rec, r)
	return rec.Result()
}

// LogBuffer collects log output; safe for concurrent use.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything logged so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Records returns every record logged so far, decoded.
func (b *LogBuffer) Records(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		out = append(out, m)
	}
	return out
}

// Authenticator is a test httpserver.Authenticator: As registers a
// principal under a fresh random token.
type Authenticator struct {
	mu     sync.Mutex
	tokens map[string]actor.Principal
}

// NewAuthenticator returns an empty Authenticator.
func NewAuthenticator() *Authenticator {
	return &Authenticator{tokens: map[string]actor.Principal{}}
}

// Authenticate implements httpserver.Authenticator; an unknown token is
// unauthorized.
func (a *Authenticator) Authenticate(_ context.Context, token string) (actor.Principal, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.tokens[token]
	if !ok {
		return actor.Principal{}, errs.New(errs.CodeUnauthorized, "unknown token")
	}
	return p, nil
}

// Token registers p and returns its new bearer token.
func (a *Authenticator) Token(p actor.Principal) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := "test_" + hex.EncodeToString(b[:])
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tokens[token] = p
	return token
}

// As makes r authenticate as p and returns r.
func (a *Authenticator) As(r *http.Request, p actor.Principal) *http.Request {
	r.Header.Set("Authorization", "Bearer "+a.Token(p))
	return r
}

// NewRequest returns a request to target (a path, optionally with a query)
// from 192.0.2.1. A body of type []byte, string or io.Reader is sent as is;
// any other non-nil body is sent as JSON with Content-Type application/json.
func NewRequest(t testing.TB, method, target string, body any) *http.Request {
	t.Helper()
	var rd io.Reader
	isJSON := false
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	case io.Reader:
		rd = b
	default:
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		rd, isJSON = bytes.NewReader(raw), true
	}
	r := httptest.NewRequest(method, target, rd)
	if isJSON {
		r.Header.Set("Content-Type", "application/json")
	}
	return r
}

// DecodeProblem reads resp as a problem document. It fails the test when the
// media type is not application/problem+json or the body does not decode.
func DecodeProblem(t testing.TB, resp *http.Response) httpserver.Problem {
	t.Helper()
	require.Equal(t, httpserver.ProblemContentType, resp.Header.Get("Content-Type"))
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	var p httpserver.Problem
	require.NoError(t, d.Decode(&p), "problem document: %s", body)
	return p
}

// RequireProblem asserts that resp is the problem of code with reason ("" for
// none) and exactly the given error pointers, with the status of the table,
// the type URI of the code and the response's request ID. It returns the
// document.
func RequireProblem(t testing.TB, resp *http.Response, code errs.Code, reason string, pointers ...string) httpserver.Problem {
	t.Helper()
	p := DecodeProblem(t, resp)
	require.Equal(t, code, p.Code)
	require.Equal(t, httpserver.StatusOf(code), resp.StatusCode)
	require.Equal(t, resp.StatusCode, p.Status)
	require.Equal(t, httpserver.ProblemTypeBase+string(code), p.Type)
	require.NotEmpty(t, p.Title)
	require.Equal(t, reason, p.Reason)
	require.Equal(t, resp.Header.Get("X-Request-Id"), p.RequestID)
	got := make([]string, 0, len(p.Errors))
	for _, e := range p.Errors {
		got = append(got, e.Pointer)
	}
	if len(pointers) == 0 {
		pointers = []string{}
	}
	require.Equal(t, pointers, got)
	return p
}
