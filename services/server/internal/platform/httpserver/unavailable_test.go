package httpserver_test

import (
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
)

// TestAnUnreachableDatabaseAnswers503WithRetryAfter: an outage of the
// database answers 503 unavailable with Retry-After from
// http.unavailable_retry_after (rounded up to seconds), names the reason in
// the access log, counts bothy.http.unavailable per route, and shows
// nothing of the error; any other fault stays 500 internal.
func TestAnUnreachableDatabaseAnswers503WithRetryAfter(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	outages := []error{
		fmt.Errorf("select: %w", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}),
		fmt.Errorf("acquire: %w", &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("connection refused")}),
		errs.New(errs.CodeUnavailable, "database unavailable"),
	}
	var next error
	env.Server.Handle(getApp, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { env.Server.WriteError(w, r, next) }))
	for _, err := range outages {
		next = err
		resp := env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/apps/a1", nil))
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%v", err)
		require.Equal(t, "3", resp.Header.Get("Retry-After"))
		p := httpservertest.DecodeProblem(t, resp)
		require.Equal(t, errs.CodeUnavailable, p.Code)
		require.Empty(t, p.Errors)
	}
	require.NotContains(t, env.Logs.String(), "administrator command")
	require.NotContains(t, env.Logs.String(), "connection refused")
	var reasons int
	for _, rec := range env.Logs.Records(t) {
		if rec["msg"] == "http request" {
			require.Equal(t, "unavailable", rec["bothy.reason"])
			reasons++
		}
	}
	require.Equal(t, len(outages), reasons)
	mt, ok := env.Metrics.Find(t, httpserver.MetricUnavailable)
	require.True(t, ok)
	sum := mt.Data.(metricdata.Sum[int64])
	// The series without a route is the 0 the server starts with.
	var routed []metricdata.DataPoint[int64]
	for _, dp := range sum.DataPoints {
		if _, ok := dp.Attributes.Value("http.route"); ok {
			routed = append(routed, dp)
		} else {
			require.Zero(t, dp.Value)
		}
	}
	require.Len(t, routed, 1)
	require.Equal(t, int64(len(outages)), routed[0].Value)
	route, _ := routed[0].Attributes.Value("http.route")
	require.Equal(t, "/api/v1/apps/{appId}", route.AsString())

	next = fmt.Errorf("select: %w", &pgconn.PgError{Code: "42P01"})
	resp := env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/apps/a1", nil))
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode, "a missing table is a fault, not an outage")
	require.Empty(t, resp.Header.Get("Retry-After"))
}
