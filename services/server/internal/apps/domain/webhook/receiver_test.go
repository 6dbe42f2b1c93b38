package webhook_test

// From the import declaration on, this file is the Go example of
// docs/api/webhooks.md section 3 byte for byte: a receiver that verifies
// deliveries. TestReceiverGuideShowsTheTestedGoCode keeps the two equal,
// and the tests in example_receiver_test.go run it against the committed
// vectors (api/webhook-test-vectors.json).

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// ErrInvalidWebhook rejects a delivery: a header is missing or malformed,
// the timestamp lies outside the receiver's tolerance, or no signature
// verifies.
var ErrInvalidWebhook = errors.New("webhook rejected")

// FetchWebhookKeys reads the public keys of getWebhookKeys from the instance
// at base (for example https://chat.example.com). Keep them for the max-age
// of the response's Cache-Control and fetch again when a delivery verifies
// with none of them.
func FetchWebhookKeys(ctx context.Context, client *http.Client, base string) ([]ed25519.PublicKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/instance/webhook-keys", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New("getWebhookKeys failed")
	}
	var list struct {
		Keys []struct {
			PublicKey string `json:"public_key"`
		} `json:"keys"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, err
	}
	keys := make([]ed25519.PublicKey, 0, len(list.Keys))
	for _, k := range list.Keys {
		key, err := ParseWebhookKey(k.PublicKey)
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	return keys, nil
}

// ParseWebhookKey decodes a public_key of getWebhookKeys: whpk_ and the
// standard base64 of a DER SubjectPublicKeyInfo (RFC 8410).
func ParseWebhookKey(s string) (ed25519.PublicKey, error) {
	b64, ok := strings.CutPrefix(s, "whpk_")
	if !ok {
		return nil, ErrInvalidWebhook
	}
	der, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, err
	}
	pub, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, err
	}
	key, ok := pub.(ed25519.PublicKey)
	if !ok {
		return nil, ErrInvalidWebhook
	}
	return key, nil
}

// VerifyV1a accepts a delivery whose timestamp lies within tolerance of now
// and one of whose v1a signatures verifies with one of keys (Ed25519).
func VerifyV1a(keys []ed25519.PublicKey, header http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	if err := checkHeaders(header, now, tolerance); err != nil {
		return err
	}
	// The signed content: {webhook-id}.{webhook-timestamp}.{body}.
	content := []byte(header.Get("webhook-id") + "." + header.Get("webhook-timestamp") + ".")
	content = append(content, body...)
	for _, entry := range strings.Fields(header.Get("webhook-signature")) {
		scheme, b64, _ := strings.Cut(entry, ",")
		sig, err := base64.StdEncoding.DecodeString(b64)
		if scheme != "v1a" || err != nil {
			continue
		}
		for _, key := range keys {
			if ed25519.Verify(key, content, sig) {
				return nil
			}
		}
	}
	return ErrInvalidWebhook
}

// VerifyV1 accepts a delivery whose timestamp lies within tolerance of now
// and one of whose v1 signatures verifies with secret, the whsec_ value shown
// once (HMAC-SHA256), using the Standard Webhooks library. The library's own
// Verify does the same with its fixed tolerance and the system clock.
func VerifyV1(secret string, header http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	if err := checkHeaders(header, now, tolerance); err != nil {
		return err
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	return wh.VerifyIgnoringTimestamp(body, header)
}

// checkHeaders rejects a delivery without webhook-id or whose
// webhook-timestamp lies more than tolerance away from now, the receiver's
// guard against replays.
func checkHeaders(header http.Header, now time.Time, tolerance time.Duration) error {
	sec, err := strconv.ParseInt(header.Get("webhook-timestamp"), 10, 64)
	if err != nil || header.Get("webhook-id") == "" {
		return ErrInvalidWebhook
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return ErrInvalidWebhook
	}
	return nil
}
