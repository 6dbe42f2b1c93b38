package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// vectorFile is the signature test vector file shared with every SDK
// (api/webhook-test-vectors.json, docs/api/webhooks.md section 2.2).
var vectorFile = filepath.Join("..", "..", "..", "..", "api", "webhook-test-vectors.json")

// TestReceiverVerifiesTheSharedTestVectors proves the demo's receiver
// verifies exactly like the server signs: every vector with an HMAC secret
// passes with each of its secrets and each of its public keys; a vector
// without HMAC fails for want of a v1 signature only.
func TestReceiverVerifiesTheSharedTestVectors(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(vectorFile)
	require.NoError(t, err)
	var file struct {
		Signatures []struct {
			Name        string   `json:"name"`
			WebhookID   string   `json:"webhook_id"`
			Timestamp   int64    `json:"timestamp"`
			Body        string   `json:"body"`
			PublicKeys  []string `json:"public_key"`
			HMACSecrets []string `json:"hmac_secrets"`
			Header      string   `json:"signature_header"`
		} `json:"signatures"`
	}
	require.NoError(t, json.Unmarshal(raw, &file))
	require.NotEmpty(t, file.Signatures)
	for _, v := range file.Signatures {
		h := http.Header{}
		h.Set("webhook-id", v.WebhookID)
		h.Set("webhook-timestamp", strconv.FormatInt(v.Timestamp, 10))
		h.Set("webhook-signature", v.Header)
		now := time.Unix(v.Timestamp, 0)
		for i, pk := range v.PublicKeys {
			key, err := parseWebhookKey(pk)
			require.NoError(t, err, v.Name)
			keys := map[string]ed25519.PublicKey{"kid-" + strconv.Itoa(i): key}
			if len(v.HMACSecrets) == 0 {
				d := verify(h, []byte(v.Body), nil, keys, now)
				require.True(t, d.V1A, v.Name)
				require.Equal(t, "no v1 signature verified", d.Problem, v.Name)
				continue
			}
			for _, whsec := range v.HMACSecrets {
				r := &receiver{}
				require.NoError(t, r.setHMACSecret(whsec), v.Name)
				d := verify(h, []byte(v.Body), r.hmacSecret, keys, now)
				require.Empty(t, d.Problem, v.Name)
				require.True(t, d.V1 && d.V1A, v.Name)
				require.Equal(t, "kid-"+strconv.Itoa(i), d.V1AKid, v.Name)
			}
		}
	}
}

// signer makes requests signed like the server's: v1a with an Ed25519 key
// and v1 with an HMAC secret.
type signer struct {
	key    ed25519.PrivateKey
	secret []byte
}

func newSigner(t *testing.T) signer {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	return signer{key: key, secret: secret}
}

func (s signer) keys() map[string]ed25519.PublicKey {
	return map[string]ed25519.PublicKey{"k1": s.key.Public().(ed25519.PublicKey)}
}

// sign returns the headers of a delivery of body with id at ts.
func (s signer) sign(id string, ts int64, body []byte) http.Header {
	content := signedContent(id, strconv.FormatInt(ts, 10), body)
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", "v1a,"+base64.StdEncoding.EncodeToString(ed25519.Sign(s.key, content))+
		" v1,"+base64.StdEncoding.EncodeToString(hmacSHA256(s.secret, content)))
	return h
}

const testID = "019ad4a0-7c00-7000-8000-000000000001"

func testBody(id string) []byte {
	return []byte(`{"id":"` + id + `","seq":7,"type":"message.created","resource":{"kind":"message","id":"019ad4a0-7c00-7000-8000-0000000000b1"},"payload":{"text":"Hello Sam"}}`)
}

func TestReceiverAcceptsAProperlySignedDelivery(t *testing.T) {
	t.Parallel()
	s := newSigner(t)
	now := time.Unix(1796032800, 0)
	d := verify(s.sign(testID, now.Unix(), testBody(testID)), testBody(testID), s.secret, s.keys(), now)
	require.Equal(t, delivery{
		WebhookID: testID, Timestamp: now.Unix(), Type: "message.created", Seq: 7,
		ResourceID: "019ad4a0-7c00-7000-8000-0000000000b1", V1: true, V1A: true, V1AKid: "k1",
	}, d)
}

