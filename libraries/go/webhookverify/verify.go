package webhookverify

import (
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The signature schemes of webhook-signature (docs/api/webhooks.md 2).
const (
	// SchemeV1A is Ed25519 with the server's keys of getWebhookKeys.
	SchemeV1A = "v1a"
	// SchemeV1 is HMAC-SHA256 with the subscription's whsec_ secret.
	SchemeV1 = "v1"
	// SecretPrefix starts the text form of an HMAC secret.
	SecretPrefix = "whsec_"
)

// The headers of a delivery. Their names are case-insensitive.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// DefaultTolerance is the tolerance of a Verifier whose Options give none:
// how far webhook-timestamp may lie from the receiver's clock, the five
// minutes of the Standard Webhooks libraries.
const DefaultTolerance = 5 * time.Minute

// MaxSignatures is the most entries of webhook-signature a Verifier reads.
// A bothy server sends one v1a entry per signing key and one v1 entry per
// HMAC generation, a handful at most; a header with more is refused with
// ErrTooManySignatures before any signature is checked, so a request
// cannot make the receiver verify without end.
const MaxSignatures = 32

// Options configure a Verifier. Only Keys is required.
type Options struct {
	// Keys are the public keys of v1a: a *KeySource that fetches
	// getWebhookKeys (NewKeySource), or StaticKeys. Required: every
	// delivery of a bothy server carries v1a.
	Keys KeySet
	// Secret is the subscription's HMAC secret in its whsec_ form, as
	// createWebhookSubscription showed it once; empty means v1 entries are
	// not checked. With a secret, a delivery is accepted when either a v1a
	// or a v1 entry verifies (docs/api/webhooks.md section 3). During a
	// secret rotation the server signs with the new and the previous
	// secret, so either one verifies.
	Secret string
	// Tolerance is how far webhook-timestamp may lie from Now, in the past
	// or in the future; 0 means DefaultTolerance. Choose it above the
	// clock difference between the server and the receiver and as small as
	// that allows.
	Tolerance time.Duration
	// Now is the receiver's clock; nil means time.Now.
	Now func() time.Time
}

// Verifier checks deliveries of a bothy server. It is safe for concurrent
// use; build one per subscription (or one per instance without a secret)
// and keep it.
type Verifier struct {
	keys      KeySet
	secret    []byte
	tolerance time.Duration
	now       func() time.Time
}

// New returns a verifier for o. It fails when o.Keys is nil, when
// o.Tolerance is negative, or with ErrInvalidSecret when o.Secret is not a
// whsec_ secret.
func New(o Options) (*Verifier, error) {
	if o.Keys == nil {
		return nil, errors.New("webhookverify: Options.Keys is required (v1a is on every delivery)")
	}
	if o.Tolerance < 0 {
		return nil, errors.New("webhookverify: Options.Tolerance must not be negative")
	}
	v := &Verifier{keys: o.Keys, tolerance: o.Tolerance, now: o.Now}
	if v.tolerance == 0 {
		v.tolerance = DefaultTolerance
	}
	if v.now == nil {
		v.now = time.Now
	}
	if o.Secret != "" {
		secret, err := ParseSecret(o.Secret)
		if err != nil {
			return nil, err
		}
		v.secret = secret
	}
	return v, nil
}

// ParseSecret decodes an HMAC secret: "whsec_" followed by the standard
// base64 (with padding) of the key bytes, the form the server shows once.
// Anything else gives an error wrapping ErrInvalidSecret whose text does
// not contain the input.
func ParseSecret(s string) ([]byte, error) {
	b64, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: the %s prefix is missing", ErrInvalidSecret, SecretPrefix)
	}
	key, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("%w: not standard base64 of at least one byte", ErrInvalidSecret)
	}
	return key, nil
}

// Delivery is what Verify learned of an accepted delivery.
type Delivery struct {
	// ID is webhook-id: the event ID, the same on every retry and
	// redelivery, by which a receiver drops duplicates
	// (docs/api/webhooks.md section 5).
	ID string
	// Timestamp is webhook-timestamp, the time of this attempt.
	Timestamp time.Time
	// Scheme is the scheme of the entry that verified: SchemeV1A or
	// SchemeV1.
	Scheme string
	// KeyID is the ID of the key whose v1a entry verified, as the key set
	// names it (the kid of getWebhookKeys for a KeySource); empty for v1.
	KeyID string
}

