package receiverlibs_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/libraries/go/webhookverify"
	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/platform/egress/egresstest"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/wire"
	"bothy/server/test/harness"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// receiverHost is the receiver's host name: its certificate names it, and
// the process resolves it to 127.0.0.1 through the fake resolver.
const receiverHost = "hooks.example.com"

// The receiver's two paths: the manifest's subscription (v1a only) and a
// subscription created with enable_hmac (v1a and v1).
const (
	v1aPath  = "/bothy/events"
	hmacPath = "/bothy/events-hmac"
)

// jsLibrary is the JavaScript library's module, from this package.
const jsLibrary = "../../../../libraries/js/webhookverify/index.js"

// captured is one request as it reached the receiver, with what the Go
// library made of it.
type captured struct {
	Path      string
	Header    http.Header
	Body      []byte
	Status    int                    // the middleware's answer
	Delivery  webhookverify.Delivery // what the receiver's handler saw (Status 204)
	Delivered bool
}

// receiver is an HTTPS receiver on 127.0.0.1 whose handlers are the Go
// library's middleware; it records every request raw, before the
// middleware reads it.
type receiver struct {
	port int
	ca   []byte

	mu       sync.Mutex
	handlers map[string]http.Handler // by path; set once the secret is known
	got      []captured
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{handlers: map[string]http.Handler{}}
	r.port, r.ca = harness.StartTLSReceiver(t, receiverHost, http.HandlerFunc(r.serve))
	return r
}

func (r *receiver) hostPort() string { return fmt.Sprintf("%s:%d", receiverHost, r.port) }

func (r *receiver) url(path string) string { return "https://" + r.hostPort() + path }

// handle makes h the handler of path.
func (r *receiver) handle(path string, h http.Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handlers[path] = h
}

// serve records the raw request and passes it to the path's middleware;
// before a path has one it answers 503, which the server retries.
func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	c := captured{Path: req.URL.Path, Header: req.Header.Clone(), Body: body}
	r.mu.Lock()
	h := r.handlers[req.URL.Path]
	r.mu.Unlock()
	if h == nil {
		c.Status = http.StatusServiceUnavailable
	} else {
		req.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req.WithContext(context.WithValue(req.Context(), capturedKey{}, &c)))
		c.Status = rec.Code
	}
	r.mu.Lock()
	r.got = append(r.got, c)
	r.mu.Unlock()
	w.WriteHeader(c.Status)
}

type capturedKey struct{}

// events is the receiver's own handler behind the middleware: it records
// the delivery the middleware verified and answers 204.
var events = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
	c := req.Context().Value(capturedKey{}).(*captured)
	c.Delivery, c.Delivered = webhookverify.FromContext(req.Context())
	w.WriteHeader(http.StatusNoContent)
})

// requests returns a copy of what arrived.
func (r *receiver) requests() []captured {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]captured(nil), r.got...)
}

// world is a process of role all, assembled like `bothy serve`, on two
// free loopback ports, delivering to the receiver.
type world struct {
	cfg  *wire.Config
	recv *receiver
}

func startWorld(t *testing.T) *world {
	t.Helper()
	w := &world{recv: newReceiver(t)}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, w.recv.ca, 0o600))
	db := pgtest.New(t)
	w.cfg = harness.LoadConfig(t, db, func(cfg *wire.Config) {
		var err error
		cfg.Webhook.AllowedHosts, err = hostlist.Parse([]string{w.recv.hostPort()})
		require.NoError(t, err)
		cfg.Egress.AllowedHosts, err = hostlist.Parse([]string{w.recv.hostPort() + ";allow_private"})
		require.NoError(t, err)
		cfg.Egress.ExtraCAFile = caFile
		cfg.HTTP.ListenAddress = harness.FreeAddress(t)
		cfg.HTTP.OperatorListenAddress = harness.FreeAddress(t)
	})
	p, err := wire.NewProcess(context.Background(), w.cfg, wire.RoleAll, wire.Deps{
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Resolver: egresstest.NewResolver(map[string][]netip.Addr{receiverHost: {netip.MustParseAddr("127.0.0.1")}}),
	})
	require.NoError(t, err)
	harness.RunProcess(t, p, w.cfg)
	harness.CreateOwner(t, db, w.cfg, p.Modules())
	return w
}

