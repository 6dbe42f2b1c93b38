package webhook

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// Signature schemes of the webhook-signature header (webhooks.md 2).
const (
	// SchemeV1A is Ed25519 with a server key of purpose webhook_out.
	SchemeV1A = "v1a"
	// SchemeV1 is HMAC-SHA256 with the subscription's derived secret.
	SchemeV1 = "v1"
	// SecretPrefix starts the text form of an HMAC secret, as the Standard
	// Webhooks libraries expect it.
	SecretPrefix = "whsec_"
	// hmacLabel starts the derivation input of D-M2-26-10.
	hmacLabel = "webhook-v1:"
)

// SignatureSchemes returns the signature_schemes of a subscription: v1a
// always, v1 as well when HMAC is enabled (D-M2-26-13).
func SignatureSchemes(hmacEnabled bool) []string {
	if hmacEnabled {
		return []string{SchemeV1A, SchemeV1}
	}
	return []string{SchemeV1A}
}

// SignedContent returns the bytes both schemes sign (Standard Webhooks,
// webhooks.md 2): "{webhook-id}.{webhook-timestamp}.{body}" with the event ID
// in canonical form, the Unix seconds of this attempt in decimal, and the
// body exactly as sent.
func SignedContent(webhookID ids.ID, ts int64, body []byte) []byte {
	id := webhookID.String()
	out := make([]byte, 0, len(id)+2+20+len(body))
	out = append(out, id...)
	out = append(out, '.')
	out = strconv.AppendInt(out, ts, 10)
	out = append(out, '.')
	return append(out, body...)
}

// DeriveHMACKey returns the HMAC key of a subscription's generation (Design
// note 11 d): HMAC-SHA256(master, "webhook-v1:" + subscription ID in
// canonical lower-case hyphenated form + ":" + generation in decimal ASCII).
// master is the hex-decoded value of webhook.hmac_master_key_ref. The key is
// never stored; it is derived again for every attempt, so changing the master
// key changes every secret. The result has 32 bytes; master is not modified.
func DeriveHMACKey(master []byte, subscriptionID ids.ID, generation int) []byte {
	m := hmac.New(sha256.New, master)
	m.Write([]byte(hmacLabel))
	m.Write([]byte(subscriptionID.String()))
	m.Write([]byte{':'})
	m.Write(strconv.AppendInt(nil, int64(generation), 10))
	return m.Sum(nil)
}

// HMACGenerations returns the HMAC generations a delivery is signed with,
// newest first (D-M2-26-10): generation, and generation-1 while
// rotatedAt + overlap lies after now. overlap is
// webhook.secret_rotation_overlap, rotatedAt is hmac_rotated_at (the zero
// time when never rotated). Older generations are never used, and
// generation 0 has no previous one.
func HMACGenerations(generation int, rotatedAt time.Time, overlap time.Duration, now time.Time) []int {
	if generation > 0 && !rotatedAt.IsZero() && rotatedAt.Add(overlap).After(now) {
		return []int{generation, generation - 1}
	}
	return []int{generation}
}

// FormatSecret returns the text form of an HMAC key shown once to the owner:
// "whsec_" + standard base64 with padding, the form the Standard Webhooks
// libraries decode.
func FormatSecret(key []byte) string {
	return SecretPrefix + base64.StdEncoding.EncodeToString(key)
}

// ParseSecret reverses FormatSecret. It accepts only the exact form
// FormatSecret writes (prefix whsec_, standard base64 with padding and
// canonical trailing bits, no white space) and a non-empty key, so every
// secret has one spelling. Any other input gives a *errs.Error of code
// validation_failed whose text does not contain the input.
func ParseSecret(s string) ([]byte, error) {
	rest, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return nil, errs.New(errs.CodeValidationFailed, "webhook secret lacks its prefix")
	}
	key, err := base64.StdEncoding.Strict().DecodeString(rest)
	// The decoder skips line breaks; the comparison rejects them.
	if err != nil || len(key) == 0 || base64.StdEncoding.EncodeToString(key) != rest {
		return nil, errs.New(errs.CodeValidationFailed, "webhook secret is not standard base64")
	}
	return key, nil
}

// HMACSignature returns the v1 signature: HMAC-SHA256(key, content).
func HMACSignature(key, content []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(content)
	return m.Sum(nil)
}

// SignatureHeader renders the webhook-signature header (D-M2-26-10):
// entries separated by one space, all v1a entries first in signer order
// (active key first), then the v1 entries newest generation first, each
// "<scheme>,<standard base64 with padding>". It returns "" when both lists
// are empty.
func SignatureHeader(v1a [][]byte, v1 [][]byte) string {
	var b strings.Builder
	b.Grow((len(v1a) + len(v1)) * (len(SchemeV1A) + 2 + base64.StdEncoding.EncodedLen(ed25519.SignatureSize)))
	write := func(scheme string, sigs [][]byte) {
		for _, sig := range sigs {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(scheme)
			b.WriteByte(',')
			b.WriteString(base64.StdEncoding.EncodeToString(sig))
		}
	}
	write(SchemeV1A, v1a)
	write(SchemeV1, v1)
	return b.String()
}
