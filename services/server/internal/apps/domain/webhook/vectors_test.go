package webhook_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/ids"
)

// vectorsPath is api/webhook-test-vectors.json at the repository root, the
// contract file of every verifier (D-M2-26-12).
const vectorsPath = "../../../../../../api/webhook-test-vectors.json"

var updateVectors = flag.Bool("update-vectors", false,
	"rewrite api/webhook-test-vectors.json from the fixed inputs of vectorInputs")

// vectorFile is the format of the vector file, documented in
// docs/api/webhooks.md 2.2 and the README of this package.
type vectorFile struct {
	Version    int              `json:"version"`
	Derivation []derivationCase `json:"derivation"`
	Signatures []signatureCase  `json:"signatures"`
}

type derivationCase struct {
	MasterHex      string `json:"master_hex"`
	SubscriptionID string `json:"subscription_id"`
	Generation     int    `json:"generation"`
	DerivedHex     string `json:"derived_hex"`
}

type signatureCase struct {
	Name      string `json:"name"`
	WebhookID string `json:"webhook_id"`
	Timestamp int64  `json:"timestamp"`
	Body      string `json:"body"`
	// Ed25519SeedBase64 and PublicKey list the v1a signers in signer order,
	// one entry per v1a signature of SignatureHeader.
	Ed25519SeedBase64 []string `json:"ed25519_seed_base64"`
	PublicKey         []string `json:"public_key"`
	// HMACSecrets lists the v1 secrets newest generation first, one entry
	// per v1 signature of SignatureHeader.
	HMACSecrets     []string `json:"hmac_secrets"`
	SignatureHeader string   `json:"signature_header"`
}

func readVectors(t *testing.T) vectorFile {
	t.Helper()
	raw, err := os.ReadFile(vectorsPath)
	require.NoError(t, err, "run go test -run TestWebhookTestVectors -update-vectors once to create it")
	var vf vectorFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&vf))
	return vf
}

// seq returns n bytes counting up from first: low-entropy keys that no
// secret scanner mistakes for real ones.
func seq(first byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = first + byte(i)
	}
	return b
}

// The fixed inputs of the vector file. Signer seeds and master keys are byte
// sequences; the HMAC secrets are hand-written standard base64 texts that
// carry the marker EXAMPLE (the gitleaks stopword), decoded to get the keys.
var (
	signerSeedA = seq(0x40, ed25519.SeedSize)
	signerSeedB = seq(0x60, ed25519.SeedSize)
	secretGen0  = "whsec_EXAMPLE0BothyWebhookVectorSecretOlderKey000="
	secretGen1  = "whsec_EXAMPLE1BothyWebhookVectorSecretNewerKey000="
	timestamp   = int64(1796032800) // 2026-11-30T10:00:00Z
)

type vectorInput struct {
	name    string
	id      string
	body    string
	seeds   [][]byte
	secrets []string
}

func vectorInputs() []vectorInput {
	return []vectorInput{
		{
			name:    "one signing key and one HMAC secret",
			id:      "019ad4a0-7c00-7000-8000-000000000001",
			body:    `{"id":"019ad4a0-7c00-7000-8000-000000000001","seq":41,"type":"message.created","occurred_at":"2026-11-30T10:00:00Z","sync_epoch":"019ad400-0000-7000-8000-000000000001","payload":{"channel_id":"019ad4a0-7c00-7000-8000-0000000000c1","text":"Hello Sam"}}`,
			seeds:   [][]byte{signerSeedA},
			secrets: []string{secretGen0},
		},
		{
			name:  "two v1a signers during a key rotation, no HMAC",
			id:    "019ad4a0-7c00-7000-8000-000000000002",
			body:  `{"id":"019ad4a0-7c00-7000-8000-000000000002","seq":42,"type":"channel.created","occurred_at":"2026-11-30T10:00:00Z","sync_epoch":"019ad400-0000-7000-8000-000000000001","payload":{"name":"Eskalation"}}`,
			seeds: [][]byte{signerSeedA, signerSeedB},
		},
		{
			name:    "two HMAC generations inside the rotation overlap",
			id:      "019ad4a0-7c00-7000-8000-000000000003",
			body:    `{"id":"019ad4a0-7c00-7000-8000-000000000003","seq":43,"type":"message.updated","occurred_at":"2026-11-30T10:00:00Z","sync_epoch":"019ad400-0000-7000-8000-000000000001","payload":{"text":"Hello Robin"}}`,
			seeds:   [][]byte{signerSeedA},
			secrets: []string{secretGen1, secretGen0},
		},
		{
			name:    "non-ASCII characters and JSON escapes in the body",
			id:      "019ad4a0-7c00-7000-8000-000000000004",
			body:    `{"id":"019ad4a0-7c00-7000-8000-000000000004","seq":44,"type":"message.created","occurred_at":"2026-11-30T10:00:00Z","sync_epoch":"019ad400-0000-7000-8000-000000000001","payload":{"text":"Grüße, Alex! Café ✓ 日本語 😀 \"quoted\" \\ back\nslash\ttab \u00e9 \u2603 \ud83d\ude00 \u003cb\u003e"}}`,
			seeds:   [][]byte{signerSeedB},
			secrets: []string{secretGen0},
		},
		{
			name:    "a truncated payload",
			id:      "019ad4a0-7c00-7000-8000-000000000005",
			body:    `{"id":"019ad4a0-7c00-7000-8000-000000000005","seq":45,"type":"message.created","occurred_at":"2026-11-30T10:00:00Z","sync_epoch":"019ad400-0000-7000-8000-000000000001","truncated":true,"payload":{"channel_id":"019ad4a0-7c00-7000-8000-0000000000c1"}}`,
			seeds:   [][]byte{signerSeedA},
			secrets: []string{secretGen0},
		},
	}
}

