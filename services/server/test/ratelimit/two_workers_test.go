package ratelimit_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/webhookstest"
	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/platform/egress/egresstest"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/wire"
	"bothy/server/test/harness"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// receiverHost is the receiver's host name; the processes resolve it to
// 127.0.0.1 through the fake resolver.
const receiverHost = "hooks.example.com"

// textPrefix starts the text of every message Alex posts, followed by its
// number in two digits.
const textPrefix = "Paced message "

// arrival is one request as it reached the receiver.
type arrival struct {
	at   time.Time
	id   string
	text string
}

// receiver is an HTTPS receiver on 127.0.0.1 that answers 204 at once and
// notes the wall-clock time each request arrived.
type receiver struct {
	port int
	ca   []byte
	mu   sync.Mutex
	got  []arrival
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	r.port, r.ca = harness.StartTLSReceiver(t, receiverHost, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		at := time.Now()
		body, _ := io.ReadAll(req.Body)
		// The message's text, wherever the envelope puts it.
		text := ""
		if i := strings.Index(string(body), textPrefix); i >= 0 {
			text = string(body[i : i+len(textPrefix)+2])
		}
		r.mu.Lock()
		r.got = append(r.got, arrival{at: at, id: req.Header.Get("webhook-id"), text: text})
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	return r
}

func (r *receiver) url(path string) string {
	return fmt.Sprintf("https://%s:%d%s", receiverHost, r.port, path)
}

func (r *receiver) arrivals() []arrival {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]arrival(nil), r.got...)
}

// startProcess runs a process of role over a copy of cfg with listeners
// of its own, and returns it with that copy.
func startProcess(t *testing.T, cfg wire.Config, role wire.Role) (*wire.Process, *wire.Config) {
	t.Helper()
	cfg.HTTP.ListenAddress = harness.FreeAddress(t)
	cfg.HTTP.OperatorListenAddress = harness.FreeAddress(t)
	p, err := wire.NewProcess(context.Background(), &cfg, role, wire.Deps{
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Resolver: egresstest.NewResolver(map[string][]netip.Addr{receiverHost: {netip.MustParseAddr("127.0.0.1")}}),
	})
	require.NoError(t, err)
	harness.RunProcess(t, p, &cfg)
	return p, &cfg
}

// TestRateLimitAcrossTwoWorkerProcesses (issue 16 part 3): Tracker's
// subscription is limited to 4 requests a second; Alex posts 14 messages
// through the api process while two worker processes deliver. The
// receiver gets every message once, in the order posted, and never more
// than 4 within any second.
func TestRateLimitAcrossTwoWorkerProcesses(t *testing.T) {
	t.Parallel()
	const perSecond, messages = 4, 14
	recv := newReceiver(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, recv.ca, 0o600))
	db := pgtest.New(t)
	cfg := harness.LoadConfig(t, db, func(cfg *wire.Config) {
		host := fmt.Sprintf("%s:%d", receiverHost, recv.port)
		var err error
		cfg.Webhook.AllowedHosts, err = hostlist.Parse([]string{host})
		require.NoError(t, err)
		cfg.Egress.AllowedHosts, err = hostlist.Parse([]string{host + ";allow_private"})
		require.NoError(t, err)
		cfg.Egress.ExtraCAFile = caFile
	})
	api, apiCfg := startProcess(t, *cfg, wire.RoleAPI)
	startProcess(t, *cfg, wire.RoleWorker)
	startProcess(t, *cfg, wire.RoleWorker)
	harness.CreateOwner(t, db, cfg, api.Modules())
	call := func(token, method, path string, body any, want int) map[string]any {
		t.Helper()
		return harness.Call(t, apiCfg, token, method, path, body, want)
	}

	w := harness.CreateSupport(t, apiCfg)
	robin, alex, space, channel := w.Robin, w.Alex, w.Space, w.Eskalation
	app := call(robin, "POST", "/apps", map[string]any{"manifest": map[string]any{
		"name": "Tracker", "scopes": []string{"events:subscribe", "messages:read"}, "events": []string{"message.created"},
		"delivery": map[string]any{"mode": "webhook", "events_url": recv.url("/bothy/events")},
	}}, http.StatusCreated)["id"].(string)
	call(robin, "POST", "/apps/"+app+"/installation", map[string]any{
		"scopes": []string{"events:subscribe", "messages:read"}, "event_subscriptions": []string{"message.created"},
	}, http.StatusCreated)
	call(robin, "POST", "/apps/"+app+"/grants", map[string]any{"space_id": space, "channel_id": channel, "level": "read"}, http.StatusCreated)
	subs := call(robin, "GET", "/apps/"+app+"/webhook-subscriptions", nil, http.StatusOK)["items"].([]any)
	require.Len(t, subs, 1)
	sub := subs[0].(map[string]any)["id"].(string)
	limited := call(robin, "PATCH", "/webhook-subscriptions/"+sub, map[string]any{"max_per_second": perSecond}, http.StatusOK)
	require.Equal(t, float64(perSecond), limited["max_per_second"])

	var posted []string
	for i := range messages {
		text := fmt.Sprintf("%s%02d", textPrefix, i)
		call(alex, "POST", "/channels/"+channel+"/messages", map[string]any{"text": text + " from Alex"}, http.StatusCreated)
		posted = append(posted, text)
	}
	require.Eventually(t, func() bool { return len(recv.arrivals()) >= messages }, 60*time.Second, 20*time.Millisecond,
		"every message reaches the receiver")
	// A last look after the deliveries settled: nothing more arrives.
	time.Sleep(500 * time.Millisecond)
	got := recv.arrivals()
	var texts []string
	seen := map[string]bool{}
	for _, a := range got {
		texts = append(texts, a.text)
		require.False(t, seen[a.id], "webhook-id %s arrived once", a.id)
		seen[a.id] = true
	}
	require.Equal(t, posted, texts, "every message once, in the order posted")
	arrived := make([]time.Time, len(got))
	for i, a := range got {
		arrived[i] = a.at
	}
	require.LessOrEqual(t, webhookstest.MostWithinASecond(arrived), perSecond, "no second got more than the limit: %s", webhookstest.Offsets(arrived))
}
