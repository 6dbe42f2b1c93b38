package webhookverify

import (
	"errors"
	"net/http"
)

// The errors of the package. Every error it returns wraps exactly one of
// them, so a caller tells the causes apart with errors.Is; the error text
// adds details (which header, how far the timestamp is off) but never a
// header value, a signature, a key or a secret.
var (
	// ErrMissingHeader: webhook-id, webhook-timestamp or
	// webhook-signature is absent or empty. The text names the header.
	ErrMissingHeader = errors.New("webhookverify: missing webhook header")
	// ErrInvalidTimestamp: webhook-timestamp is not Unix seconds in
	// decimal digits.
	ErrInvalidTimestamp = errors.New("webhookverify: webhook-timestamp is not Unix seconds")
	// ErrTimestampOutOfTolerance: webhook-timestamp lies further from the
	// receiver's clock than the tolerance, in the past or in the future.
	// The request may be a replay, or one of the clocks is wrong.
	ErrTimestampOutOfTolerance = errors.New("webhookverify: webhook-timestamp outside the tolerance")
	// ErrTooManySignatures: webhook-signature has more than MaxSignatures
	// entries. A bothy server sends one per signing key and HMAC
	// generation; more is an attempt to make the receiver work.
	ErrTooManySignatures = errors.New("webhookverify: webhook-signature has too many entries")
	// ErrNoMatchingSignature: no entry of webhook-signature verifies, with
	// any key (v1a) or the secret (v1), after the keys were fetched again
	// when the key set allowed it. The body, the headers or the signatures
	// were changed, or they were made with keys or a secret the receiver
	// does not hold. v1a entries name no key, so a key the receiver does
	// not know and a forged signature look the same.
	ErrNoMatchingSignature = errors.New("webhookverify: no signature verifies")
	// ErrInvalidKey: a public key is not "whpk_" followed by the standard
	// base64 of an Ed25519 SubjectPublicKeyInfo.
	ErrInvalidKey = errors.New("webhookverify: not a whpk_ Ed25519 public key")
	// ErrInvalidSecret: the HMAC secret is not "whsec_" followed by the
	// standard base64 of at least one byte.
	ErrInvalidSecret = errors.New("webhookverify: not a whsec_ secret")
	// ErrKeysUnavailable: the key set has no keys to verify with, because
	// getWebhookKeys could not be fetched in time (the context ended, the
	// request failed) or its answer is not a key list. The delivery may be
	// genuine; Handler answers 503, so the server
	// tries again later without counting a failure.
	ErrKeysUnavailable = errors.New("webhookverify: webhook keys unavailable")
	// ErrBodyTooLarge: Handler read more than its MaxBodyBytes.
	ErrBodyTooLarge = errors.New("webhookverify: body too large")
)

// StatusCode returns the HTTP status a receiver answers for an error of
// Verify or Handler: 400 for a request that is not a webhook delivery
// (ErrMissingHeader, ErrInvalidTimestamp, ErrTooManySignatures), 401 for
// one that is not authentic or not fresh (ErrNoMatchingSignature,
// ErrTimestampOutOfTolerance), 413 for ErrBodyTooLarge, 503 for
// ErrKeysUnavailable (the server retries a 503 later without counting a
// failure), 500 for anything else, and 204 for nil. A bothy server
// retries every answer but 2xx and 410 (docs/api/webhooks.md section 4),
// so none of these ends a subscription.
func StatusCode(err error) int {
	switch {
	case err == nil:
		return http.StatusNoContent
	case errors.Is(err, ErrMissingHeader), errors.Is(err, ErrInvalidTimestamp), errors.Is(err, ErrTooManySignatures):
		return http.StatusBadRequest
	case errors.Is(err, ErrNoMatchingSignature), errors.Is(err, ErrTimestampOutOfTolerance):
		return http.StatusUnauthorized
	case errors.Is(err, ErrBodyTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrKeysUnavailable):
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}