func derivationInputs() []derivationCase {
	masterA := hex.EncodeToString(seq(0x00, 32))
	masterB := hex.EncodeToString(seq(0x80, 64))
	return []derivationCase{
		{MasterHex: masterA, SubscriptionID: "019ad4a0-7c00-7000-8000-0000000000a1", Generation: 0},
		{MasterHex: masterA, SubscriptionID: "019ad4a0-7c00-7000-8000-0000000000a1", Generation: 1},
		{MasterHex: masterA, SubscriptionID: "019ad4a0-7c00-7000-8000-0000000000a2", Generation: 0},
		{MasterHex: masterA, SubscriptionID: "019ad4a0-7c00-7000-8000-0000000000a1", Generation: 12},
		{MasterHex: masterB, SubscriptionID: "019ad4a0-7c00-7000-8000-0000000000a1", Generation: 0},
	}
}

// formatPublicKey is the whpk_ form of D-M2-26-11: standard base64 of
// the DER SubjectPublicKeyInfo (RFC 8410). instance.FormatWebhookPublicKey
// produces it in the server; the test writes it independently.
func formatPublicKey(t *testing.T, pub ed25519.PublicKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	require.NoError(t, err)
	return "whpk_" + base64.StdEncoding.EncodeToString(der)
}

func parsePublicKey(t *testing.T, s string) ed25519.PublicKey {
	t.Helper()
	rest, ok := strings.CutPrefix(s, "whpk_")
	require.True(t, ok, "prefix whpk_")
	der, err := base64.StdEncoding.Strict().DecodeString(rest)
	require.NoError(t, err)
	pub, err := x509.ParsePKIXPublicKey(der)
	require.NoError(t, err)
	key, ok := pub.(ed25519.PublicKey)
	require.True(t, ok, "an Ed25519 key")
	return key
}

// sign computes a case's header with the domain functions alone.
func sign(t *testing.T, id string, ts int64, body []byte, seeds, secrets []string) string {
	t.Helper()
	content := webhook.SignedContent(ids.MustParse(id), ts, body)
	var v1a, v1 [][]byte
	for _, s := range seeds {
		seed, err := base64.StdEncoding.Strict().DecodeString(s)
		require.NoError(t, err)
		v1a = append(v1a, webhook.Ed25519Signature(ed25519.NewKeyFromSeed(seed), content))
	}
	for _, s := range secrets {
		key, err := webhook.ParseSecret(s)
		require.NoError(t, err)
		v1 = append(v1, webhook.HMACSignature(key, content))
	}
	return webhook.SignatureHeader(v1a, v1)
}

func generateVectors(t *testing.T) []byte {
	t.Helper()
	vf := vectorFile{Version: 1, Derivation: derivationInputs()}
	for i, c := range vf.Derivation {
		master, err := hex.DecodeString(c.MasterHex)
		require.NoError(t, err)
		vf.Derivation[i].DerivedHex = hex.EncodeToString(webhook.DeriveHMACKey(master, ids.MustParse(c.SubscriptionID), c.Generation))
	}
	for _, in := range vectorInputs() {
		c := signatureCase{
			Name: in.name, WebhookID: in.id, Timestamp: timestamp, Body: in.body,
			Ed25519SeedBase64: []string{}, PublicKey: []string{}, HMACSecrets: append([]string{}, in.secrets...),
		}
		for _, seed := range in.seeds {
			c.Ed25519SeedBase64 = append(c.Ed25519SeedBase64, base64.StdEncoding.EncodeToString(seed))
			c.PublicKey = append(c.PublicKey, formatPublicKey(t, ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)))
		}
		c.SignatureHeader = sign(t, c.WebhookID, c.Timestamp, []byte(c.Body), c.Ed25519SeedBase64, c.HMACSecrets)
		vf.Signatures = append(vf.Signatures, c)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(vf))
	return buf.Bytes()
}

