package webhookverify_test

import (
	"crypto/ed25519"
	"net/http"
	"strings"
	"testing"
	"time"

	"bothy/libraries/go/webhookverify"
)

// FuzzVerify feeds arbitrary headers and bodies to a verifier of one key.
// Properties: Verify never panics; it accepts a request only when the
// header carries the signer's own signature of the signed content (no
// other input verifies); and every rejection wraps one of the package's
// errors, so StatusCode never falls back to 500.
func FuzzVerify(f *testing.F) {
	now := time.Unix(1796032800, 0)
	key := signer(1)
	good := sign(now, "{}", key)
	// Seeds: a valid delivery, one with a second entry of an unknown
	// scheme, a v1 entry only, an entry without a comma, bad base64, a
	// signed timestamp with a sign, too many entries, and nothing at all.
	f.Add(good.Get("webhook-id"), good.Get("webhook-timestamp"), good.Get("webhook-signature"), "{}")
	f.Add(good.Get("webhook-id"), good.Get("webhook-timestamp"), good.Get("webhook-signature")+" v2,AAAA", "{}")
	f.Add("msg_1", "1796032800", "v1,HSYotphjmehE8EuwFbNYd/Xp873wpYpvBMi3+7mkzlg=", "{}")
	f.Add("msg_1", "1796032800", "v1a", "")
	f.Add("msg_1", "1796032800", "v1a,!!!!", "{}")
	f.Add("msg_1", "+1796032800", good.Get("webhook-signature"), "{}")
	f.Add("msg_1", "1796032800", strings.Repeat("v1a,AAAA ", webhookverify.MaxSignatures+1), "{}")
	f.Add("", "", "", "")
	v, err := webhookverify.New(webhookverify.Options{
		Keys: webhookverify.StaticKeys{{PublicKey: key.Public().(ed25519.PublicKey)}},
		Now:  func() time.Time { return now },
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id, ts, sig, body string) {
		h := http.Header{}
		h.Set("webhook-id", id)
		h.Set("webhook-timestamp", ts)
		h.Set("webhook-signature", sig)
		d, err := v.Verify(t.Context(), h, []byte(body))
		if err != nil {
			if code := webhookverify.StatusCode(err); code == http.StatusInternalServerError {
				t.Fatalf("an error of no kind: %v", err)
			}
			return
		}
		// Header values are trimmed the way net/http reads them.
		want := b64(ed25519.Sign(key, []byte(h.Get("webhook-id")+"."+h.Get("webhook-timestamp")+"."+body)))
		if !strings.Contains(sig, want) || d.Scheme != webhookverify.SchemeV1A {
			t.Fatalf("accepted %q %q %q %q without the signer's signature", id, ts, sig, body)
		}
	})
}
