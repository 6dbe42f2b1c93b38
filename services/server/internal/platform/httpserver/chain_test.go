package httpserver_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/correlation"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
)

func TestEveryRequestGetsAFreshRequestID(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(getApp, http.HandlerFunc(echo))

	r := httpservertest.NewRequest(t, "GET", "/api/v1/apps/a1", nil)
	r.Header.Set("X-Request-Id", "chosen-by-the-client")
	first := env.Do(r)
	s := decodeSeen(t, first)
	id := first.Header.Get("X-Request-Id")
	require.NotEqual(t, "chosen-by-the-client", id, "a client never chooses the request ID")
	_, err := ids.Parse(id)
	require.NoError(t, err)
	require.Equal(t, id, s.CorrelationID, "handlers, audit and logs see it through kernel/correlation")

	second := env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/apps/a1", nil))
	require.NotEqual(t, id, second.Header.Get("X-Request-Id"))
}

func TestAPanicAnswers500WithoutInternals(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(getApp, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/api/v1/apps/half-done")
		panic("index out of range near whsec_c2VjcmV0")
	}))
	resp := env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/apps/a1", nil))
	p := httpservertest.RequireProblem(t, resp, errs.CodeInternal, "")
	require.Empty(t, resp.Header.Get("Location"), "headers of the aborted response are dropped")
	require.NotContains(t, body(t, resp), "whsec_")

	logs := env.Logs.String()
	require.NotContains(t, logs, "whsec_")
	var panicked map[string]any
	for _, rec := range env.Logs.Records(t) {
		if rec["msg"] == "panic recovered" {
			panicked = rec
		}
	}
	require.NotNil(t, panicked)
	require.Equal(t, "panic:string", panicked["error.type"])
	require.Equal(t, p.RequestID, panicked["bothy.request_id"])
}

func TestAPanicAfterTheHeaderOnlyLogs(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(getApp, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		panic("late")
	}))
	resp := env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/apps/a1", nil))
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.Contains(t, env.Logs.String(), "panic recovered")
}

func TestErrAbortHandlerIsPanickedAgain(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(getApp, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }))
	require.PanicsWithValue(t, http.ErrAbortHandler, func() {
		env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/apps/a1", nil))
	})
}

func TestTheAccessLogNamesTheRouteNeverThePath(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(getApp, http.HandlerFunc(echo))
	appID := "0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a77"
	resp := env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/apps/"+appID+"?token=Sam-secret", nil))
	require.Equal(t, appID, decodeSeen(t, resp).AppID)
	env.Do(httpservertest.NewRequest(t, "BREW", "/api/v1/apps/"+appID, "Robin's coffee"))

	logs := env.Logs.String()
	require.NotContains(t, logs, appID)
	require.NotContains(t, logs, "Sam-secret")
	require.NotContains(t, logs, "coffee")
	require.NotContains(t, logs, "BREW")

	recs := env.Logs.Records(t)
	require.Len(t, recs, 2)
	first := recs[0]
	require.Equal(t, "http request", first["msg"])
	require.Equal(t, "INFO", first["level"])
	require.Equal(t, "GET", first["http.request.method"])
	require.Equal(t, "/api/v1/apps/{appId}", first["http.route"])
	require.Equal(t, float64(200), first["http.response.status_code"])
	require.Contains(t, first, "bothy.duration_ms")
	require.Equal(t, resp.Header.Get("X-Request-Id"), first["bothy.request_id"])

	second := recs[1]
	require.Equal(t, "_OTHER", second["http.request.method"])
	require.Equal(t, float64(404), second["http.response.status_code"])
	require.NotContains(t, second, "http.route", "no route matched")
}