// headersFor builds the three Standard Webhooks headers of a case.
func headersFor(c signatureCase) http.Header {
	h := http.Header{}
	h.Set("webhook-id", c.WebhookID)
	h.Set("webhook-timestamp", strconv.FormatInt(c.Timestamp, 10))
	h.Set("webhook-signature", c.SignatureHeader)
	return h
}

// TestWebhookTestVectors is G10, part 1: the committed vectors are
// reproduced byte for byte by the domain functions and verified by
// independent implementations, crypto/ed25519 for v1a and the Standard
// Webhooks reference library for v1.
func TestWebhookTestVectors(t *testing.T) {
	if *updateVectors {
		require.NoError(t, os.WriteFile(vectorsPath, generateVectors(t), 0o644))
	}
	t.Parallel()
	vf := readVectors(t)
	require.Equal(t, 1, vf.Version)
	require.NotEmpty(t, vf.Signatures)
	require.NotEmpty(t, vf.Derivation)

	for _, c := range vf.Signatures {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			body := []byte(c.Body)
			require.Equal(t, c.SignatureHeader, sign(t, c.WebhookID, c.Timestamp, body, c.Ed25519SeedBase64, c.HMACSecrets),
				"the domain functions reproduce the header")
			require.Len(t, c.PublicKey, len(c.Ed25519SeedBase64))

			entries := strings.Split(c.SignatureHeader, " ")
			require.Len(t, entries, len(c.PublicKey)+len(c.HMACSecrets))
			tampered := bytes.Clone(body)
			tampered[len(tampered)/2] ^= 0x01
			content := webhook.SignedContent(ids.MustParse(c.WebhookID), c.Timestamp, body)
			badContent := webhook.SignedContent(ids.MustParse(c.WebhookID), c.Timestamp, tampered)

			// v1a: crypto/ed25519 against the published key form.
			for i, pk := range c.PublicKey {
				seed, err := base64.StdEncoding.Strict().DecodeString(c.Ed25519SeedBase64[i])
				require.NoError(t, err)
				pub := parsePublicKey(t, pk)
				require.Equal(t, ed25519.NewKeyFromSeed(seed).Public(), pub, "public_key belongs to the seed")
				sig, ok := strings.CutPrefix(entries[i], "v1a,")
				require.True(t, ok, "entry %d is v1a", i)
				raw, err := base64.StdEncoding.Strict().DecodeString(sig)
				require.NoError(t, err)
				require.True(t, ed25519.Verify(pub, content, raw), "v1a of signer %d", i)
				require.False(t, ed25519.Verify(pub, badContent, raw), "v1a of signer %d over a changed body", i)
			}

			// v1: the Standard Webhooks reference library. It checks v1 only
			// and a fixed tolerance around the wall clock, so the fixed
			// timestamps of the file need the variant without that check.
			for i, secret := range c.HMACSecrets {
				require.Contains(t, secret, "EXAMPLE", "every whsec_ value carries the gitleaks stopword")
				require.True(t, strings.HasPrefix(entries[len(c.PublicKey)+i], "v1,"))
				wh, err := standardwebhooks.NewWebhook(secret)
				require.NoError(t, err)
				require.NoError(t, wh.VerifyIgnoringTimestamp(body, headersFor(c)), "v1 of secret %d", i)
				require.Error(t, wh.VerifyIgnoringTimestamp(tampered, headersFor(c)), "v1 of secret %d over a changed body", i)
				// Each secret matches exactly its own entry.
				ref, err := wh.Sign(c.WebhookID, time.Unix(c.Timestamp, 0), body)
				require.NoError(t, err)
				require.Equal(t, entries[len(c.PublicKey)+i], ref)
			}
		})
	}

	raw, err := os.ReadFile(vectorsPath)
	require.NoError(t, err)
	for i, c := range vf.Derivation {
		t.Run(fmt.Sprintf("derivation %d", i), func(t *testing.T) {
			t.Parallel()
			master, err := hex.DecodeString(c.MasterHex)
			require.NoError(t, err)
			key := webhook.DeriveHMACKey(master, ids.MustParse(c.SubscriptionID), c.Generation)
			require.Equal(t, c.DerivedHex, hex.EncodeToString(key))
			secret := webhook.FormatSecret(key)
			back, err := webhook.ParseSecret(secret)
			require.NoError(t, err)
			require.Equal(t, key, back)
			require.NotContains(t, string(raw), secret, "derived secrets appear only as derived_hex")

			// The reference library reads the whsec_ form the owner is shown.
			wh, err := standardwebhooks.NewWebhook(secret)
			require.NoError(t, err)
			content := webhook.SignedContent(ids.MustParse(c.SubscriptionID), timestamp, []byte("{}"))
			ref, err := wh.Sign(c.SubscriptionID, time.Unix(timestamp, 0), []byte("{}"))
			require.NoError(t, err)
			require.Equal(t, "v1,"+base64.StdEncoding.EncodeToString(webhook.HMACSignature(key, content)), ref)
		})
	}
}
