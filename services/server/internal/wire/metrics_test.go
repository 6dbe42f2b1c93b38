package wire_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/platform/egress/egresstest"
	"bothy/server/internal/platform/localca"
	"bothy/server/internal/platform/otel/oteltest"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/wire"
	"bothy/server/test/harness"
)

// The webhook targets of the metrics test: the receiver answers 204 on
// hooks.example.com and 410 on the path /gone; down.example.com has a port
// nothing listens on; blocked.example.com is allowed for subscriptions but
// has no allow_private entry in egress.allowed_hosts, so the egress guard
// refuses its loopback address.
const (
	receiverHost = "hooks.example.com"
	downHost     = "down.example.com"
	blockedHost  = "blocked.example.com"
)

// metricsBundle is a process of role all, running on two free loopback
// ports, that delivers to a real TLS receiver on 127.0.0.1.
type metricsBundle struct {
	cfg      *wire.Config
	received *atomic.Int64
	// hostPort, downHostPort and blockedHostPort are the targets'
	// host:port.
	hostPort, downHostPort, blockedHostPort string
}

// startMetricsProcess starts the receiver and a process of role all whose
// egress client trusts the receiver's CA (egress.extra_ca_file) and reaches
// hooks.example.com on 127.0.0.1 through the fake resolver.
func startMetricsProcess(t *testing.T) *metricsBundle {
	t.Helper()
	b := &metricsBundle{received: &atomic.Int64{}}
	issued, err := localca.Issue("metrics test CA", []string{receiverHost, blockedHost}, time.Now())
	require.NoError(t, err)
	recv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/gone" {
			w.WriteHeader(http.StatusGone)
			return
		}
		b.received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	recv.TLS = &tls.Config{Certificates: []tls.Certificate{issued.Certificate}, MinVersion: tls.VersionTLS12}
	recv.StartTLS()
	t.Cleanup(recv.Close)
	port := recv.Listener.Addr().(*net.TCPAddr).Port
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, issued.CAPEM, 0o600))

	db := pgtest.New(t)
	_, downPort, err := net.SplitHostPort(harness.FreeAddress(t))
	require.NoError(t, err)
	b.hostPort = fmt.Sprintf("%s:%d", receiverHost, port)
	b.downHostPort = downHost + ":" + downPort
	b.blockedHostPort = fmt.Sprintf("%s:%d", blockedHost, port)
	b.cfg = harness.LoadConfig(t, db, func(cfg *wire.Config) {
		var err error
		cfg.Webhook.AllowedHosts, err = hostlist.Parse([]string{b.hostPort, b.downHostPort, b.blockedHostPort})
		require.NoError(t, err)
		cfg.Egress.AllowedHosts, err = hostlist.Parse([]string{b.hostPort + ";allow_private", b.downHostPort + ";allow_private"})
		require.NoError(t, err)
		cfg.Egress.ExtraCAFile = caFile
		cfg.HTTP.ListenAddress = harness.FreeAddress(t)
		cfg.HTTP.OperatorListenAddress = harness.FreeAddress(t)
		cfg.Metrics.GaugeInterval = time.Second
	})
	p, err := wire.NewProcess(context.Background(), b.cfg, wire.RoleAll, wire.Deps{
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Resolver: egresstest.NewResolver(map[string][]netip.Addr{
			receiverHost: {netip.MustParseAddr("127.0.0.1")},
			downHost:     {netip.MustParseAddr("127.0.0.1")},
			blockedHost:  {netip.MustParseAddr("127.0.0.1")},
		}),
	})
	require.NoError(t, err)
	harness.RunProcess(t, p, b.cfg)
	harness.CreateOwner(t, db, b.cfg, p.Modules())
	return b
}

// call sends method path (below /api/v1) over the public listener and
// returns the decoded body; the status must be want.
func (b *metricsBundle) call(t *testing.T, token, method, path string, body any, want int) map[string]any {
	t.Helper()
	return harness.Call(t, b.cfg, token, method, path, body, want)
}

// scrape returns the text of GET /metrics on the operator listener.
func (b *metricsBundle) scrape(t *testing.T) string {
	t.Helper()
	resp, err := http.Get("http://" + b.cfg.HTTP.OperatorListenAddress + "/metrics")
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(data)
}

var labelPattern = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

