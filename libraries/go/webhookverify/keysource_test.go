package webhookverify_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"bothy/libraries/go/webhookverify"
)

// keysPath is the path of getWebhookKeys below an instance's address.
const keysPath = "/api/v1/instance/webhook-keys"

// keysServer is an instance's getWebhookKeys on 127.0.0.1 behind TLS,
// whose answer a test changes between requests.
type keysServer struct {
	*httptest.Server

	mu           sync.Mutex
	requests     int
	keys         []map[string]string // kid, public_key, state
	cacheControl string
	age          string
	status       int
	body         string        // replaces the JSON document when set
	block        chan struct{} // requests wait for it to close when set
}

// newKeysServer serves the given signers' public keys (kid "kid-<i>",
// state active for the first, retiring for the others) with
// Cache-Control "public, max-age=300", like a server with the default
// agent.jwks_max_age.
func newKeysServer(t *testing.T, signers ...ed25519.PrivateKey) *keysServer {
	t.Helper()
	s := &keysServer{cacheControl: "public, max-age=300", status: http.StatusOK}
	s.setSigners(t, signers...)
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *keysServer) setSigners(t *testing.T, signers ...ed25519.PrivateKey) {
	t.Helper()
	var keys []map[string]string
	for i, k := range signers {
		state := "active"
		if i > 0 {
			state = "retiring"
		}
		keys = append(keys, map[string]string{"kid": fmt.Sprintf("kid-%d", i), "public_key": publicKeyText(t, k.Public().(ed25519.PublicKey)), "state": state})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = keys
}

func (s *keysServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || r.URL.Path != keysPath {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.requests++
	block, status, cc, age, body := s.block, s.status, s.cacheControl, s.age, s.body
	doc, _ := json.Marshal(map[string]any{"keys": s.keys})
	s.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-r.Context().Done():
			return
		}
	}
	if body == "" {
		body = string(doc)
	}
	w.Header().Set("Content-Type", "application/json")
	if cc != "" {
		w.Header().Set("Cache-Control", cc)
	}
	if age != "" {
		w.Header().Set("Age", age)
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// set changes the server's state under its lock.
func (s *keysServer) set(change func(s *keysServer)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	change(s)
}

// count returns how many requests reached getWebhookKeys.
func (s *keysServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1796032800, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// signer returns an Ed25519 key made from a seed of one repeated byte.
func signer(b byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed([]byte(strings.Repeat(string([]byte{b}), ed25519.SeedSize)))
}

// sign returns the headers and body of a delivery signed with keys at ts.
func sign(ts time.Time, body string, keys ...ed25519.PrivateKey) http.Header {
	id := "019ad4a0-7c00-7000-8000-000000000001"
	sec := strconv.FormatInt(ts.Unix(), 10)
	content := []byte(id + "." + sec + "." + body)
	var entries []string
	for _, k := range keys {
		entries = append(entries, webhookverify.SchemeV1A+","+b64(ed25519.Sign(k, content)))
	}
	h := http.Header{}
	h.Set(webhookverify.HeaderID, id)
	h.Set(webhookverify.HeaderTimestamp, sec)
	h.Set(webhookverify.HeaderSignature, strings.Join(entries, " "))
	return h
}

// source returns a key source of srv with the clock and the options.
func source(t *testing.T, srv *keysServer, clk *fakeClock, o webhookverify.KeySourceOptions) *webhookverify.KeySource {
	t.Helper()
	o.Client = srv.Client()
	o.Now = clk.Now
	ks, err := webhookverify.NewKeySource(srv.URL, o)
	if err != nil {
		t.Fatalf("NewKeySource: %v", err)
	}
	return ks
}

func TestKeySourceKeepsTheKeysForTheMaxAgeOfCacheControl(t *testing.T) {
	t.Parallel()
	srv := newKeysServer(t, signer(1), signer(2))
	clk := newFakeClock()
	ks := source(t, srv, clk, webhookverify.KeySourceOptions{})

	keys, err := ks.Keys(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0].ID != "kid-0" || keys[0].State != "active" || keys[1].State != "retiring" ||
		!keys[1].PublicKey.Equal(signer(2).Public()) {
		t.Fatalf("keys = %+v", keys)
	}
	clk.Advance(299 * time.Second)
	if _, err := ks.Keys(t.Context()); err != nil || srv.count() != 1 {
		t.Fatalf("within max-age: %v, %d requests", err, srv.count())
	}
	clk.Advance(time.Second)
	if _, err := ks.Keys(t.Context()); err != nil || srv.count() != 2 {
		t.Fatalf("after max-age: %v, %d requests", err, srv.count())
	}
}

func TestKeySourceFreshnessFollowsCacheControlAndAge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		cacheControl string
		age          string
		fresh        time.Duration // the last moment the keys are fresh
	}{
		{"max-age", "public, max-age=300", "", 299 * time.Second},
		{"upper case and a quoted value", `Public, Max-Age="120"`, "", 119 * time.Second},
		{"Age counts against max-age", "max-age=300", "200", 99 * time.Second},
		{"no Cache-Control: the minimum interval", "", "", 59 * time.Second},
		{"no-store: the minimum interval", "no-store", "", 59 * time.Second},
		{"no-cache: the minimum interval", "max-age=300, no-cache", "", 59 * time.Second},
		{"a max-age below the minimum interval", "max-age=5", "", 59 * time.Second},
		{"an invalid max-age: the minimum interval", "max-age=soon", "", 59 * time.Second},
		{"a max-age over a day is cut to a day", "max-age=999999999", "", 24*time.Hour - time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newKeysServer(t, signer(1))
			srv.set(func(s *keysServer) { s.cacheControl, s.age = tc.cacheControl, tc.age })
			clk := newFakeClock()
			ks := source(t, srv, clk, webhookverify.KeySourceOptions{})
			if _, err := ks.Keys(t.Context()); err != nil {
				t.Fatal(err)
			}
			clk.Advance(tc.fresh)
			if _, err := ks.Keys(t.Context()); err != nil || srv.count() != 1 {
				t.Fatalf("at %v: %v, %d requests, want 1", tc.fresh, err, srv.count())
			}
			clk.Advance(time.Second)
			if _, err := ks.Keys(t.Context()); err != nil || srv.count() != 2 {
				t.Fatalf("at %v: %v, %d requests, want 2", tc.fresh+time.Second, err, srv.count())
			}
		})
	}
}