func TestReceiverRefusesWhatAReceiverMustRefuse(t *testing.T) {
	t.Parallel()
	s := newSigner(t)
	other := newSigner(t)
	now := time.Unix(1796032800, 0)
	body := testBody(testID)
	for _, tc := range []struct {
		name    string
		header  http.Header
		body    []byte
		secret  []byte
		keys    map[string]ed25519.PublicKey
		problem string
	}{
		{"a body changed after signing", s.sign(testID, now.Unix(), body), bytes.Replace(body, []byte("Sam"), []byte("Robin"), 1),
			s.secret, s.keys(), "no v1 signature verified"},
		{"another HMAC secret", s.sign(testID, now.Unix(), body), body, other.secret, s.keys(), "no v1 signature verified"},
		{"no HMAC secret known yet", s.sign(testID, now.Unix(), body), body, nil, s.keys(), "no v1 signature verified"},
		{"a v1a signature by an unpublished key", s.sign(testID, now.Unix(), body), body, s.secret, other.keys(), "no v1a signature verified"},
		{"a timestamp older than the tolerance", s.sign(testID, now.Add(-receiverTolerance-time.Second).Unix(), body), body,
			s.secret, s.keys(), "webhook-timestamp outside the tolerance"},
		{"a timestamp further ahead than the tolerance", s.sign(testID, now.Add(receiverTolerance+time.Second).Unix(), body), body,
			s.secret, s.keys(), "webhook-timestamp outside the tolerance"},
		{"a timestamp that is not a number", withHeader(s.sign(testID, now.Unix(), body), "webhook-timestamp", "soon"), body,
			s.secret, s.keys(), "webhook-timestamp is not a number"},
		{"a missing signature header", withHeader(s.sign(testID, now.Unix(), body), "webhook-signature", ""), body,
			s.secret, s.keys(), "webhook headers missing"},
		{"a missing webhook-id", withHeader(s.sign(testID, now.Unix(), body), "webhook-id", ""), body,
			s.secret, s.keys(), "webhook headers missing"},
		{"a signature over another webhook-id", withHeader(s.sign(testID, now.Unix(), body), "webhook-id", "019ad4a0-7c00-7000-8000-000000000002"), body,
			s.secret, s.keys(), "no v1 signature verified"},
		{"a body whose id differs from webhook-id", s.sign(testID, now.Unix(), testBody("019ad4a0-7c00-7000-8000-000000000009")),
			testBody("019ad4a0-7c00-7000-8000-000000000009"), s.secret, s.keys(), "body id differs from webhook-id"},
		{"a signed body that is not JSON", s.sign(testID, now.Unix(), []byte("Hello Sam")), []byte("Hello Sam"),
			s.secret, s.keys(), "body is not an event envelope"},
	} {
		d := verify(tc.header, tc.body, tc.secret, tc.keys, now)
		require.Equal(t, tc.problem, d.Problem, tc.name)
		require.False(t, d.Verified(), tc.name)
	}
}

func withHeader(h http.Header, name, value string) http.Header {
	h.Set(name, value)
	return h
}

func TestReceiverAnswersOverTLSForHooksExampleCom(t *testing.T) {
	t.Parallel()
	r, err := newReceiver()
	require.NoError(t, err)
	var printed []delivery
	r.onDelivery = func(d delivery) { printed = append(printed, d) }
	r.Start()
	t.Cleanup(func() { r.Stop(context.Background()) })
	s := newSigner(t)
	require.NoError(t, r.setHMACSecret("whsec_"+base64.StdEncoding.EncodeToString(s.secret)))
	r.setKeys(s.keys())

	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(r.CAPEM))
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Port)))
		},
	}}
	t.Cleanup(client.CloseIdleConnections)
	post := func(h http.Header, body []byte) int {
		req, err := http.NewRequest(http.MethodPost, r.url(), bytes.NewReader(body))
		require.NoError(t, err)
		req.Header = h
		resp, err := client.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp.StatusCode
	}
	body := testBody(testID)
	require.Equal(t, http.StatusNoContent, post(s.sign(testID, time.Now().Unix(), body), body))
	require.Equal(t, http.StatusUnauthorized, post(http.Header{}, body))

	got := r.deliveries()
	require.Len(t, got, 2)
	require.True(t, got[0].Verified())
	require.Equal(t, "message.created", got[0].Type)
	require.Equal(t, http.StatusUnauthorized, got[1].Status)
	require.Equal(t, got, printed)
}