func TestUnknownPathsAndMethodsAnswer404Problems(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(getApp, http.HandlerFunc(echo))
	env.Server.Handle(httpserver.Route{Operation: "deleteApp", Method: "DELETE", Pattern: "/api/v1/apps/{id}"}, http.HandlerFunc(echo))
	for _, tc := range []struct{ method, target string }{
		{"GET", "/"},
		{"GET", "/api/v1/nothing-here"},
		{"POST", "/api/v1/apps/a1"},
		{"OPTIONS", "/api/v1/apps/a1"},
	} {
		resp := env.Do(httpservertest.NewRequest(t, tc.method, tc.target, nil))
		httpservertest.RequireProblem(t, resp, errs.CodeNotFound, "")
		require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	require.Equal(t, http.StatusOK, env.Do(httpservertest.NewRequest(t, "DELETE", "/api/v1/apps/a1", nil)).StatusCode)
	require.Equal(t, http.StatusOK, env.Do(httpservertest.NewRequest(t, "HEAD", "/api/v1/apps/a1", nil)).StatusCode)
}

func TestBodiesOverTheLimitAnswer413(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	var handlerRan bool
	create := httpserver.Route{Operation: "createApp", Method: "POST", Pattern: "/api/v1/apps"}
	env.Server.Handle(create, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlerRan = true
		if _, err := io.ReadAll(r.Body); err != nil {
			env.Server.WriteError(w, r, err)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	limit := int(httpservertest.Options().MaxBodyBytes)

	resp := env.Do(httpservertest.NewRequest(t, "POST", "/api/v1/apps", strings.Repeat("x", limit+1)))
	httpservertest.RequireProblem(t, resp, errs.CodePayloadTooLarge, "")
	require.False(t, handlerRan, "a declared length over the limit is refused before routing")

	r := httpservertest.NewRequest(t, "POST", "/api/v1/apps", strings.NewReader(strings.Repeat("x", limit+1)))
	r.ContentLength = -1 // chunked: the length is only known while reading
	resp = env.Do(r)
	httpservertest.RequireProblem(t, resp, errs.CodePayloadTooLarge, "")
	require.True(t, handlerRan)

	resp = env.Do(httpservertest.NewRequest(t, "POST", "/api/v1/apps", strings.Repeat("x", limit)))
	require.Equal(t, http.StatusCreated, resp.StatusCode)
}

func TestDeclaredRoutesServeAGeneratedRouter(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Declare(getApp, getWebhookKeys)
	// oapi-codegen's std-http server registers "METHOD /path" patterns on
	// its base router like this.
	var mux interface {
		HandleFunc(string, func(http.ResponseWriter, *http.Request))
	} = env.Server
	mux.HandleFunc("GET /api/v1/apps/{appId}", echo)
	mux.HandleFunc("GET /api/v1/instance/webhook-keys", echo)

	resp := env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/instance/webhook-keys", nil))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"), "the declared route's stages apply")
	require.Panics(t, func() { mux.HandleFunc("GET /api/v1/undeclared", echo) })
}

func TestHandleRefusesBadRoutes(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	for _, rt := range []httpserver.Route{
		{Method: "GET", Pattern: "/x"},
		{Operation: "x", Method: "get", Pattern: "/x"},
		{Operation: "x", Method: "GET", Pattern: "x"},
		{Operation: "x", Method: "GET", Pattern: "/x", RateClass: "rl.unknown"},
	} {
		require.Panics(t, func() { env.Server.Handle(rt, http.HandlerFunc(echo)) })
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	deps := httpserver.Deps{Log: discardLog(), Clock: env.Clock, Authenticator: env.Auth, Idempotency: env.Idempotency}
	o := httpservertest.Options()
	o.MaxBodyBytes = 0
	_, err := httpserver.New(o, deps)
	require.Error(t, err)
	o = httpservertest.Options()
	o.RequestTimeout = 0
	_, err = httpserver.New(o, deps)
	require.Error(t, err, "http.request_timeout must be positive")
	o = httpservertest.Options()
	o.RateLimits[httpserver.RateClassPublicAuth] = httpserver.RateLimit{PerMinute: 10}
	_, err = httpserver.New(o, deps)
	require.Error(t, err)
	require.Panics(t, func() { _, _ = httpserver.New(httpservertest.Options(), httpserver.Deps{}) })
}

func TestCorrelationIsTheRequestID(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(getApp, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.True(t, correlation.Valid(correlation.From(r.Context())))
		w.WriteHeader(http.StatusNoContent)
	}))
	require.Equal(t, http.StatusNoContent, env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/apps/a", nil)).StatusCode)
}

func TestFallbacksKeepWildcardShapes(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(httpserver.Route{Operation: "listA", Method: "GET", Pattern: "/api/v1/a/{x}/b/{y}"}, http.HandlerFunc(echo))
	env.Server.Handle(httpserver.Route{Operation: "deleteA", Method: "DELETE", Pattern: "/api/v1/a/{id}/b/{other}"}, http.HandlerFunc(echo))
	env.Server.Handle(httpserver.Route{Operation: "getFiles", Method: "GET", Pattern: "/api/v1/files/{path...}"}, http.HandlerFunc(echo))
	env.Server.Handle(httpserver.Route{Operation: "getRoot", Method: "GET", Pattern: "/api/v1/{$}"}, http.HandlerFunc(echo))

	require.Equal(t, http.StatusOK, env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/a/1/b/2", nil)).StatusCode)
	require.Equal(t, http.StatusOK, env.Do(httpservertest.NewRequest(t, "DELETE", "/api/v1/a/1/b/2", nil)).StatusCode)
	require.Equal(t, http.StatusOK, env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/files/x/y/z", nil)).StatusCode)
	require.Equal(t, http.StatusOK, env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/", nil)).StatusCode)
	httpservertest.RequireProblem(t, env.Do(httpservertest.NewRequest(t, "PUT", "/api/v1/a/1/b/2", nil)), errs.CodeNotFound, "")
	httpservertest.RequireProblem(t, env.Do(httpservertest.NewRequest(t, "POST", "/api/v1/files/x", nil)), errs.CodeNotFound, "")
	httpservertest.RequireProblem(t, env.Do(httpservertest.NewRequest(t, "POST", "/api/v1/", nil)), errs.CodeNotFound, "")
	httpservertest.RequireProblem(t, env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/other", nil)), errs.CodeNotFound, "")
}

// TestHandlersRunWithTheRequestDeadline: every handler's context carries the
// deadline of http.request_timeout, so no request can hold a connection or
// a lock for longer.
func TestHandlersRunWithTheRequestDeadline(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	var deadline time.Time
	var ok bool
	env.Server.Handle(httpserver.Route{Operation: "getDeadline", Method: "GET", Pattern: "/api/v1/deadline"},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			deadline, ok = r.Context().Deadline()
			w.WriteHeader(http.StatusNoContent)
		}))
	before := time.Now()
	resp := env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/deadline", nil))
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.True(t, ok, "the handler's context has a deadline")
	require.False(t, deadline.After(time.Now().Add(httpservertest.Options().RequestTimeout)))
	require.True(t, deadline.After(before))
}
