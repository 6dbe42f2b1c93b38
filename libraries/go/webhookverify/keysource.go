package webhookverify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// KeysPath is the path of getWebhookKeys below an instance's address.
const KeysPath = "/api/v1/instance/webhook-keys"

// Defaults of KeySourceOptions.
const (
	// DefaultMinRefetchInterval is the least time between two fetches of
	// a KeySource whose options give none.
	DefaultMinRefetchInterval = time.Minute
	// DefaultFetchTimeout bounds one fetch of a KeySource whose options
	// give none.
	DefaultFetchTimeout = 10 * time.Second
	// MaxCacheAge is the longest a KeySource keeps keys without fetching,
	// whatever max-age the answer gives, so a key the server stopped
	// publishing is dropped within a day.
	MaxCacheAge = 24 * time.Hour
	// MaxKeysDocument is the largest answer of getWebhookKeys a KeySource
	// reads; a real one is a few hundred bytes per key.
	MaxKeysDocument = 1 << 20
)

// KeySourceOptions configure a KeySource. Every field is optional.
type KeySourceOptions struct {
	// Client sends the requests; nil means http.DefaultClient. Give it the
	// TLS configuration the instance needs (its certificate authority);
	// its Timeout, when set, applies too.
	Client *http.Client
	// MinRefetchInterval is the least time between two fetches: a key set
	// that is stale, a delivery that no cached key verifies and a failed
	// fetch all wait for it, so neither a Cache-Control of no-store nor a
	// stream of forged deliveries makes the receiver call the server more
	// often. Keys are also kept at least this long. 0 means
	// DefaultMinRefetchInterval.
	MinRefetchInterval time.Duration
	// FetchTimeout bounds one fetch, from the request to the last byte of
	// the answer; 0 means DefaultFetchTimeout. A caller's context may end
	// its own wait earlier; the fetch then goes on for the other callers.
	FetchTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// KeySource is a KeySet that fetches the keys from getWebhookKeys of one
// instance and keeps them in memory:
//
//   - The keys stay fresh for the max-age of the answer's Cache-Control
//     (less its Age header), at least MinRefetchInterval and at most
//     MaxCacheAge; no-store and no-cache keep them MinRefetchInterval.
//     Keys fetches when they are stale.
//   - Refresh, which a Verifier calls when no key verified a delivery,
//     fetches at once unless the last fetch started less than
//     MinRefetchInterval ago.
//   - When a fetch fails, the keys of the last successful fetch stay in
//     use (a server whose key endpoint is down still signs with the keys
//     it published) and the next fetch waits MinRefetchInterval.
//   - Concurrent callers share one fetch. A fetch runs for at most
//     FetchTimeout, independent of the callers; each caller waits at most
//     until its own context ends.
//
// A KeySource is safe for concurrent use. Create one per instance with
// NewKeySource and keep it for the life of the receiver.
type KeySource struct {
	url                string
	client             *http.Client
	minRefetchInterval time.Duration
	fetchTimeout       time.Duration
	now                func() time.Time

	mu         sync.Mutex
	keys       []Key
	freshUntil time.Time
	lastFetch  time.Time // when the last fetch started; zero before the first
	lastErr    error     // the error of the last fetch; nil after a success
	inflight   *fetch    // the fetch in progress, if any
}

var _ KeySet = (*KeySource)(nil)

// fetch is one request to getWebhookKeys that callers wait for.
type fetch struct {
	done chan struct{}
	keys []Key
	err  error
}

// NewKeySource returns a key source for the instance at base, the address
// the instance's API is served at (for example https://chat.example.com,
// or https://example.com/chat behind a path prefix); the keys come from
// base + KeysPath. base must be an absolute https address without user
// info, query or fragment; plain http is accepted only for a loopback
// host (localhost, 127.0.0.0/8, ::1), where `make run` serves. It fails
// when base is not such an address or an option is negative. Nothing is
// fetched until the first Keys.
func NewKeySource(base string, o KeySourceOptions) (*KeySource, error) {
	u, err := url.Parse(base)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return nil, errors.New("webhookverify: the instance address must be absolute, as https://chat.example.com")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return nil, errors.New("webhookverify: the instance address must have no user info, query or fragment")
	}
	if u.Scheme != "https" && (u.Scheme != "http" || !isLoopback(u.Hostname())) {
		return nil, errors.New("webhookverify: the instance address must be https (http only for a loopback host)")
	}
	if o.MinRefetchInterval < 0 || o.FetchTimeout < 0 {
		return nil, errors.New("webhookverify: KeySourceOptions durations must not be negative")
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + KeysPath
	u.RawPath = ""
	ks := &KeySource{url: u.String(), client: o.Client, minRefetchInterval: o.MinRefetchInterval,
		fetchTimeout: o.FetchTimeout, now: o.Now}
	if ks.client == nil {
		ks.client = http.DefaultClient
	}
	if ks.minRefetchInterval == 0 {
		ks.minRefetchInterval = DefaultMinRefetchInterval
	}
	if ks.fetchTimeout == 0 {
		ks.fetchTimeout = DefaultFetchTimeout
	}
	if ks.now == nil {
		ks.now = time.Now
	}
	return ks, nil
}

// isLoopback reports whether host is localhost or a loopback address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// URL returns the address of getWebhookKeys the source fetches.
func (ks *KeySource) URL() string { return ks.url }

// Keys returns the cached keys while they are fresh, and otherwise fetches
// them (or waits for the fetch in progress). After a failed fetch it
// returns the keys of the last successful one, if any. It fails with an
// error wrapping ErrKeysUnavailable (and the cause: the context's error,
// the request's, or ErrInvalidKey for a document with an invalid key) when
// it has no keys to return.
func (ks *KeySource) Keys(ctx context.Context) ([]Key, error) {
	ks.mu.Lock()
	now := ks.now()
	switch {
	case ks.keys != nil && now.Before(ks.freshUntil):
		keys := ks.keys
		ks.mu.Unlock()
		return keys, nil
	case ks.inflight == nil && !ks.lastFetch.IsZero() && now.Sub(ks.lastFetch) < ks.minRefetchInterval:
		// The last fetch failed (or its keys expire sooner than the
		// interval): do not call the server again yet.
		keys, err := ks.keys, ks.lastErr
		ks.mu.Unlock()
		if keys != nil {
			return keys, nil
		}
		return nil, err
	}
	f := ks.startLocked(now)
	ks.mu.Unlock()
	return ks.wait(ctx, f, false)
}

// Refresh fetches the keys at once (or waits for the fetch in progress)
// and returns them with fetched true, unless the last fetch started less
// than MinRefetchInterval ago: then it returns the cached keys with
// fetched false. It fails like Keys.
func (ks *KeySource) Refresh(ctx context.Context) ([]Key, bool, error) {
	ks.mu.Lock()
	now := ks.now()
	if ks.inflight == nil && !ks.lastFetch.IsZero() && now.Sub(ks.lastFetch) < ks.minRefetchInterval {
		keys, err := ks.keys, ks.lastErr
		ks.mu.Unlock()
		if keys != nil {
			return keys, false, nil
		}
		return nil, false, err
	}
	f := ks.startLocked(now)
	ks.mu.Unlock()
	keys, err := ks.wait(ctx, f, true)
	return keys, err == nil, err
}

// startLocked returns the fetch in progress or starts one; ks.mu is held.
func (ks *KeySource) startLocked(now time.Time) *fetch {
	if ks.inflight != nil {
		return ks.inflight
	}
	f := &fetch{done: make(chan struct{})}
	ks.inflight, ks.lastFetch = f, now
	go ks.run(f)
	return f
}

// run performs one fetch, detached from every caller's context and bounded
// by the fetch timeout, and records its outcome.
func (ks *KeySource) run(f *fetch) {
	ctx, cancel := context.WithTimeout(context.Background(), ks.fetchTimeout)
	defer cancel()
	keys, maxAge, err := ks.get(ctx)

	ks.mu.Lock()
	defer ks.mu.Unlock()
	ks.inflight = nil
	if err != nil {
		ks.lastErr = fmt.Errorf("%w: %w", ErrKeysUnavailable, err)
		f.err = ks.lastErr
	} else {
		ks.keys, ks.lastErr = keys, nil
		ks.freshUntil = ks.lastFetch.Add(min(max(maxAge, ks.minRefetchInterval), MaxCacheAge))
		f.keys = keys
	}
	close(f.done)
}

// wait waits for f or for ctx to end. With the stale keys of an earlier
// fetch it returns those when f fails, unless strict (Refresh reports the
// failure so the delivery is answered 503 rather than 401).
func (ks *KeySource) wait(ctx context.Context, f *fetch, strict bool) ([]Key, error) {
	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", ErrKeysUnavailable, ctx.Err())
	}
	if f.err == nil {
		return f.keys, nil
	}
	ks.mu.Lock()
	keys := ks.keys
	ks.mu.Unlock()
	if keys != nil && !strict {
		return keys, nil
	}
	return nil, f.err
}

