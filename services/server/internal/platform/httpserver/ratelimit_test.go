package httpserver_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/internal/platform/pg/pgtest"
)

func keysFrom(t *testing.T, env *httpservertest.Env, addr string) *http.Response {
	t.Helper()
	r := httpservertest.NewRequest(t, "GET", "/api/v1/instance/webhook-keys", nil)
	r.RemoteAddr = addr
	return env.Do(r)
}

func TestRateLimitClassAllowsTheBurstThenAnswers429(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(getWebhookKeys, http.HandlerFunc(echo))
	burst := httpservertest.Options().RateLimits["rl.public_auth"].Burst // 3, refilled at one per second

	for i := range burst {
		require.Equal(t, http.StatusOK, keysFrom(t, env, "192.0.2.10:4000").StatusCode, "request %d", i)
	}
	resp := keysFrom(t, env, "192.0.2.10:4001")
	httpservertest.RequireProblem(t, resp, errs.CodeRateLimited, "")
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	require.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"), "a CORS route keeps its header on a 429")

	require.Equal(t, http.StatusOK, keysFrom(t, env, "192.0.2.11:4000").StatusCode, "another client has its own bucket")

	env.Clock.Advance(500 * time.Millisecond)
	require.Equal(t, http.StatusTooManyRequests, keysFrom(t, env, "192.0.2.10:4000").StatusCode)
	env.Clock.Advance(500 * time.Millisecond)
	require.Equal(t, http.StatusOK, keysFrom(t, env, "192.0.2.10:4000").StatusCode, "one token refilled")
	require.Equal(t, http.StatusTooManyRequests, keysFrom(t, env, "192.0.2.10:4000").StatusCode)

	env.Clock.Advance(time.Hour)
	for range burst {
		require.Equal(t, http.StatusOK, keysFrom(t, env, "192.0.2.10:4000").StatusCode, "the bucket refills up to the burst")
	}
	require.Equal(t, http.StatusTooManyRequests, keysFrom(t, env, "192.0.2.10:4000").StatusCode)
}

func TestRetryAfterRoundsUp(t *testing.T) {
	t.Parallel()
	o := httpservertest.Options()
	o.RateLimits["rl.public_auth"] = httpserver.RateLimit{PerMinute: 6, Burst: 1} // one token per 10 s
	env := httpservertest.New(t, pgtest.New(t), o)
	env.Server.Handle(getWebhookKeys, http.HandlerFunc(echo))
	require.Equal(t, http.StatusOK, keysFrom(t, env, "192.0.2.10:1").StatusCode)
	env.Clock.Advance(2500 * time.Millisecond)
	resp := keysFrom(t, env, "192.0.2.10:1")
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	require.Equal(t, "8", resp.Header.Get("Retry-After"))
}

func TestRoutesWithoutAClassAreNotLimited(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(getApp, http.HandlerFunc(echo))
	for range 20 {
		require.Equal(t, http.StatusOK, env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/apps/a", nil)).StatusCode)
	}
}

func TestIdleBucketsAreDroppedWithoutChangingAnswers(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(getWebhookKeys, http.HandlerFunc(echo))
	for i := range 50 {
		keysFrom(t, env, "198.51.100."+strconv.Itoa(i)+":1")
	}
	env.Clock.Advance(time.Minute)
	for range 3 {
		require.Equal(t, http.StatusOK, keysFrom(t, env, "198.51.100.1:1").StatusCode)
	}
	require.Equal(t, http.StatusTooManyRequests, keysFrom(t, env, "198.51.100.1:1").StatusCode)
}