// base is the address of the process's public API: plain http on a
// loopback address, which the key sources accept (`make run` serves so).
func (w *world) base() string { return "http://" + w.cfg.HTTP.ListenAddress }

// call sends method path (below /api/v1) to the process with a JSON body
// (none when nil) and the bearer token (none when empty); the status must
// be want.
func (w *world) call(t *testing.T, token, method, path string, body any, want int) map[string]any {
	t.Helper()
	return harness.Call(t, w.cfg, token, method, path, body, want)
}

// TestLibrariesVerifyARealDelivery (issue 16): a process of role all
// delivers Alex's message to two subscriptions of Tracker on a TLS
// receiver whose handlers are the Go library's middleware, with a
// KeySource on the process's own getWebhookKeys: the manifest's
// subscription (v1a only) and one created with enable_hmac (v1a and v1,
// the middleware holding the whsec_ secret). Both deliveries are accepted
// by v1a with the active key and end succeeded. The captured requests are
// then checked again: v1 alone verifies the HMAC delivery, a changed body
// fails, and the JavaScript library (run with Node) verifies both with
// its own KeySource on the running process and rejects the changed body.
func TestLibrariesVerifyARealDelivery(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	require.NoError(t, err, "the JavaScript library runs with Node: install nodejs")
	w := startWorld(t)
	recv := w.recv

	support := harness.CreateSupport(t, w.cfg)
	robin, alex, space, channel := support.Robin, support.Alex, support.Space, support.Eskalation
	app := w.call(t, robin, "POST", "/apps", map[string]any{"manifest": map[string]any{
		"name": "Tracker", "scopes": []string{"events:subscribe", "messages:read"}, "events": []string{"message.created"},
		"delivery": map[string]any{"mode": "webhook", "events_url": recv.url(v1aPath)},
	}}, http.StatusCreated)["id"].(string)
	w.call(t, robin, "POST", "/apps/"+app+"/installation", map[string]any{
		"scopes": []string{"events:subscribe", "messages:read"}, "event_subscriptions": []string{"message.created"},
	}, http.StatusCreated)
	hmacSub := w.call(t, robin, "POST", "/apps/"+app+"/webhook-subscriptions",
		map[string]any{"url": recv.url(hmacPath), "event_types": []string{"message.created"}, "enable_hmac": true}, http.StatusCreated)
	secret := hmacSub["hmac_secret"].(string)
	w.call(t, robin, "POST", "/apps/"+app+"/grants", map[string]any{"space_id": space, "channel_id": channel, "level": "read"}, http.StatusCreated)

	// The receiver: one KeySource on the instance, one verifier per
	// subscription, the library's middleware in front of its handler.
	keys, err := webhookverify.NewKeySource(w.base(), webhookverify.KeySourceOptions{})
	require.NoError(t, err)
	onlyKeys, err := webhookverify.New(webhookverify.Options{Keys: keys})
	require.NoError(t, err)
	withSecret, err := webhookverify.New(webhookverify.Options{Keys: keys, Secret: secret})
	require.NoError(t, err)
	recv.handle(v1aPath, onlyKeys.Middleware(events))
	recv.handle(hmacPath, withSecret.Middleware(events))

	w.call(t, alex, "POST", "/channels/"+channel+"/messages", map[string]any{"text": "The printer on floor 2 is down again."}, http.StatusCreated)

	delivered := func() map[string]captured {
		out := map[string]captured{}
		for _, c := range recv.requests() {
			if c.Status == http.StatusNoContent {
				out[c.Path] = c
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(delivered()) == 2 }, 30*time.Second, 50*time.Millisecond,
		"both subscriptions' deliveries verified by the Go library")
	for _, c := range recv.requests() {
		require.Equal(t, http.StatusNoContent, c.Status, "every request the receiver got verified (%s)", c.Path)
	}

	published := w.call(t, "", "GET", "/instance/webhook-keys", nil, http.StatusOK)["keys"].([]any)
	active := published[0].(map[string]any)
	require.Equal(t, "active", active["state"])
	got := delivered()
	for _, path := range []string{v1aPath, hmacPath} {
		c := got[path]
		require.True(t, c.Delivered, path)
		require.Equal(t, webhookverify.SchemeV1A, c.Delivery.Scheme, "%s: v1a verified", path)
		require.Equal(t, active["kid"], c.Delivery.KeyID, "%s: with the active key of getWebhookKeys", path)
		require.Equal(t, c.Header.Get("webhook-id"), c.Delivery.ID)
		var envelope struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		}
		require.NoError(t, json.Unmarshal(c.Body, &envelope))
		require.Equal(t, "message.created", envelope.Type)
		require.Equal(t, envelope.ID, c.Delivery.ID)
	}
	require.Contains(t, got[hmacPath].Header.Get("webhook-signature"), "v1,", "the HMAC subscription's delivery carries v1")
	require.NotContains(t, got[v1aPath].Header.Get("webhook-signature"), "v1,", "the manifest's subscription signs v1a only")

	// The captured requests again, offline. v1 alone: the keys are of no
	// instance, so only the secret can verify.
	ctx := t.Context()
	hmacReq := got[hmacPath]
	seed := bytes.Repeat([]byte{0x5a}, ed25519.SeedSize)
	otherKeys := webhookverify.StaticKeys{{PublicKey: ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)}}
	v1Only, err := webhookverify.New(webhookverify.Options{Keys: otherKeys, Secret: secret})
	require.NoError(t, err)
	d, err := v1Only.Verify(ctx, hmacReq.Header, hmacReq.Body)
	require.NoError(t, err)
	require.Equal(t, webhookverify.SchemeV1, d.Scheme)
	changed := bytes.Replace(hmacReq.Body, []byte("printer"), []byte("Printer"), 1)
	for _, v := range []*webhookverify.Verifier{onlyKeys, withSecret, v1Only} {
		_, err := v.Verify(ctx, hmacReq.Header, changed)
		require.True(t, errors.Is(err, webhookverify.ErrNoMatchingSignature), "a changed body: %v", err)
	}

	// The JavaScript library over the same requests, with its own
	// KeySource on the running process.
	type jsDelivery struct {
		Name    string            `json:"name"`
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body_base64"`
		Secret  string            `json:"secret,omitempty"`
	}
	var list []jsDelivery
	for _, path := range []string{v1aPath, hmacPath} {
		c := got[path]
		h := map[string]string{}
		for _, name := range []string{"content-type", "webhook-id", "webhook-timestamp", "webhook-signature"} {
			h[name] = c.Header.Get(name)
		}
		jd := jsDelivery{Name: path, Headers: h, Body: base64.StdEncoding.EncodeToString(c.Body)}
		if path == hmacPath {
			jd.Secret = secret
		}
		list = append(list, jd)
	}
	raw, err := json.Marshal(map[string]any{"keys_base": w.base(), "deliveries": list})
	require.NoError(t, err)
	input := filepath.Join(t.TempDir(), "deliveries.json")
	require.NoError(t, os.WriteFile(input, raw, 0o600))
	lib, err := filepath.Abs(jsLibrary)
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "verify_deliveries.mjs"), lib, input)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "node: %s", out)

	var results []struct {
		Name      string `json:"name"`
		Scheme    string `json:"scheme"`
		KeyID     string `json:"key_id"`
		V1Scheme  string `json:"v1_scheme"`
		Tampered  string `json:"tampered"`
		WebhookID string `json:"webhook_id"`
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &results), "node: %s", out)
	require.Len(t, results, 2)
	for _, r := range results {
		require.Equal(t, "v1a", r.Scheme, r.Name)
		require.Equal(t, active["kid"], r.KeyID, r.Name)
		require.Equal(t, got[r.Name].Delivery.ID, r.WebhookID, r.Name)
		require.Equal(t, "no_matching_signature", r.Tampered, r.Name)
		if r.Name == hmacPath {
			require.Equal(t, "v1", r.V1Scheme, "the JavaScript library verifies v1 alone")
		}
	}
	require.NotContains(t, string(out), secret, "node printed no secret")
}