// keysDocument is the answer of getWebhookKeys (api/openapi.yaml,
// WebhookKeys).
type keysDocument struct {
	Keys *[]struct {
		KID       string    `json:"kid"`
		PublicKey string    `json:"public_key"`
		State     string    `json:"state"`
		NotAfter  time.Time `json:"not_after"`
	} `json:"keys"`
}

// get sends one request and returns the keys of the answer and its
// freshness lifetime.
func (ks *KeySource) get(ctx context.Context) ([]Key, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.url, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := ks.client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	if u := resp.Request.URL; u.Scheme != "https" && !isLoopback(u.Hostname()) {
		return nil, 0, errors.New("getWebhookKeys was answered over plain http")
	}
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("getWebhookKeys answered %d", resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxKeysDocument+1))
	if err != nil {
		return nil, 0, err
	}
	if len(raw) > MaxKeysDocument {
		return nil, 0, fmt.Errorf("getWebhookKeys answered more than %d bytes", MaxKeysDocument)
	}
	var doc keysDocument
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, 0, errors.New("getWebhookKeys answered no JSON key list")
	}
	if doc.Keys == nil || len(*doc.Keys) == 0 {
		return nil, 0, errors.New("getWebhookKeys lists no key")
	}
	keys := make([]Key, 0, len(*doc.Keys))
	for i, k := range *doc.Keys {
		pub, err := ParsePublicKey(k.PublicKey)
		if err != nil {
			return nil, 0, fmt.Errorf("key %d of getWebhookKeys: %w", i, err)
		}
		keys = append(keys, Key{ID: k.KID, PublicKey: pub, State: k.State, NotAfter: k.NotAfter})
	}
	return keys, freshness(resp.Header), nil
}
