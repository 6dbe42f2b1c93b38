package webhookverify_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"bothy/libraries/go/webhookverify"
)

// vectorsPath is the repository's signature vectors, the contract of every
// verifier (docs/api/webhooks.md 2.2). The tests read the one file instead
// of a copy, so a copy can never drift from what the server signs.
const vectorsPath = "../../../api/webhook-test-vectors.json"

// vectorCase is one signature case of the vector file.
type vectorCase struct {
	Name            string   `json:"name"`
	WebhookID       string   `json:"webhook_id"`
	Timestamp       int64    `json:"timestamp"`
	Body            string   `json:"body"`
	PublicKey       []string `json:"public_key"`
	HMACSecrets     []string `json:"hmac_secrets"`
	SignatureHeader string   `json:"signature_header"`
}

// readVectors reads the signature cases; a missing file fails the test
// with the path it looked for.
func readVectors(t testing.TB) []vectorCase {
	t.Helper()
	raw, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatalf("the library's tests read %s of the repository: %v", vectorsPath, err)
	}
	var vf struct {
		Signatures []vectorCase `json:"signatures"`
	}
	if err := json.Unmarshal(raw, &vf); err != nil {
		t.Fatalf("decoding %s: %v", vectorsPath, err)
	}
	if len(vf.Signatures) == 0 {
		t.Fatalf("%s has no signature case", vectorsPath)
	}
	return vf.Signatures
}

// header returns the three webhook headers of a case.
func (c vectorCase) header() http.Header {
	h := http.Header{}
	h.Set("webhook-id", c.WebhookID)
	h.Set("webhook-timestamp", strconv.FormatInt(c.Timestamp, 10))
	h.Set("webhook-signature", c.SignatureHeader)
	return h
}

// unrelatedKey returns, in its whpk_ form, an Ed25519 public key that
// signed no case of the vector file.
func unrelatedKey(t testing.TB) string {
	t.Helper()
	seed := bytes.Repeat([]byte{0x5a}, ed25519.SeedSize)
	return publicKeyText(t, ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey))
}

// publicKeyText returns the whpk_ form of key, as getWebhookKeys shows it.
func publicKeyText(t testing.TB, key ed25519.PublicKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return webhookverify.PublicKeyPrefix + base64.StdEncoding.EncodeToString(der)
}

