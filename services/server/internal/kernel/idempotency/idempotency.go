// Package idempotency is the port behind the Idempotency-Key header
// (docs/spec/06-api.md 7, M1-20): a Store runs an unsafe request at most once
// per principal, operation and key, keeps its successful response for a
// while, and answers a retry with that response instead of running it again.
//
// Use cases see only MarkOneTimeSecret: a use case whose response carries a
// secret that must be shown once (a new API token, a webhook HMAC secret)
// calls it, and the Store then keeps nothing of the response body, so the
// secret never lands in idempotency_keys; a replay answers 409 conflict with
// reason one_time_secret (R-API-26).
//
// The HTTP stage lives in platform/httpserver; the PostgreSQL Store in
// idempotency/idempotencypg.
package idempotency

import (
	"context"
	"sync/atomic"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// The conflict reasons a Store and the HTTP stage answer with.
const (
	// ReasonInProgress: another request with the same key is running.
	ReasonInProgress = "in_progress"
	// ReasonOneTimeSecret: the first response held a one-time secret and
	// cannot be replayed.
	ReasonOneTimeSecret = "one_time_secret"
)

// MaxKeyLen is the longest Idempotency-Key value (1 to 255 visible ASCII
// characters, part of the header's definition in docs/spec/06-api.md 7).
const MaxKeyLen = 255

// Request names one idempotent request.
type Request struct {
	// Principal is who sends it; keys of different principals never meet.
	// It must not be Zero: anonymous requests are not idempotent.
	Principal ids.ID
	// Operation is the operation ID, for example "createWebhookSubscription".
	Operation string
	// Key is the Idempotency-Key value; see ValidKey.
	Key string
	// Hash is the SHA-256 of what makes the request this request (method,
	// path, query and body). The same key with another hash is a reuse.
	Hash [32]byte
}

// Response is a response as a Store keeps it.
type Response struct {
	// Status is the HTTP status.
	Status int
	// Header holds the headers to replay (the caller chooses the subset).
	Header map[string][]string
	// Body is the response body.
	Body []byte
}

// Result is the answer of Store.Do.
type Result struct {
	// Response is the response of this run of fn, or the stored one when
	// Replayed.
	Response Response
	// Replayed is true when fn did not run and Response was stored by an
	// earlier request with the same key and hash.
	Replayed bool
	// OneTimeSecret is true for a replay of a response that held a one-time
	// secret: Response has only its Status, and the caller answers 409
	// conflict with reason one_time_secret (marked as a replay).
	OneTimeSecret bool
}

// Store runs idempotent requests.
type Store interface {
	// Do runs fn for req unless the key is already bound:
	//
	//   - a completed request with the same hash: Do returns its stored
	//     response as a replay, without calling fn;
	//   - a completed or reserved request with another hash: an *errs.Error
	//     with CodeIdempotencyKeyReuse;
	//   - a request with the same key still running: errs.Conflict with
	//     ReasonInProgress (Do does not wait).
	//
	// Otherwise fn runs inside one unit of work that also stores its
	// response, so the handler's writes and the stored response commit
	// together or not at all. A response with status 400 or above is not
	// stored and its writes roll back (the key stays bound to the hash, so a
	// retry of the same request runs again); err is the cause of such a
	// response and, when it is a serialization failure or deadlock, fn runs
	// again with a fresh context. ctx must not carry a transaction.
	Do(ctx context.Context, req Request, fn func(ctx context.Context) (resp Response, err error)) (Result, error)
}

// ValidKey reports whether k is a well-formed Idempotency-Key: 1 to
// MaxKeyLen visible ASCII characters (0x21 to 0x7E).
func ValidKey(k string) bool {
	if len(k) == 0 || len(k) > MaxKeyLen {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// ErrKeyReuse returns the error of a key used with another request.
func ErrKeyReuse() *errs.Error {
	return errs.New(errs.CodeIdempotencyKeyReuse, "idempotency key was used with another request")
}

type markerKey struct{}

type marker struct{ set atomic.Bool }

// MarkOneTimeSecret records that the response of the request of ctx carries
// a one-time secret, so no part of its body may be stored. Use cases call it
// before they return the secret; without an idempotent request in ctx it
// does nothing.
func MarkOneTimeSecret(ctx context.Context) {
	if m, ok := ctx.Value(markerKey{}).(*marker); ok {
		m.set.Store(true)
	}
}

// Watch returns ctx prepared for MarkOneTimeSecret and a function that
// reports whether it was called on ctx or a context derived from it. Store
// implementations call it once per run of fn.
func Watch(ctx context.Context) (context.Context, func() bool) {
	m := &marker{}
	return context.WithValue(ctx, markerKey{}, m), m.set.Load
}
