package webhookverify_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"bothy/libraries/go/webhookverify"
)

// The first case of api/webhook-test-vectors.json: a delivery signed with
// one key (v1a) and one HMAC secret (v1) at a fixed time. The key and the
// secret are test values and protect nothing.
const (
	exampleKey       = "whpk_MCowBQYDK2VwAyEAJUO5L/EJVRFHatyDadtt3JM2ZaEZeN2hQE7hBmypVZ0="
	exampleSecret    = "whsec_EXAMPLE0BothyWebhookVectorSecretOlderKey000="
	exampleID        = "019ad4a0-7c00-7000-8000-000000000001"
	exampleTimestamp = "1796032800"
	exampleBody      = `{"id":"019ad4a0-7c00-7000-8000-000000000001","seq":41,"type":"message.created","occurred_at":"2026-11-30T10:00:00Z","sync_epoch":"019ad400-0000-7000-8000-000000000001","payload":{"channel_id":"019ad4a0-7c00-7000-8000-0000000000c1","text":"Hello Sam"}}`
	exampleSignature = "v1a,FIMMMrx73i33Yzu+8cfGXs+7mVY2n7SluWqv9xP/ht4EMdkNEhFmxe9Vf9jxpOsb0bqI5YtRHcXH7Z2j7YhKAQ== v1,HSYotphjmehE8EuwFbNYd/Xp873wpYpvBMi3+7mkzlg="
)

// exampleRequest is the vector's delivery as it reaches the receiver.
func exampleRequest(body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "https://hooks.example.com/bothy/events", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("webhook-id", exampleID)
	r.Header.Set("webhook-timestamp", exampleTimestamp)
	r.Header.Set("webhook-signature", exampleSignature)
	return r
}

// exampleNow is the receiver's clock in the examples: the vector's
// timestamp, ten seconds later.
func exampleNow() time.Time { return time.Unix(1796032810, 0) }

// A Verifier with keys the receiver configured itself checks a delivery;
// the same delivery with a changed body is rejected.
func ExampleVerifier_Verify() {
	keys, err := webhookverify.ParseStaticKeys(exampleKey)
	if err != nil {
		panic(err)
	}
	v, err := webhookverify.New(webhookverify.Options{Keys: keys, Now: exampleNow})
	if err != nil {
		panic(err)
	}
	header := exampleRequest("").Header

	d, err := v.Verify(context.Background(), header, []byte(exampleBody))
	fmt.Println(d.ID, d.Scheme, err)

	_, err = v.Verify(context.Background(), header, []byte(strings.Replace(exampleBody, "Sam", "Robin", 1)))
	fmt.Println(errors.Is(err, webhookverify.ErrNoMatchingSignature), webhookverify.StatusCode(err))
	// Output:
	// 019ad4a0-7c00-7000-8000-000000000001 v1a <nil>
	// true 401
}

// With the subscription's whsec_ secret a Verifier also accepts a delivery
// whose v1 entry verifies; here the keys are of another instance, so only
// the secret verifies.
func ExampleOptions_secret() {
	otherInstance, err := webhookverify.ParseStaticKeys("whpk_MCowBQYDK2VwAyEAPUAXw+hDiVqStwqnTRt+vJyYLM8uxJaMwM1V8Sr0Zgw=")
	if err != nil {
		panic(err)
	}
	v, err := webhookverify.New(webhookverify.Options{Keys: otherInstance, Secret: exampleSecret, Now: exampleNow})
	if err != nil {
		panic(err)
	}
	d, err := v.Verify(context.Background(), exampleRequest("").Header, []byte(exampleBody))
	fmt.Println(d.Scheme, err)
	// Output:
	// v1 <nil>
}

// A KeySource fetches the keys from getWebhookKeys of the instance, here
// a test server on 127.0.0.1 standing in for https://chat.example.com.
func ExampleNewKeySource() {
	instance := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != webhookverify.KeysPath {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=300")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{
			{"kid": "0a1b2c3d0a1b2c3d0a1b2c3d0a1b2c3d", "public_key": exampleKey, "state": "active"},
		}})
	}))
	defer instance.Close()

	// The test server's client trusts its certificate; a receiver passes
	// its own client, or nil for http.DefaultClient.
	keys, err := webhookverify.NewKeySource(instance.URL, webhookverify.KeySourceOptions{Client: instance.Client()})
	if err != nil {
		panic(err)
	}
	v, err := webhookverify.New(webhookverify.Options{Keys: keys, Now: exampleNow})
	if err != nil {
		panic(err)
	}
	d, err := v.Verify(context.Background(), exampleRequest("").Header, []byte(exampleBody))
	fmt.Println(d.Scheme, d.KeyID, err)
	// Output:
	// v1a 0a1b2c3d0a1b2c3d0a1b2c3d0a1b2c3d <nil>
}

// Middleware puts the verification in front of the receiver's handler:
// the handler sees only verified deliveries, with the body restored and the
// delivery in the context; the others are answered 400, 401, 413 or 503.
func ExampleVerifier_Middleware() {
	keys, err := webhookverify.ParseStaticKeys(exampleKey)
	if err != nil {
		panic(err)
	}
	v, err := webhookverify.New(webhookverify.Options{Keys: keys, Now: exampleNow})
	if err != nil {
		panic(err)
	}
	events := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, _ := webhookverify.FromContext(r.Context())
		var event struct {
			Type string `json:"type"`
		}
		if err := json.NewDecoder(r.Body).Decode(&event); err != nil {
			http.Error(w, "not an event", http.StatusBadRequest)
			return
		}
		// Answer at once; drop d.ID if it was processed before, and work
		// on the event after answering.
		fmt.Println("handler:", d.ID, event.Type)
		w.WriteHeader(http.StatusNoContent)
	})
	mux := http.NewServeMux()
	mux.Handle("POST /bothy/events", v.Middleware(events))

	for _, body := range []string{exampleBody, exampleBody + " "} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, exampleRequest(body))
		fmt.Println("answer:", rec.Code)
	}
	// Output:
	// handler: 019ad4a0-7c00-7000-8000-000000000001 message.created
	// answer: 204
	// answer: 401
}