// verifier returns a verifier of the keys (whpk_) and the secret (none
// when empty) whose clock shows now.
func verifier(t testing.TB, keys []string, secret string, now time.Time) *webhookverify.Verifier {
	t.Helper()
	set, err := webhookverify.ParseStaticKeys(keys...)
	if err != nil {
		t.Fatalf("ParseStaticKeys: %v", err)
	}
	v, err := webhookverify.New(webhookverify.Options{Keys: set, Secret: secret, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return v
}

// TestVerifierVerifiesTheVectors runs every case of
// api/webhook-test-vectors.json: each public key (v1a) and each HMAC
// secret (v1) verifies on its own; a body changed by one byte, a timestamp
// outside the tolerance, a missing webhook-id and the keys and secrets of
// the other cases are rejected with their errors.
func TestVerifierVerifiesTheVectors(t *testing.T) {
	t.Parallel()
	cases := readVectors(t)
	var allKeys, allSecrets []string
	for _, c := range cases {
		allKeys = append(allKeys, c.PublicKey...)
		allSecrets = append(allSecrets, c.HMACSecrets...)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			body := []byte(c.Body)
			now := time.Unix(c.Timestamp, 0)
			var otherKeys []string
			for _, k := range allKeys {
				if !slices.Contains(c.PublicKey, k) {
					otherKeys = append(otherKeys, k)
				}
			}

			d, err := verifier(t, c.PublicKey, "", now).Verify(ctx, c.header(), body)
			if err != nil {
				t.Fatalf("every key of the case: %v", err)
			}
			if d.ID != c.WebhookID || !d.Timestamp.Equal(now) || d.Scheme != webhookverify.SchemeV1A {
				t.Fatalf("delivery = %+v", d)
			}
			for i, k := range c.PublicKey {
				if _, err := verifier(t, []string{k}, "", now).Verify(ctx, c.header(), body); err != nil {
					t.Fatalf("key %d alone: %v", i, err)
				}
			}
			for i, s := range c.HMACSecrets {
				// A key of no case verifies no v1a entry, so only the
				// secret can accept the delivery.
				d, err := verifier(t, []string{unrelatedKey(t)}, s, now).Verify(ctx, c.header(), body)
				if err != nil || d.Scheme != webhookverify.SchemeV1 {
					t.Fatalf("secret %d alone: %+v, %v", i, d, err)
				}
			}

			changed := bytes.Clone(body)
			changed[len(changed)/2] ^= 0x01
			withoutID := c.header()
			withoutID.Del("webhook-id")
			for _, s := range append([]string{""}, c.HMACSecrets...) {
				for _, bad := range []struct {
					name   string
					header http.Header
					body   []byte
					now    time.Time
					want   error
				}{
					{"a body changed by one byte", c.header(), changed, now, webhookverify.ErrNoMatchingSignature},
					{"a timestamp older than the tolerance", c.header(), body, now.Add(webhookverify.DefaultTolerance + time.Second), webhookverify.ErrTimestampOutOfTolerance},
					{"a timestamp newer than the tolerance", c.header(), body, now.Add(-webhookverify.DefaultTolerance - time.Second), webhookverify.ErrTimestampOutOfTolerance},
					{"no webhook-id", withoutID, body, now, webhookverify.ErrMissingHeader},
				} {
					_, err := verifier(t, c.PublicKey, s, bad.now).Verify(ctx, bad.header, bad.body)
					if !errors.Is(err, bad.want) {
						t.Fatalf("%s (with a secret: %t): got %v, want %v", bad.name, s != "", err, bad.want)
					}
				}
			}
			for _, k := range otherKeys {
				if _, err := verifier(t, []string{k}, "", now).Verify(ctx, c.header(), body); !errors.Is(err, webhookverify.ErrNoMatchingSignature) {
					t.Fatalf("a key of another case: %v", err)
				}
			}
			for _, s := range allSecrets {
				if slices.Contains(c.HMACSecrets, s) {
					continue
				}
				if _, err := verifier(t, []string{unrelatedKey(t)}, s, now).Verify(ctx, c.header(), body); !errors.Is(err, webhookverify.ErrNoMatchingSignature) {
					t.Fatalf("a secret of another case: %v", err)
				}
			}
		})
	}
}

// TestTheToleranceIsInclusive: a timestamp exactly the tolerance away
// verifies, one second more does not; a tolerance of the options replaces
// the default.
func TestTheToleranceIsInclusive(t *testing.T) {
	t.Parallel()
	c := readVectors(t)[0]
	set, err := webhookverify.ParseStaticKeys(c.PublicKey...)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(c.Timestamp, 0)
	for _, tc := range []struct {
		tolerance time.Duration
		now       time.Time
		ok        bool
	}{
		{0, ts.Add(webhookverify.DefaultTolerance), true},
		{0, ts.Add(-webhookverify.DefaultTolerance), true},
		{0, ts.Add(webhookverify.DefaultTolerance + time.Second), false},
		{time.Minute, ts.Add(time.Minute), true},
		{time.Minute, ts.Add(-time.Minute - time.Second), false},
		{time.Hour, ts.Add(59 * time.Minute), true},
	} {
		now := tc.now
		v, err := webhookverify.New(webhookverify.Options{Keys: set, Tolerance: tc.tolerance, Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		_, err = v.Verify(t.Context(), c.header(), []byte(c.Body))
		if (err == nil) != tc.ok {
			t.Fatalf("tolerance %v, now %v from the timestamp: %v", tc.tolerance, now.Sub(ts), err)
		}
	}
}
