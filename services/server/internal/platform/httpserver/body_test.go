package httpserver_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
)

func TestAContentCodingOtherThanIdentityAnswers415(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	var ran int
	env.Server.Handle(httpserver.Route{Operation: "createApp", Method: "POST", Pattern: "/api/v1/apps"},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran++; w.WriteHeader(http.StatusCreated) }))
	for _, coding := range []string{"gzip", "br", "identity, gzip", "deflate", "x-unknown"} {
		r := httpservertest.NewRequest(t, "POST", "/api/v1/apps", `{"name":"Tracker"}`)
		r.Header.Set("Content-Encoding", coding)
		resp := env.Do(r)
		httpservertest.RequireProblem(t, resp, errs.CodeUnsupportedMediaType, "")
		require.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode, coding)
		require.Equal(t, "identity", resp.Header.Get("Accept-Encoding"), coding)
	}
	require.Zero(t, ran, "no handler sees an encoded body")
	for _, coding := range []string{"identity", "IDENTITY", ""} {
		r := httpservertest.NewRequest(t, "POST", "/api/v1/apps", `{"name":"Tracker"}`)
		r.Header.Set("Content-Encoding", coding)
		require.Equal(t, http.StatusCreated, env.Do(r).StatusCode, coding)
	}
}

func TestABodyClassHasItsOwnLimit(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	rt := httpserver.Route{Operation: "createSession", Method: "POST", Pattern: "/api/v1/sessions",
		RateClass: httpserver.RateClassPublicAuth, BodyClass: httpserver.BodyClassPublicAuth}
	env.Server.Handle(rt, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			env.Server.WriteError(w, r, err)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	limit := int(httpservertest.Options().BodyLimits[httpserver.BodyClassPublicAuth])
	require.Less(t, limit, int(httpservertest.Options().MaxBodyBytes))

	resp := env.Do(httpservertest.NewRequest(t, "POST", "/api/v1/sessions", strings.Repeat("x", limit+1)))
	httpservertest.RequireProblem(t, resp, errs.CodePayloadTooLarge, "")
	r := httpservertest.NewRequest(t, "POST", "/api/v1/sessions", strings.NewReader(strings.Repeat("x", limit+1)))
	r.ContentLength = -1 // chunked: the class limit applies while reading
	httpservertest.RequireProblem(t, env.Do(r), errs.CodePayloadTooLarge, "")
	require.Equal(t, http.StatusCreated, env.Do(httpservertest.NewRequest(t, "POST", "/api/v1/sessions", strings.Repeat("x", limit))).StatusCode)

	require.Panics(t, func() {
		env.Server.Handle(httpserver.Route{Operation: "x", Method: "GET", Pattern: "/x", BodyClass: "unknown"}, http.NotFoundHandler())
	}, "a body class without a limit is a wiring bug")
}
