package app

import (
	"context"
	"time"

	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/instance"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// webhookSigning is what the webhook-signature of one request depends on
// (D-M2-26-10): the subscription's HMAC setting and the
// request's ID, time and body. Deliveries (deliver.go) and test sends
// (send_test_event.go) sign through it, so a test is signed exactly as a
// delivery is.
type webhookSigning struct {
	// SubscriptionID derives the v1 keys.
	SubscriptionID ids.ID
	// HMACEnabled, HMACGeneration and HMACRotatedAt (zero when never
	// rotated) decide the v1 signatures.
	HMACEnabled    bool
	HMACGeneration int
	HMACRotatedAt  time.Time
	// WebhookID, Timestamp (Unix seconds) and Body are the signed content.
	WebhookID ids.ID
	Timestamp int64
	Body      []byte
}

// signWebhook returns the webhook-signature value of s and the kid of the
// active webhook_out key: a v1a signature per signer of keys (active key
// first, then every retiring key whose not_after lies ahead) and, with
// HMAC, v1 signatures of the current generation and, within overlap
// (webhook.secret_rotation_overlap) of the last rotation, the previous
// one. now decides the overlap. memo (nil: none) gives the v1a signature
// of content that a key signed before (ADR 0101). The signatures live in
// memory only.
//
// Errors: the keys' and the master key's errors; internal when there is no
// webhook_out signer.
func signWebhook(ctx context.Context, keys instance.Keys, master HMACMasterKey, overlap time.Duration, s webhookSigning,
	memo *signatureMemo, now time.Time) (signature, kid string, err error) {
	signers, err := keys.Signers(ctx, instance.PurposeWebhookOut)
	if err != nil {
		return "", "", err
	}
	if len(signers) == 0 {
		return "", "", errs.Internalf("apps: no webhook_out signer")
	}
	content := webhook.SignedContent(s.WebhookID, s.Timestamp, s.Body)
	v1a := make([][]byte, 0, len(signers))
	for _, sg := range signers {
		v1a = append(v1a, memo.sign(sg, s.WebhookID, s.Timestamp, content))
	}
	var v1 [][]byte
	if s.HMACEnabled {
		key, err := master.Key(ctx)
		if err != nil {
			return "", "", err
		}
		for _, g := range webhook.HMACGenerations(s.HMACGeneration, s.HMACRotatedAt, overlap, now) {
			v1 = append(v1, webhook.HMACSignature(webhook.DeriveHMACKey(key, s.SubscriptionID, g), content))
		}
	}
	return webhook.SignatureHeader(v1a, v1), signers[0].KeyID(), nil
}
