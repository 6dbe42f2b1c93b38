package webhook_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

func TestSignedContent(t *testing.T) {
	t.Parallel()
	id := ids.MustParse("019ad4a0-7c00-7000-8000-00000000000a")
	got := webhook.SignedContent(id, 1796032800, []byte(`{"text":"Hallo Sam"}`))
	require.Equal(t, `019ad4a0-7c00-7000-8000-00000000000a.1796032800.{"text":"Hallo Sam"}`, string(got))
	require.Equal(t, "019ad4a0-7c00-7000-8000-00000000000a.0.", string(webhook.SignedContent(id, 0, nil)))
}

func TestSignatureHeaderFormat(t *testing.T) {
	t.Parallel()
	edA := bytes.Repeat([]byte{0xa1}, ed25519.SignatureSize)
	edB := bytes.Repeat([]byte{0xb2}, ed25519.SignatureSize)
	hNew := bytes.Repeat([]byte{0xfe}, 32)
	hOld := bytes.Repeat([]byte{0x01}, 32)
	b64 := base64.StdEncoding.EncodeToString

	for _, tc := range []struct {
		name string
		v1a  [][]byte
		v1   [][]byte
		want string
	}{
		{"one signer without HMAC", [][]byte{edA}, nil, "v1a," + b64(edA)},
		{"one signer and one secret", [][]byte{edA}, [][]byte{hNew}, "v1a," + b64(edA) + " v1," + b64(hNew)},
		{"signers first in their order, then HMAC newest first", [][]byte{edA, edB}, [][]byte{hNew, hOld},
			"v1a," + b64(edA) + " v1a," + b64(edB) + " v1," + b64(hNew) + " v1," + b64(hOld)},
		{"nothing to sign gives an empty header", nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := webhook.SignatureHeader(tc.v1a, tc.v1)
			require.Equal(t, tc.want, got)
			if got == "" {
				return
			}
			// Every entry is <scheme>,<standard base64 with padding>.
			for i, entry := range strings.Split(got, " ") {
				scheme, sig, ok := strings.Cut(entry, ",")
				require.True(t, ok, entry)
				require.Contains(t, []string{"v1a", "v1"}, scheme)
				require.Equal(t, i >= len(tc.v1a), scheme == "v1", "v1a entries come first")
				raw, err := base64.StdEncoding.Strict().DecodeString(sig)
				require.NoError(t, err)
				require.NotEmpty(t, raw)
				require.True(t, strings.HasSuffix(sig, "="), "padding is kept")
			}
		})
	}
}

func TestSignatureSchemes(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"v1a"}, webhook.SignatureSchemes(false))
	require.Equal(t, []string{"v1a", "v1"}, webhook.SignatureSchemes(true))
}

func TestHMACOverlap(t *testing.T) {
	t.Parallel()
	const overlap = time.Hour
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		gen       int
		rotatedAt time.Time
		overlap   time.Duration
		want      []int
	}{
		{"generation 0, never rotated", 0, time.Time{}, overlap, []int{0}},
		{"generation 0 has no previous even with a rotation time", 0, now.Add(-time.Minute), overlap, []int{0}},
		{"inside the overlap both, newest first", 3, now.Add(-time.Minute), overlap, []int{3, 2}},
		{"the first rotation signs with 1 and 0", 1, now.Add(-59 * time.Minute), overlap, []int{1, 0}},
		{"at the end of the overlap only the new one", 3, now.Add(-overlap), overlap, []int{3}},
		{"after the overlap only the new one", 3, now.Add(-2 * time.Hour), overlap, []int{3}},
		{"without a rotation time only the current one", 3, time.Time{}, overlap, []int{3}},
		{"a zero overlap keeps only the current one", 3, now, 0, []int{3}},
		{"a rotation time ahead of now is inside the overlap", 2, now.Add(time.Minute), overlap, []int{2, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, webhook.HMACGenerations(tc.gen, tc.rotatedAt, tc.overlap, now))
		})
	}
}

