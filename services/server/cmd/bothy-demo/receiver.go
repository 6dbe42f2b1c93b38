package main

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"bothy/server/cmd/internal/localrun"
)

// receiverHost is the host name of the demo's webhook receiver: its
// certificate names it, and the demo's resolver maps it to 127.0.0.1.
const receiverHost = "hooks.example.com"

// receiverPath is the path of the receiver's events_url.
const receiverPath = "/bothy"

// receiverTolerance is how far webhook-timestamp may lie from the
// receiver's clock: the Standard Webhooks default that docs/api/webhooks.md
// recommends to receivers (webhook.receiver_tolerance is a receiver value,
// not a server key).
const receiverTolerance = 5 * time.Minute

// receiverMaxBody is the largest body the receiver reads; a delivery is far
// smaller (sync.payload_text_max_bytes bounds its text).
const receiverMaxBody = 1 << 20

// delivery is one request that reached the receiver, with the results of
// its checks. It holds no secret and no signature.
type delivery struct {
	// WebhookID, Timestamp are the headers webhook-id and webhook-timestamp.
	WebhookID string
	Timestamp int64
	// Type, Seq and ResourceID come from the body (the event envelope).
	Type       string
	Seq        int64
	ResourceID string
	// V1 is true when a v1 entry verified with the HMAC secret; V1A when a
	// v1a entry verified with a published key, the one of V1AKid.
	V1, V1A bool
	V1AKid  string
	// Problem says why the receiver refused the request; empty when both
	// signatures verified and the timestamp is fresh.
	Problem string
	// Status is what the receiver answered: 204 or 401.
	Status int
}

// Verified reports whether the receiver accepted the delivery.
func (d delivery) Verified() bool { return d.Problem == "" }

// receiver is the demo's HTTPS webhook receiver on 127.0.0.1: it verifies
// every request the way docs/api/webhooks.md tells an app to, with the
// standard library only (crypto/hmac for v1, crypto/ed25519 for v1a, both
// over "{webhook-id}.{webhook-timestamp}.{body}"), answers 204 when both
// signatures verify and 401 otherwise, and records what it saw.
type receiver struct {
	*localrun.HTTPSServer
	now func() time.Time
	// onDelivery, when not nil, sees every recorded delivery (the demo
	// prints it).
	onDelivery func(delivery)

	mu         sync.Mutex
	hmacSecret []byte
	keys       map[string]ed25519.PublicKey
	got        []delivery
	arrived    chan struct{}
}

// newReceiver starts nothing yet: it issues a certificate for
// receiverHost from a CA made for this run and listens on 127.0.0.1 and a
// free port (localrun.NewHTTPSServer); Start serves. The CA certificate
// (CAPEM) is what the server must trust (egress.extra_ca_file).
func newReceiver() (*receiver, error) {
	r := &receiver{
		now:     time.Now,
		keys:    map[string]ed25519.PublicKey{},
		arrived: make(chan struct{}, 1),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+receiverPath, r.serve)
	srv, err := localrun.NewHTTPSServer("bothy demo CA", receiverHost, mux)
	if err != nil {
		return nil, err
	}
	r.HTTPSServer = srv
	return r, nil
}

// hostPort is receiverHost with the receiver's port, the form of
// webhook.allowed_hosts and egress.allowed_hosts entries.
func (r *receiver) hostPort() string { return net.JoinHostPort(receiverHost, strconv.Itoa(r.Port)) }

// url is the receiver's events_url.
func (r *receiver) url() string { return "https://" + r.hostPort() + receiverPath }

// setHMACSecret gives the receiver the subscription's secret in its whsec_
// form, as createWebhookSubscription returned it once.
func (r *receiver) setHMACSecret(whsec string) error {
	rest, ok := strings.CutPrefix(whsec, "whsec_")
	if !ok {
		return errors.New("receiver: the HMAC secret lacks the whsec_ prefix")
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(key) == 0 {
		return errors.New("receiver: the HMAC secret is not standard base64")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hmacSecret = key
	return nil
}

// setKeys gives the receiver the v1a public keys by kid, as getWebhookKeys
// published them.
func (r *receiver) setKeys(keys map[string]ed25519.PublicKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys = keys
}

// deliveries returns a copy of what arrived so far, in arrival order.
func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

// serve checks one request and answers 204 or 401.
func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, receiverMaxBody+1))
	d := delivery{WebhookID: req.Header.Get("webhook-id")}
	switch {
	case err != nil:
		d.Problem = "body unreadable"
	case len(body) > receiverMaxBody:
		d.Problem = "body too large"
	default:
		r.mu.Lock()
		secret, keys := r.hmacSecret, r.keys
		r.mu.Unlock()
		d = verify(req.Header, body, secret, keys, r.now())
	}
	d.Status = http.StatusNoContent
	if !d.Verified() {
		d.Status = http.StatusUnauthorized
	}
	r.mu.Lock()
	r.got = append(r.got, d)
	r.mu.Unlock()
	if r.onDelivery != nil {
		r.onDelivery(d)
	}
	select {
	case r.arrived <- struct{}{}:
	default:
	}
	w.WriteHeader(d.Status)
}

