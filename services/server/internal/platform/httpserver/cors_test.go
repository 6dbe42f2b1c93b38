package httpserver_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
)

func TestCORSOnlyOnRoutesThatDeclareIt(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(getWebhookKeys, http.HandlerFunc(echo))
	env.Server.Handle(getApp, http.HandlerFunc(echo))

	r := httpservertest.NewRequest(t, "GET", "/api/v1/instance/webhook-keys", nil)
	r.Header.Set("Origin", "https://chat.example.com")
	resp := env.Do(r)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
	require.Empty(t, resp.Header.Get("Access-Control-Allow-Credentials"))

	r = httpservertest.NewRequest(t, "GET", "/api/v1/apps/a", nil)
	r.Header.Set("Origin", "https://chat.example.com")
	resp = env.Do(r)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	for k := range resp.Header {
		require.NotContains(t, k, "Access-Control", "a route without CORS emits no CORS header")
	}
}

func TestPreflightOfAPublicRoute(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(getWebhookKeys, http.HandlerFunc(echo))
	env.Server.Handle(httpserver.Route{Operation: "getJwks", Method: "GET", Pattern: "/api/v1/instance/jwks", CORS: true}, http.HandlerFunc(echo))

	r := httpservertest.NewRequest(t, "OPTIONS", "/api/v1/instance/webhook-keys", nil)
	r.Header.Set("Origin", "https://chat.example.com")
	r.Header.Set("Access-Control-Request-Method", "GET")
	resp := env.Do(r)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
	require.Equal(t, "GET, HEAD", resp.Header.Get("Access-Control-Allow-Methods"))
	require.Equal(t, "Content-Type", resp.Header.Get("Access-Control-Allow-Headers"))
	require.Empty(t, resp.Header.Get("Access-Control-Allow-Credentials"))

	recs := env.Logs.Records(t)
	require.Equal(t, "/api/v1/instance/webhook-keys", recs[len(recs)-1]["http.route"])

	r = httpservertest.NewRequest(t, "OPTIONS", "/api/v1/instance/jwks", nil)
	require.Equal(t, http.StatusNoContent, env.Do(r).StatusCode)
}

func TestPreflightsCountAgainstTheRouteClass(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(getWebhookKeys, http.HandlerFunc(echo))
	for range httpservertest.Options().RateLimits["rl.public_auth"].Burst {
		require.Equal(t, http.StatusNoContent, env.Do(httpservertest.NewRequest(t, "OPTIONS", "/api/v1/instance/webhook-keys", nil)).StatusCode)
	}
	resp := env.Do(httpservertest.NewRequest(t, "OPTIONS", "/api/v1/instance/webhook-keys", nil))
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	require.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
}