func TestParseWebhookKeyAcceptsOnlyEd25519InWhpkForm(t *testing.T) {
	t.Parallel()
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ecDER, err := x509.MarshalPKIXPublicKey(&ecKey.PublicKey)
	require.NoError(t, err)
	const valid = "whpk_MCowBQYDK2VwAyEAJUO5L/EJVRFHatyDadtt3JM2ZaEZeN2hQE7hBmypVZ0="
	for _, tc := range []struct {
		name, in string
		ok       bool
	}{
		{"the key of the first test vector", valid, true},
		{"the key without its prefix", strings.TrimPrefix(valid, "whpk_"), false},
		{"a key that is not base64", "whpk_not base64!", false},
		{"base64 that is no SubjectPublicKeyInfo", "whpk_" + base64.StdEncoding.EncodeToString([]byte("Hello Sam")), false},
		{"a P-256 key", "whpk_" + base64.StdEncoding.EncodeToString(ecDER), false},
	} {
		key, err := parseWebhookKey(tc.in)
		if tc.ok {
			require.NoError(t, err, tc.name)
			require.Len(t, key, ed25519.PublicKeySize, tc.name)
		} else {
			require.Error(t, err, tc.name)
		}
	}
}

func TestFixedResolverAnswersOnlyItsHost(t *testing.T) {
	t.Parallel()
	r := fixedResolver{host: receiverHost, addr: netip.MustParseAddr("127.0.0.1")}
	for _, tc := range []struct {
		name, network, host string
		ok                  bool
	}{
		{"its host over ip", "ip", "hooks.example.com", true},
		{"its host over ip4, in another case, fully qualified", "ip4", "Hooks.Example.com.", true},
		{"its host over ip6 (it has no IPv6 address)", "ip6", "hooks.example.com", false},
		{"another host", "ip", "other.example.com", false},
	} {
		got, err := r.LookupNetIP(context.Background(), tc.network, tc.host)
		if tc.ok {
			require.NoError(t, err, tc.name)
			require.Equal(t, []netip.Addr{netip.MustParseAddr("127.0.0.1")}, got, tc.name)
			continue
		}
		var dnsErr *net.DNSError
		require.ErrorAs(t, err, &dnsErr, tc.name)
		require.True(t, dnsErr.IsNotFound, tc.name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.LookupNetIP(ctx, "ip", "hooks.example.com")
	require.ErrorIs(t, err, context.Canceled)
}

// FuzzParseSignatures checks the parser of webhook-signature: it never
// panics, returns only non-empty signatures, and what it returns renders
// back into a header that parses to the same result.
func FuzzParseSignatures(f *testing.F) {
	// The header of the first test vector: one v1a and one v1 entry.
	f.Add("v1a,FIMMMrx73i33Yzu+8cfGXs+7mVY2n7SluWqv9xP/ht4EMdkNEhFmxe9Vf9jxpOsb0bqI5YtRHcXH7Z2j7YhKAQ== v1,HSYotphjmehE8EuwFbNYd/Xp873wpYpvBMi3+7mkzlg=")
	// An unknown scheme and an entry without a comma are skipped.
	f.Add("v2,AAAA v1 v1,AAAA")
	// Base64 that does not decode, and an empty value.
	f.Add("v1,!!!! v1a,")
	// Tabs and repeated spaces between entries.
	f.Add("  v1,AAAA\tv1a,AAAA  ")
	// Nothing at all.
	f.Add("")
	f.Fuzz(func(t *testing.T, header string) {
		v1, v1a := parseSignatures(header)
		var entries []string
		for _, s := range v1 {
			require.NotEmpty(t, s)
			entries = append(entries, "v1,"+base64.StdEncoding.EncodeToString(s))
		}
		for _, s := range v1a {
			require.NotEmpty(t, s)
			entries = append(entries, "v1a,"+base64.StdEncoding.EncodeToString(s))
		}
		again1, againA := parseSignatures(strings.Join(entries, " "))
		require.Equal(t, v1, again1)
		require.Equal(t, v1a, againA)
	})
}