// TestVerifierFetchesTheKeysAgainForANewSigner: after a rotation the
// delivery is signed by a key published after the source fetched; the
// verifier fetches once more and accepts it. A second delivery no key
// verifies, within the minimum interval, causes no request.
func TestVerifierFetchesTheKeysAgainForANewSigner(t *testing.T) {
	t.Parallel()
	srv := newKeysServer(t, signer(1))
	clk := newFakeClock()
	ks := source(t, srv, clk, webhookverify.KeySourceOptions{MinRefetchInterval: time.Minute})
	v, err := webhookverify.New(webhookverify.Options{Keys: ks, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(t.Context(), sign(clk.Now(), "{}", signer(1)), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	srv.setSigners(t, signer(2), signer(1))
	d, err := v.Verify(t.Context(), sign(clk.Now(), "{}", signer(2)), []byte("{}"))
	if err != nil || d.KeyID != "kid-0" || srv.count() != 2 {
		t.Fatalf("the new signer: %+v, %v, %d requests", d, err, srv.count())
	}

	_, err = v.Verify(t.Context(), sign(clk.Now(), "{}", signer(3)), []byte("{}"))
	if !errors.Is(err, webhookverify.ErrNoMatchingSignature) || srv.count() != 2 {
		t.Fatalf("an unknown signer within the interval: %v, %d requests", err, srv.count())
	}
	clk.Advance(time.Minute)
	_, err = v.Verify(t.Context(), sign(clk.Now(), "{}", signer(3)), []byte("{}"))
	if !errors.Is(err, webhookverify.ErrNoMatchingSignature) || srv.count() != 3 {
		t.Fatalf("an unknown signer after the interval: %v, %d requests", err, srv.count())
	}
}

func TestKeySourceFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(s *keysServer)
		also   error // besides ErrKeysUnavailable
	}{
		{"a 500 answer", func(s *keysServer) { s.status = http.StatusInternalServerError }, nil},
		{"a 404 answer", func(s *keysServer) { s.status = http.StatusNotFound }, nil},
		{"not JSON", func(s *keysServer) { s.body = "<html>" }, nil},
		{"no keys member", func(s *keysServer) { s.body = `{"items": []}` }, nil},
		{"an empty list", func(s *keysServer) { s.body = `{"keys": []}` }, nil},
		{"a key without whpk_", func(s *keysServer) {
			s.body = `{"keys": [{"kid": "k", "public_key": "MCowBQYDK2VwAyEA", "state": "active"}]}`
		}, webhookverify.ErrInvalidKey},
		{"a key that is not Ed25519", func(s *keysServer) {
			s.body = `{"keys": [{"kid": "k", "public_key": "whpk_AAAA", "state": "active"}]}`
		}, webhookverify.ErrInvalidKey},
		{"a document over 1 MiB", func(s *keysServer) { s.body = `{"keys": [], "pad": "` + strings.Repeat("x", 1<<20) + `"}` }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newKeysServer(t, signer(1))
			srv.set(tc.change)
			ks := source(t, srv, newFakeClock(), webhookverify.KeySourceOptions{})
			_, err := ks.Keys(t.Context())
			if !errors.Is(err, webhookverify.ErrKeysUnavailable) || (tc.also != nil && !errors.Is(err, tc.also)) {
				t.Fatalf("got %v", err)
			}
			if webhookverify.StatusCode(err) != http.StatusServiceUnavailable {
				t.Fatalf("status %d", webhookverify.StatusCode(err))
			}
		})
	}
}

