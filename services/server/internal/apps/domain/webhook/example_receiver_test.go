package webhook_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// receiverGuidePath is docs/api/webhooks.md, whose section 3 shows the
// receiver examples that this file runs.
const receiverGuidePath = "../../../../../../docs/api/webhooks.md"

// receiverTolerance is the tolerance the examples give the receiver
// (webhook.receiver_tolerance of the guide: a value of the receiver, not of
// the server).
const receiverTolerance = time.Minute

// exampleVectors reads api/webhook-test-vectors.json for the examples,
// which have no *testing.T.
func exampleVectors() vectorFile {
	raw, err := os.ReadFile(vectorsPath)
	if err != nil {
		panic(err)
	}
	var vf vectorFile
	if err := json.Unmarshal(raw, &vf); err != nil {
		panic(err)
	}
	return vf
}

// keysServer answers getWebhookKeys with publicKeys, as an instance whose
// webhook_out keys they are would, on 127.0.0.1.
func keysServer(publicKeys []string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/api/v1/instance/webhook-keys" {
			http.NotFound(w, r)
			return
		}
		type key struct {
			Kid       string `json:"kid"`
			PublicKey string `json:"public_key"`
			State     string `json:"state"`
		}
		var body struct {
			Keys []key `json:"keys"`
		}
		for i, pk := range publicKeys {
			state := "active"
			if i > 0 {
				state = "retiring"
			}
			body.Keys = append(body.Keys, key{Kid: fmt.Sprintf("kid-%d", i), PublicKey: pk, State: state})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
}

// ExampleVerifyV1a verifies the first case of api/webhook-test-vectors.json
// with the key getWebhookKeys publishes; the same body changed by one byte
// is rejected.
func ExampleVerifyV1a() {
	c := exampleVectors().Signatures[0]
	srv := keysServer(c.PublicKey)
	defer srv.Close()
	keys, err := FetchWebhookKeys(context.Background(), srv.Client(), srv.URL)
	if err != nil {
		panic(err)
	}
	now := time.Unix(c.Timestamp, 0)
	fmt.Println(VerifyV1a(keys, headersFor(c), []byte(c.Body), now, receiverTolerance))
	fmt.Println(VerifyV1a(keys, headersFor(c), []byte(strings.Replace(c.Body, "Sam", "Robin", 1)), now, receiverTolerance))
	// Output:
	// <nil>
	// webhook rejected
}

// ExampleVerifyV1 verifies the first case of api/webhook-test-vectors.json
// with its whsec_ secret and the Standard Webhooks library; a delivery
// whose timestamp lies outside the receiver's tolerance is rejected.
func ExampleVerifyV1() {
	c := exampleVectors().Signatures[0]
	now := time.Unix(c.Timestamp, 0)
	fmt.Println(VerifyV1(c.HMACSecrets[0], headersFor(c), []byte(c.Body), now, receiverTolerance))
	fmt.Println(VerifyV1(c.HMACSecrets[0], headersFor(c), []byte(c.Body), now.Add(2*receiverTolerance), receiverTolerance))
	// Output:
	// <nil>
	// webhook rejected
}