// sample returns the sum of the samples of series name (the exposed
// Prometheus name) whose labels include every pair of labels, and whether
// there was any.
func sample(text, name string, labels map[string]string) (float64, bool) {
	var total float64
	found := false
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		series, value := line[:sp], line[sp+1:]
		metric, rest, _ := strings.Cut(series, "{")
		if metric != name {
			continue
		}
		got := map[string]string{}
		for _, m := range labelPattern.FindAllStringSubmatch(rest, -1) {
			got[m[1]] = m[2]
		}
		match := true
		for k, v := range labels {
			if got[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		total += v
		found = true
	}
	return total, found
}

// TestOperatorMetricsAfterARealDelivery (issue 13 item 1): Alex's message
// goes, through a process of role all, to four subscriptions of Tracker:
// one the receiver accepts, one it answers 410 (the server disables it),
// one on a port nothing listens on, and one the egress guard refuses. GET
// /metrics of the operator listener then shows every metric of
// signals.md 6.2 with a plausible value, and no series carries a
// subscription or app ID or a path.
func TestOperatorMetricsAfterARealDelivery(t *testing.T) {
	t.Parallel()
	b := startMetricsProcess(t)
	password := harness.Password
	robin := b.call(t, "", "POST", "/sessions", map[string]any{"email": "robin@example.com", "password": password}, http.StatusCreated)["token"].(string)
	alexID := b.call(t, robin, "POST", "/people", map[string]any{"email": "alex@example.com", "display_name": "Alex", "password": password, "role": "member"}, http.StatusCreated)["id"].(string)
	alex := b.call(t, "", "POST", "/sessions", map[string]any{"email": "alex@example.com", "password": password}, http.StatusCreated)["token"].(string)
	space := b.call(t, robin, "POST", "/spaces", map[string]any{"name": "Support"}, http.StatusCreated)["id"].(string)
	b.call(t, robin, "POST", "/spaces/"+space+"/members", map[string]any{"person_id": alexID, "level": "write"}, http.StatusCreated)
	channel := b.call(t, robin, "POST", "/spaces/"+space+"/channels", map[string]any{"name": "Eskalation"}, http.StatusCreated)["id"].(string)
	app := b.call(t, robin, "POST", "/apps", map[string]any{"manifest": map[string]any{
		"name": "Tracker", "scopes": []string{"events:subscribe", "messages:read"}, "events": []string{"message.created"},
		"delivery": map[string]any{"mode": "webhook", "events_url": "https://" + b.hostPort + "/bothy/events"},
	}}, http.StatusCreated)["id"].(string)
	b.call(t, robin, "POST", "/apps/"+app+"/installation", map[string]any{
		"scopes": []string{"events:subscribe", "messages:read"}, "event_subscriptions": []string{"message.created"},
	}, http.StatusCreated)
	b.call(t, robin, "POST", "/apps/"+app+"/grants", map[string]any{"space_id": space, "channel_id": channel, "level": "read"}, http.StatusCreated)
	for _, target := range []string{b.hostPort + "/gone", b.downHostPort + "/bothy/events", b.blockedHostPort + "/bothy/events"} {
		b.call(t, robin, "POST", "/apps/"+app+"/webhook-subscriptions",
			map[string]any{"url": "https://" + target, "event_types": []string{"message.created"}}, http.StatusCreated)
	}
	b.call(t, alex, "POST", "/channels/"+channel+"/messages", map[string]any{"text": "The printer on floor 2 is down again."}, http.StatusCreated)

	var text string
	require.Eventually(t, func() bool {
		text = b.scrape(t)
		succeeded, _ := sample(text, "bothy_webhook_deliveries_finished_total", map[string]string{"bothy_outcome": "succeeded"})
		gone, _ := sample(text, "bothy_webhook_deliveries_finished_total", map[string]string{"bothy_outcome": "failed", "bothy_reason": "gone"})
		refused, _ := sample(text, "bothy_egress_errors_total", map[string]string{"error_type": "connection"})
		blocked, _ := sample(text, "bothy_egress_blocked_total", map[string]string{"bothy_reason": "address_blocked"})
		pending, _ := sample(text, "bothy_webhook_deliveries_pending", nil)
		disabled, _ := sample(text, "bothy_webhook_subscriptions", map[string]string{"bothy_webhook_subscription_state": "disabled"})
		// The gauges are read every second: wait until a read saw the two
		// retried deliveries and the disabled subscription.
		return succeeded == 1 && gone == 1 && refused >= 1 && blocked >= 1 && pending == 2 && disabled == 1
	}, 30*time.Second, 100*time.Millisecond, "every outcome is counted and the backlog read after it")
	require.Equal(t, int64(1), b.received.Load())

	type check struct {
		name   string
		labels map[string]string
		ok     func(v float64) bool
		want   string
	}
	atLeastOne := func(v float64) bool { return v >= 1 }
	zero := func(v float64) bool { return v == 0 }
	checks := []check{
		{"bothy_webhook_deliveries_finished_total", map[string]string{"bothy_outcome": "succeeded"}, func(v float64) bool { return v == 1 }, "one succeeded delivery"},
		{"bothy_webhook_deliveries_finished_total", map[string]string{"bothy_outcome": "failed", "bothy_reason": "gone"}, func(v float64) bool { return v == 1 }, "one delivery failed with gone"},
		{"bothy_webhook_attempt_duration_seconds_count", map[string]string{"bothy_outcome": "succeeded"}, func(v float64) bool { return v == 1 }, "one attempt"},
		{"bothy_webhook_attempt_duration_seconds_count", map[string]string{"bothy_outcome": "gone"}, func(v float64) bool { return v == 1 }, "one attempt answered 410"},
		{"bothy_webhook_attempt_duration_seconds_count", map[string]string{"bothy_outcome": "failed", "bothy_reason": "connection_failed"}, atLeastOne, "attempts on the closed port"},
		{"bothy_webhook_attempt_duration_seconds_count", map[string]string{"bothy_outcome": "blocked", "bothy_reason": "address_blocked"}, atLeastOne, "attempts the guard refused"},
		{"bothy_webhook_attempt_duration_seconds_sum", map[string]string{"bothy_outcome": "succeeded"}, func(v float64) bool { return v > 0 && v < 30 }, "an attempt took more than 0 and less than 30 s"},
		{"bothy_webhook_delivery_lag_seconds_count", nil, func(v float64) bool { return v == 1 }, "one lag"},
		{"bothy_webhook_delivery_lag_seconds_sum", nil, func(v float64) bool { return v > 0 && v < 60 }, "the lag is above 0 and below a minute"},
		{"bothy_webhook_deliveries_pending", nil, func(v float64) bool { return v == 2 }, "the two retried deliveries"},
		{"bothy_webhook_deliveries_oldest_pending_age_seconds", nil, func(v float64) bool { return v > 0 && v < 60 }, "pending for less than a minute"},
		{"bothy_webhook_subscriptions", map[string]string{"bothy_webhook_subscription_state": "active"}, func(v float64) bool { return v == 3 }, "three active subscriptions"},
		{"bothy_webhook_subscriptions", map[string]string{"bothy_webhook_subscription_state": "paused"}, zero, "none paused"},
		{"bothy_webhook_deliveries_stalled_total", nil, zero, "no head stalled"},
		{"bothy_http_unavailable_total", nil, zero, "the database was reachable"},
		{"bothy_webhook_subscriptions", map[string]string{"bothy_webhook_subscription_state": "disabled"}, func(v float64) bool { return v == 1 }, "the one answered 410"},
		{"bothy_webhook_subscription_transitions_total", map[string]string{"bothy_webhook_subscription_state": "disabled", "bothy_reason": "gone"}, func(v float64) bool { return v == 1 }, "one disabled with gone"},
		{"bothy_egress_errors_total", map[string]string{"bothy_egress_purpose": "webhook", "error_type": "connection"}, atLeastOne, "refused connections"},
		{"bothy_egress_blocked_total", map[string]string{"bothy_egress_purpose": "webhook", "bothy_reason": "address_blocked"}, atLeastOne, "refused by the guard"},
		{"bothy_authz_decisions_total", map[string]string{"bothy_outcome": "allow"}, atLeastOne, "the API calls were decided"},
		{"bothy_webhook_delivery_lag_threshold_seconds", nil, func(v float64) bool { return v == b.cfg.Metrics.DeliveryLagThreshold.Seconds() }, "metrics.delivery_lag_threshold"},
		{"bothy_consumer_lag", map[string]string{"bothy_consumer": "webhooks"}, func(v float64) bool { return v >= 0 }, "a lag for the consumer webhooks"},
		{"bothy_consumer_rounds_total", map[string]string{"bothy_consumer": "webhooks", "bothy_outcome": "completed"}, atLeastOne, "the consumer webhooks ran rounds"},
		{"bothy_job_queue_depth", map[string]string{"bothy_queue": "delivery"}, func(v float64) bool { return v >= 0 }, "a depth for the queue delivery"},
		{"bothy_job_finished_total", map[string]string{"bothy_job_kind": "apps.webhook_deliver", "bothy_queue": "delivery", "bothy_outcome": "completed"}, atLeastOne, "the delivery job completed"},
		{"bothy_job_duration_seconds_count", map[string]string{"bothy_job_kind": "apps.webhook_deliver"}, atLeastOne, "the delivery job was timed"},
		{"http_server_request_duration_seconds_count", map[string]string{"http_request_method": "POST", "http_route": "/api/v1/channels/{channelId}/messages", "http_response_status_code": "201"}, func(v float64) bool { return v == 1 }, "one posted message by its route template"},
		{"http_server_request_duration_seconds_count", map[string]string{"http_request_method": "POST", "http_route": "/api/v1/sessions", "http_response_status_code": "201"}, func(v float64) bool { return v == 2 }, "two sign-ins"},
		{"http_server_active_requests", map[string]string{"http_request_method": "POST"}, zero, "no request in flight"},
	}
	checked := map[string]bool{}
	for _, c := range checks {
		v, found := sample(text, c.name, c.labels)
		require.True(t, found, "%s %v is exposed", c.name, c.labels)
		require.True(t, c.ok(v), "%s %v = %v: want %s", c.name, c.labels, v, c.want)
		checked[c.name] = true
	}
	for _, m := range oteltest.ListedMetrics(t) {
		names := m.PrometheusNames()
		if m.Instrument == "histogram" {
			names = names[len(names)-1:] // the _count series
		}
		for _, name := range names {
			require.True(t, checked[name], "the test checks %s of signals.md 6.2", name)
		}
	}
	require.NotContains(t, text, "webhook_subscription_id", "no series carries a subscription ID")
	require.NotContains(t, text, app, "no series carries the app ID")
	require.NotContains(t, text, channel, "no series carries a path with values")
}