// TestKeySourceKeepsTheLastKeysWhenAFetchFails: the keys stay in use while
// getWebhookKeys fails, and a failed fetch is not repeated within the
// minimum interval; without any keys, the failure is the answer until the
// interval has passed.
func TestKeySourceKeepsTheLastKeysWhenAFetchFails(t *testing.T) {
	t.Parallel()
	srv := newKeysServer(t, signer(1))
	clk := newFakeClock()
	ks := source(t, srv, clk, webhookverify.KeySourceOptions{MinRefetchInterval: time.Minute})
	if _, err := ks.Keys(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv.set(func(s *keysServer) { s.status = http.StatusServiceUnavailable })
	clk.Advance(300 * time.Second)
	keys, err := ks.Keys(t.Context())
	if err != nil || len(keys) != 1 || srv.count() != 2 {
		t.Fatalf("stale keys after a failure: %v, %v, %d requests", keys, err, srv.count())
	}
	clk.Advance(59 * time.Second)
	if _, err := ks.Keys(t.Context()); err != nil || srv.count() != 2 {
		t.Fatalf("within the interval after a failure: %v, %d requests", err, srv.count())
	}
	clk.Advance(time.Second)
	if _, err := ks.Keys(t.Context()); err != nil || srv.count() != 3 {
		t.Fatalf("after the interval: %v, %d requests", err, srv.count())
	}

	empty := newKeysServer(t)
	empty.set(func(s *keysServer) { s.status = http.StatusBadGateway })
	clk2 := newFakeClock()
	ks2 := source(t, empty, clk2, webhookverify.KeySourceOptions{MinRefetchInterval: time.Minute})
	for range 3 {
		if _, err := ks2.Keys(t.Context()); !errors.Is(err, webhookverify.ErrKeysUnavailable) {
			t.Fatalf("no keys yet: %v", err)
		}
	}
	if empty.count() != 1 {
		t.Fatalf("a failed first fetch is repeated within the interval: %d requests", empty.count())
	}
	clk2.Advance(time.Minute)
	_, _ = ks2.Keys(t.Context())
	if empty.count() != 2 {
		t.Fatalf("after the interval: %d requests, want 2", empty.count())
	}
}

// TestKeySourceNeverBlocksLongerThanTheCaller: while getWebhookKeys hangs,
// Keys returns when the caller's context ends; the callers waiting at the
// same time share one request.
func TestKeySourceNeverBlocksLongerThanTheCaller(t *testing.T) {
	t.Parallel()
	srv := newKeysServer(t, signer(1))
	release := make(chan struct{})
	srv.set(func(s *keysServer) { s.block = release })
	ks := source(t, srv, newFakeClock(), webhookverify.KeySourceOptions{})

	ctx, cancel := context.WithCancel(t.Context())
	const callers = 8
	errs := make(chan error, callers)
	var started sync.WaitGroup
	for range callers {
		started.Add(1)
		go func() {
			started.Done()
			_, err := ks.Keys(ctx)
			errs <- err
		}()
	}
	started.Wait()
	cancel()
	for range callers {
		err := <-errs
		if !errors.Is(err, webhookverify.ErrKeysUnavailable) || !errors.Is(err, context.Canceled) {
			t.Fatalf("a caller whose context ended: %v", err)
		}
	}
	close(release)
	// The fetch goes on without the callers and fills the cache.
	keys, err := ks.Keys(t.Context())
	if err != nil || len(keys) != 1 {
		t.Fatalf("after the release: %v, %v", keys, err)
	}
	if srv.count() != 1 {
		t.Fatalf("%d requests, want 1 shared by every caller", srv.count())
	}
}

func TestKeySourceBoundsAFetchWithFetchTimeout(t *testing.T) {
	t.Parallel()
	srv := newKeysServer(t, signer(1))
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv.set(func(s *keysServer) { s.block = release })
	ks := source(t, srv, newFakeClock(), webhookverify.KeySourceOptions{FetchTimeout: time.Millisecond})
	_, err := ks.Keys(t.Context())
	if !errors.Is(err, webhookverify.ErrKeysUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
}

func TestNewKeySourceChecksTheAddress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		base string
		ok   bool
		want string // the URL fetched
	}{
		{"https://chat.example.com", true, "https://chat.example.com" + keysPath},
		{"https://chat.example.com/", true, "https://chat.example.com" + keysPath},
		{"https://chat.example.com:8443/bothy", true, "https://chat.example.com:8443/bothy" + keysPath},
		{"http://127.0.0.1:8080", true, "http://127.0.0.1:8080" + keysPath},
		{"http://localhost:8080", true, "http://localhost:8080" + keysPath},
		{"http://[::1]:8080", true, "http://[::1]:8080" + keysPath},
		{"http://chat.example.com", false, ""},
		{"http://10.0.0.1", false, ""},
		{"ftp://chat.example.com", false, ""},
		{"https://robin@chat.example.com", false, ""},
		{"https://chat.example.com/?a=b", false, ""},
		{"https://chat.example.com/#keys", false, ""},
		{"chat.example.com", false, ""},
		{"", false, ""},
	} {
		ks, err := webhookverify.NewKeySource(tc.base, webhookverify.KeySourceOptions{})
		if (err == nil) != tc.ok {
			t.Fatalf("%q: %v", tc.base, err)
		}
		if tc.ok && ks.URL() != tc.want {
			t.Fatalf("%q: URL %q, want %q", tc.base, ks.URL(), tc.want)
		}
	}
	if _, err := webhookverify.NewKeySource("https://chat.example.com", webhookverify.KeySourceOptions{MinRefetchInterval: -time.Second}); err == nil {
		t.Fatal("a negative MinRefetchInterval is accepted")
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// roundTrip is an http.RoundTripper of a function.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestKeySourceRefusesAnAnswerOverPlainHTTP: a redirect of the https
// address to plain http on another host is not trusted, even when the
// client follows it.
func TestKeySourceRefusesAnAnswerOverPlainHTTP(t *testing.T) {
	t.Parallel()
	doc := `{"keys": [{"kid": "k", "public_key": "` + publicKeyText(t, signer(1).Public().(ed25519.PublicKey)) + `", "state": "active"}]}`
	client := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		if r.URL.Scheme == "https" {
			return &http.Response{StatusCode: http.StatusFound, Header: http.Header{"Location": {"http://keys.example.com" + keysPath}},
				Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(doc)), Request: r}, nil
	})}
	ks, err := webhookverify.NewKeySource("https://chat.example.com", webhookverify.KeySourceOptions{Client: client})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ks.Keys(t.Context()); !errors.Is(err, webhookverify.ErrKeysUnavailable) || !strings.Contains(err.Error(), "plain http") {
		t.Fatalf("got %v", err)
	}
}