func TestDeriveHMACKeyStable(t *testing.T) {
	t.Parallel()
	vf := readVectors(t)
	require.NotEmpty(t, vf.Derivation)
	c := vf.Derivation[0]
	master, err := hex.DecodeString(c.MasterHex)
	require.NoError(t, err)
	sub := ids.MustParse(c.SubscriptionID)
	masterCopy := bytes.Clone(master)

	key := webhook.DeriveHMACKey(master, sub, c.Generation)
	require.Equal(t, c.DerivedHex, hex.EncodeToString(key), "the committed vector")
	require.Len(t, key, 32)
	require.Equal(t, key, webhook.DeriveHMACKey(master, sub, c.Generation), "the same inputs give the same key")
	require.Equal(t, masterCopy, master, "the master key is not modified")

	other := ids.MustParse("019ad4a0-7c00-7000-8000-0000000000ff")
	require.NotEqual(t, key, webhook.DeriveHMACKey(master, other, c.Generation), "another subscription")
	require.NotEqual(t, key, webhook.DeriveHMACKey(master, sub, c.Generation+1), "another generation")
	otherMaster := bytes.Clone(master)
	otherMaster[0] ^= 1
	require.NotEqual(t, key, webhook.DeriveHMACKey(otherMaster, sub, c.Generation), "another master key")
}

func TestParseSecret(t *testing.T) {
	t.Parallel()
	for _, valid := range []string{
		"whsec_EXAMPLEkeyForTheParserTest000000",
		"whsec_EXAMPLEkeyForTheParserTest00Aw==",
		"whsec_EXAMPLE1BothyWebhookVectorSecretGeneration0=",
	} {
		key, err := webhook.ParseSecret(valid)
		require.NoError(t, err, valid)
		require.Equal(t, valid, webhook.FormatSecret(key))
	}

	for name, s := range map[string]string{
		"empty":              "",
		"no prefix":          "EXAMPLEkeyForTheParserTest000000",
		"another prefix":     "whpk_EXAMPLEkeyForTheParserTest000000",
		"upper case prefix":  "WHSEC_EXAMPLEkeyForTheParserTest000000",
		"no key":             "whsec_",
		"missing padding":    "whsec_EXAMPLEkeyForTheParserTest0000",
		"non-canonical bits": "whsec_EXAMPLEkeyForTheParserTest0000==",
		"URL-safe alphabet":  "whsec_EXAMPLE-key_ForTheParserTest0000",
		"white space":        "whsec_EXAMPLEkeyForTheParserTest000000 ",
		"line break":         "whsec_EXAMPLEkeyForTheParser\nTest000000",
		"not base64 at all":  "whsec_EXAMPLE!",
	} {
		_, err := webhook.ParseSecret(s)
		require.Equal(t, errs.CodeValidationFailed, errs.CodeOf(err), name)
		require.NotContains(t, err.Error(), "EXAMPLE", "the error text carries no secret")
	}
}

func FuzzParseSecret(f *testing.F) {
	f.Add("whsec_EXAMPLEkeyForTheParserTest000000") // valid
	f.Add("whsec_EXAMPLEkeyForTheParserTest0000==") // non-canonical padding bits
	f.Add("whsec_")                                 // empty key
	f.Add("EXAMPLE")                                // no prefix
	f.Fuzz(func(t *testing.T, s string) {
		key, err := webhook.ParseSecret(s)
		if err != nil {
			return
		}
		if len(key) == 0 {
			t.Fatalf("%q parsed to an empty key", s)
		}
		// Round trip: a secret has exactly one spelling.
		if got := webhook.FormatSecret(key); got != s {
			t.Fatalf("FormatSecret(ParseSecret(%q)) = %q", s, got)
		}
	})
}

func TestEd25519Signature(t *testing.T) {
	t.Parallel()
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x42}, ed25519.SeedSize))
	content := []byte("019ad4a0-7c00-7000-8000-00000000000a.1796032800.{}")
	sig := webhook.Ed25519Signature(priv, content)
	require.Len(t, sig, ed25519.SignatureSize)
	require.True(t, ed25519.Verify(priv.Public().(ed25519.PublicKey), content, sig))
	require.Equal(t, sig, webhook.Ed25519Signature(priv, content), "Ed25519 is deterministic")
}

// BenchmarkSign measures the signing work of one attempt with HMAC enabled:
// the signed content of a 1 KiB body, one v1a signature, the derivation of
// one HMAC key, its v1 signature and the header.
func BenchmarkSign(b *testing.B) {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x42}, ed25519.SeedSize))
	master := bytes.Repeat([]byte{0x07}, 32)
	sub := ids.MustParse("019ad4a0-7c00-7000-8000-000000000001")
	id := ids.MustParse("019ad4a0-7c00-7000-8000-00000000000a")
	body := bytes.Repeat([]byte("a"), 1024)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		content := webhook.SignedContent(id, 1796032800, body)
		v1a := webhook.Ed25519Signature(priv, content)
		v1 := webhook.HMACSignature(webhook.DeriveHMACKey(master, sub, 1), content)
		_ = webhook.SignatureHeader([][]byte{v1a}, [][]byte{v1})
	}
}