// TestReceiverGuideGoExampleVerifiesTheVectors runs the Go receiver of
// docs/api/webhooks.md section 3 over every case of the vector file: each
// HMAC secret and each public key verifies on its own, and a changed body,
// a stale or future timestamp, a missing webhook-id and the keys and
// secrets of the other cases are rejected.
func TestReceiverGuideGoExampleVerifiesTheVectors(t *testing.T) {
	t.Parallel()
	vf := readVectors(t)
	var allKeys, allSecrets []string
	for _, c := range vf.Signatures {
		allKeys = append(allKeys, c.PublicKey...)
		allSecrets = append(allSecrets, c.HMACSecrets...)
	}
	for _, c := range vf.Signatures {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			body := []byte(c.Body)
			changed := bytes.Clone(body)
			changed[len(changed)/2] ^= 0x01
			now := time.Unix(c.Timestamp, 0)
			late := now.Add(receiverTolerance + time.Second)
			early := now.Add(-receiverTolerance - time.Second)
			withoutID := headersFor(c)
			withoutID.Del("webhook-id")

			srv := keysServer(c.PublicKey)
			t.Cleanup(srv.Close)
			keys, err := FetchWebhookKeys(t.Context(), srv.Client(), srv.URL)
			require.NoError(t, err)
			require.Len(t, keys, len(c.PublicKey))

			require.NoError(t, VerifyV1a(keys, headersFor(c), body, now, receiverTolerance), "every published key")
			for i, k := range keys {
				require.NoError(t, VerifyV1a([]ed25519.PublicKey{k}, headersFor(c), body, now, receiverTolerance), "key %d alone", i)
			}
			for _, bad := range []struct {
				name   string
				header http.Header
				body   []byte
				now    time.Time
			}{
				{"a body changed by one byte", headersFor(c), changed, now},
				{"a timestamp older than the tolerance", headersFor(c), body, late},
				{"a timestamp newer than the tolerance", headersFor(c), body, early},
				{"no webhook-id", withoutID, body, now},
			} {
				require.ErrorIs(t, VerifyV1a(keys, bad.header, bad.body, bad.now, receiverTolerance), ErrInvalidWebhook, "v1a: %s", bad.name)
				for i, s := range c.HMACSecrets {
					require.Error(t, VerifyV1(s, bad.header, bad.body, bad.now, receiverTolerance), "v1 secret %d: %s", i, bad.name)
				}
			}
			for _, pk := range allKeys {
				if !slices.Contains(c.PublicKey, pk) {
					other, err := ParseWebhookKey(pk)
					require.NoError(t, err)
					require.ErrorIs(t, VerifyV1a([]ed25519.PublicKey{other}, headersFor(c), body, now, receiverTolerance), ErrInvalidWebhook,
						"a key of another case")
				}
			}

			for i, s := range c.HMACSecrets {
				require.NoError(t, VerifyV1(s, headersFor(c), body, now, receiverTolerance), "secret %d", i)
			}
			for _, s := range allSecrets {
				if !slices.Contains(c.HMACSecrets, s) {
					require.Error(t, VerifyV1(s, headersFor(c), body, now, receiverTolerance), "a secret of another case")
				}
			}
		})
	}
}

// guideBlock returns the one fenced code block of language lang in
// docs/api/webhooks.md; the guide must have exactly one.
func guideBlock(t *testing.T, lang string) string {
	t.Helper()
	raw, err := os.ReadFile(receiverGuidePath)
	require.NoError(t, err)
	var blocks []string
	rest := string(raw)
	open := "\n```" + lang + "\n"
	for {
		_, after, ok := strings.Cut(rest, open)
		if !ok {
			break
		}
		block, tail, ok := strings.Cut(after, "\n```\n")
		require.True(t, ok, "the %s block of the guide is closed", lang)
		blocks, rest = append(blocks, block+"\n"), tail
	}
	require.Len(t, blocks, 1, "docs/api/webhooks.md has exactly one %s block", lang)
	return blocks[0]
}

// TestReceiverGuideShowsTheTestedGoCode keeps the Go example of
// docs/api/webhooks.md section 3 equal to receiver_test.go from the import
// declaration on, so the guide shows the code the tests run.
func TestReceiverGuideShowsTheTestedGoCode(t *testing.T) {
	t.Parallel()
	doc := guideBlock(t, "go")
	src, err := os.ReadFile("receiver_test.go")
	require.NoError(t, err)
	_, docCode, ok := strings.Cut(doc, "\nimport (\n")
	require.True(t, ok, "the guide's Go example has an import declaration")
	_, srcCode, ok := strings.Cut(string(src), "\nimport (\n")
	require.True(t, ok)
	require.True(t, strings.HasPrefix(doc, "package "), "the guide's Go example starts with its package clause")
	require.Equal(t, srcCode, docCode,
		"docs/api/webhooks.md section 3 and receiver_test.go differ: copy the code from the import declaration on")
}

// TestReceiverGuideJavaScriptExampleVerifiesTheVectors runs the JavaScript
// example of docs/api/webhooks.md section 3 with Node against every case of
// the vector file (testdata/receiver_guide.mjs lists the checks). Node is
// part of the development and CI machines; the run is offline and uses
// only node:crypto.
func TestReceiverGuideJavaScriptExampleVerifiesTheVectors(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	require.NoError(t, err, "the JavaScript example of docs/api/webhooks.md runs with Node: install nodejs")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "verify-webhook.mjs"), []byte(guideBlock(t, "js")), 0o600))
	runner, err := os.ReadFile(filepath.Join("testdata", "receiver_guide.mjs"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "receiver_guide.mjs"), runner, 0o600))
	vectors, err := filepath.Abs(vectorsPath)
	require.NoError(t, err)

	cmd := exec.CommandContext(t.Context(), node, filepath.Join(dir, "receiver_guide.mjs"), vectors)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "node: %s", out)
	require.Regexp(t, `(?m)^ok [0-9]+ checks$`, string(out))
}