// verify checks a webhook request like a receiver following
// docs/api/webhooks.md: the three headers are present, the timestamp lies
// within receiverTolerance of now, a v1 entry of webhook-signature is the
// HMAC-SHA256 with secret and a v1a entry an Ed25519 signature by one of
// keys, both over "{webhook-id}.{webhook-timestamp}.{body}"; then it reads
// id, type, seq and resource.id from the body. The result's Problem names
// the first failed check.
func verify(h http.Header, body, secret []byte, keys map[string]ed25519.PublicKey, now time.Time) delivery {
	d := delivery{WebhookID: h.Get("webhook-id")}
	rawTS, header := h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if d.WebhookID == "" || rawTS == "" || header == "" {
		d.Problem = "webhook headers missing"
		return d
	}
	ts, err := strconv.ParseInt(rawTS, 10, 64)
	if err != nil {
		d.Problem = "webhook-timestamp is not a number"
		return d
	}
	d.Timestamp = ts
	if age := now.Sub(time.Unix(ts, 0)); age > receiverTolerance || age < -receiverTolerance {
		d.Problem = "webhook-timestamp outside the tolerance"
		return d
	}
	content := signedContent(d.WebhookID, rawTS, body)
	v1, v1a := parseSignatures(header)
	if len(secret) > 0 {
		want := hmacSHA256(secret, content)
		for _, sig := range v1 {
			if hmac.Equal(sig, want) {
				d.V1 = true
				break
			}
		}
	}
	for _, sig := range v1a {
		if kid, ok := verifyEd25519(keys, content, sig); ok {
			d.V1A, d.V1AKid = true, kid
			break
		}
	}
	switch {
	case !d.V1:
		d.Problem = "no v1 signature verified"
		return d
	case !d.V1A:
		d.Problem = "no v1a signature verified"
		return d
	}
	var env struct {
		ID       string `json:"id"`
		Seq      int64  `json:"seq"`
		Type     string `json:"type"`
		Resource struct {
			ID string `json:"id"`
		} `json:"resource"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		d.Problem = "body is not an event envelope"
		return d
	}
	d.Type, d.Seq, d.ResourceID = env.Type, env.Seq, env.Resource.ID
	if env.ID != d.WebhookID {
		d.Problem = "body id differs from webhook-id"
	}
	return d
}

// signedContent is what both schemes sign (Standard Webhooks):
// "{webhook-id}.{webhook-timestamp}.{body}", the timestamp exactly as the
// header carried it.
func signedContent(id, ts string, body []byte) []byte {
	out := make([]byte, 0, len(id)+len(ts)+2+len(body))
	out = append(out, id...)
	out = append(out, '.')
	out = append(out, ts...)
	out = append(out, '.')
	return append(out, body...)
}

// hmacSHA256 returns HMAC-SHA256(key, content).
func hmacSHA256(key, content []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(content)
	return m.Sum(nil)
}

// verifyEd25519 returns the kid of the key in keys that verifies sig over
// content.
func verifyEd25519(keys map[string]ed25519.PublicKey, content, sig []byte) (string, bool) {
	for kid, key := range keys {
		if ed25519.Verify(key, content, sig) {
			return kid, true
		}
	}
	return "", false
}

// parseSignatures splits a webhook-signature header into its decoded v1
// and v1a signatures. Entries are separated by spaces and read
// "<scheme>,<standard base64>"; entries of other schemes and entries that
// do not decode are skipped, as Standard Webhooks asks of receivers.
func parseSignatures(header string) (v1, v1a [][]byte) {
	for entry := range strings.FieldsSeq(header) {
		scheme, value, ok := strings.Cut(entry, ",")
		if !ok {
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(value)
		if err != nil || len(sig) == 0 {
			continue
		}
		switch scheme {
		case "v1":
			v1 = append(v1, sig)
		case "v1a":
			v1a = append(v1a, sig)
		}
	}
	return v1, v1a
}

// parseWebhookKey decodes a public key of getWebhookKeys: "whpk_" followed
// by the standard base64 of a DER SubjectPublicKeyInfo holding an Ed25519
// key (RFC 8410).
func parseWebhookKey(s string) (ed25519.PublicKey, error) {
	rest, ok := strings.CutPrefix(s, "whpk_")
	if !ok {
		return nil, errors.New("webhook key lacks the whpk_ prefix")
	}
	der, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return nil, errors.New("webhook key is not standard base64")
	}
	pub, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, errors.New("webhook key is not a SubjectPublicKeyInfo")
	}
	key, ok := pub.(ed25519.PublicKey)
	if !ok {
		return nil, errors.New("webhook key is not an Ed25519 key")
	}
	return key, nil
}
