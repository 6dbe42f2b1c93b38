package httpserver_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/internal/platform/otel/attr"
)

// TestTheChainRecordsRequestMetricsByRouteTemplate: every request counts
// once in http.server.request.duration with its method, route template and
// status (a panic as 500, no route without http.route), never with the
// path; none stays in flight afterwards.
func TestTheChainRecordsRequestMetricsByRouteTemplate(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(getApp, http.HandlerFunc(echo))
	env.Server.Handle(httpserver.Route{Operation: "deleteApp", Method: "DELETE", Pattern: "/api/v1/apps/{appId}"},
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("Robin's handler failed") }))
	appID := "0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a77"
	env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/apps/"+appID, nil))
	env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/apps/"+appID, nil))
	env.Do(httpservertest.NewRequest(t, "DELETE", "/api/v1/apps/"+appID, nil))
	env.Do(httpservertest.NewRequest(t, "BREW", "/api/v1/nothing-here", nil))

	m := env.Metrics
	const name = httpserver.MetricRequestDuration
	require.Equal(t, uint64(2), m.HistogramCount(t, name, attr.HTTPRequestMethod.String("GET"),
		attr.HTTPRoute.String("/api/v1/apps/{appId}"), attr.HTTPResponseStatusCode.Int(200)))
	require.Equal(t, uint64(1), m.HistogramCount(t, name, attr.HTTPRequestMethod.String("DELETE"),
		attr.HTTPRoute.String("/api/v1/apps/{appId}"), attr.HTTPResponseStatusCode.Int(500)))
	require.Equal(t, uint64(1), m.HistogramCount(t, name, attr.HTTPRequestMethod.String("_OTHER"),
		attr.HTTPResponseStatusCode.Int(404)))
	require.Equal(t, uint64(4), m.HistogramCount(t, name))
	require.ElementsMatch(t, []string{"http.request.method", "http.response.status_code", "http.route"}, keys(m.AttributeKeys(t, name)))
	require.Zero(t, m.Sum(t, httpserver.MetricActiveRequests), "no request is in flight")
}

func keys[K ~string](ks []K) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}