// Verify checks one delivery: header holds its headers, body its raw bytes
// exactly as received (verify before parsing them: JSON parsed and encoded
// again need not have the same bytes). It accepts the delivery when
// webhook-id is present, webhook-timestamp lies within the tolerance of
// the clock, and an entry of webhook-signature verifies over
// "{webhook-id}.{webhook-timestamp}.{body}": a v1a entry with a key of the
// key set or, with a secret, a v1 entry. Every entry is tried (the scheme
// of each entry decides how; entries of other schemes are skipped),
// HMACs are compared in constant time. When no key verifies, the key set
// is asked once to fetch its keys again (KeySet.Refresh) and the v1a
// entries are tried with the new ones.
//
// Verify returns the delivery, or an error wrapping one of ErrMissingHeader,
// ErrInvalidTimestamp, ErrTimestampOutOfTolerance, ErrTooManySignatures,
// ErrNoMatchingSignature or ErrKeysUnavailable (the keys could not be had
// and no v1 entry verified; also when ctx ends while the keys are fetched).
// It does not remember webhook-id values: dropping duplicates is the
// caller's part.
func (v *Verifier) Verify(ctx context.Context, header http.Header, body []byte) (Delivery, error) {
	id := header.Get(HeaderID)
	rawTS := header.Get(HeaderTimestamp)
	sigHeader := strings.Join(header.Values(HeaderSignature), " ")
	switch {
	case id == "":
		return Delivery{}, fmt.Errorf("%w: %s", ErrMissingHeader, HeaderID)
	case rawTS == "":
		return Delivery{}, fmt.Errorf("%w: %s", ErrMissingHeader, HeaderTimestamp)
	case strings.TrimSpace(sigHeader) == "":
		return Delivery{}, fmt.Errorf("%w: %s", ErrMissingHeader, HeaderSignature)
	}
	ts, err := parseTimestamp(rawTS)
	if err != nil {
		return Delivery{}, err
	}
	if skew := v.now().Sub(ts); skew > v.tolerance || skew < -v.tolerance {
		return Delivery{}, fmt.Errorf("%w: %s away from the receiver's clock, tolerance %s",
			ErrTimestampOutOfTolerance, skew.Round(time.Second), v.tolerance)
	}
	v1a, v1, err := parseSignatures(sigHeader)
	if err != nil {
		return Delivery{}, err
	}
	d := Delivery{ID: id, Timestamp: ts}
	content := signedContent(id, rawTS, body)

	keys, keysErr := v.keys.Keys(ctx)
	if keysErr == nil {
		if kid, ok := verifyV1A(keys, content, v1a); ok {
			d.Scheme, d.KeyID = SchemeV1A, kid
			return d, nil
		}
	}
	if v.secret != nil && verifyV1(v.secret, content, v1) {
		d.Scheme = SchemeV1
		return d, nil
	}
	if keysErr != nil {
		return Delivery{}, keysErr
	}
	// No known key verified: the delivery may be signed by a key that was
	// published after the keys were fetched (webhooks.md 2.1 point 2:
	// "fetch the list once more before rejecting").
	if len(v1a) > 0 {
		keys, fetched, err := v.keys.Refresh(ctx)
		if err != nil {
			return Delivery{}, err
		}
		if fetched {
			if kid, ok := verifyV1A(keys, content, v1a); ok {
				d.Scheme, d.KeyID = SchemeV1A, kid
				return d, nil
			}
		}
	}
	return Delivery{}, fmt.Errorf("%w: %d v1a and %d v1 entries checked", ErrNoMatchingSignature, len(v1a), len(v1))
}

// parseTimestamp reads webhook-timestamp: Unix seconds in decimal digits,
// no sign, no spaces.
func parseTimestamp(s string) (time.Time, error) {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return time.Time{}, ErrInvalidTimestamp
		}
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, ErrInvalidTimestamp
	}
	return time.Unix(sec, 0), nil
}

// parseSignatures splits webhook-signature into the decoded signatures of
// its v1a and v1 entries. Entries are separated by spaces and read
// "<scheme>,<standard base64>". An entry of another scheme, without a
// comma, with invalid base64 or with a signature of the wrong length for
// its scheme is skipped, as the Standard Webhooks libraries skip what they
// do not understand; more than MaxSignatures entries fail with
// ErrTooManySignatures.
func parseSignatures(header string) (v1a, v1 [][]byte, err error) {
	entries := strings.Fields(header)
	if len(entries) > MaxSignatures {
		return nil, nil, fmt.Errorf("%w: %d entries, at most %d", ErrTooManySignatures, len(entries), MaxSignatures)
	}
	for _, e := range entries {
		scheme, b64, ok := strings.Cut(e, ",")
		if !ok {
			continue
		}
		sig, err := base64.StdEncoding.Strict().DecodeString(b64)
		if err != nil {
			continue
		}
		switch {
		case scheme == SchemeV1A && len(sig) == ed25519.SignatureSize:
			v1a = append(v1a, sig)
		case scheme == SchemeV1 && len(sig) == sha256.Size:
			v1 = append(v1, sig)
		}
	}
	return v1a, v1, nil
}

// signedContent returns the bytes both schemes sign:
// "{webhook-id}.{webhook-timestamp}.{body}", with the header values as
// received.
func signedContent(id, ts string, body []byte) []byte {
	out := make([]byte, 0, len(id)+len(ts)+2+len(body))
	out = append(out, id...)
	out = append(out, '.')
	out = append(out, ts...)
	out = append(out, '.')
	return append(out, body...)
}

// verifyV1A reports whether a signature verifies content with a key, and
// that key's ID. Ed25519 verification does not depend on secret data, so
// stopping at the first match leaks nothing.
func verifyV1A(keys []Key, content []byte, sigs [][]byte) (string, bool) {
	for _, sig := range sigs {
		for _, k := range keys {
			if len(k.PublicKey) == ed25519.PublicKeySize && ed25519.Verify(k.PublicKey, content, sig) {
				return k.ID, true
			}
		}
	}
	return "", false
}

// verifyV1 reports whether a signature is the HMAC-SHA256 of content with
// secret, compared in constant time (hmac.Equal).
func verifyV1(secret, content []byte, sigs [][]byte) bool {
	if len(sigs) == 0 {
		return false
	}
	m := hmac.New(sha256.New, secret)
	m.Write(content)
	want := m.Sum(nil)
	ok := false
	for _, sig := range sigs {
		// Every entry is compared, also after a match, so the time taken
		// does not tell which entry matched.
		if hmac.Equal(sig, want) {
			ok = true
		}
	}
	return ok
}
