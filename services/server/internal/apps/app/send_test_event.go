package app

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/instance"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
	eventsync "bothy/server/internal/sync"
)

// This file is the use case sendWebhookTest (ADR 0080, D-M2-26-54 to
// D-M2-26-57): one signed webhook.test request, sent by the api process at
// once, outside the subscription's order and without a delivery row.

// SubscriptionReader reads a subscription without a lock: what a test send
// needs, and the first read of a recovery. Implemented by
// adapters/postgres.Store.
type SubscriptionReader interface {
	// Subscription returns the app subscription id without a lock, and
	// false when there is none.
	Subscription(ctx context.Context, id ids.ID) (apps.Subscription, bool, error)
}

// TestSendOptions configure the test send. Only internal/wire reads
// configuration.
type TestSendOptions struct {
	// DeliveryTimeout is webhook.delivery_timeout: the time limit of the
	// request, as for an attempt. Positive.
	DeliveryTimeout time.Duration
	// SecretRotationOverlap is webhook.secret_rotation_overlap: how long
	// the previous HMAC generation signs too, as for a delivery. Positive.
	SecretRotationOverlap time.Duration
}

// TestSendDeps are the collaborators of the test send.
type TestSendDeps struct {
	// UnitOfWork runs the read, the decision and the audit entry, which
	// commit before the request leaves.
	UnitOfWork txn.UnitOfWork
	// Authorizer decides webhook_out.test.
	Authorizer authorize.Authorizer
	// Audit records the allow.
	Audit auditing.Recorder
	// Installations reads the subscription's installation.
	Installations apps.Installations
	// Store reads the subscription.
	Store SubscriptionReader
	// Keys gives the webhook_out signers (v1a).
	Keys instance.Keys
	// State gives instance.sync_epoch for the body.
	State instance.State
	// Master gives the HMAC master key (v1).
	Master HMACMasterKey
	// Sender sends through the webhook egress client, the deliveries' own.
	Sender WebhookSender
	// Clock stamps the body and the signatures.
	Clock clock.Clock
}

// TestSends runs sendWebhookTest. It implements apps.WebhookTests.
type TestSends struct {
	uow    txn.UnitOfWork
	az     authorize.Authorizer
	audit  auditing.Recorder
	insts  apps.Installations
	store  SubscriptionReader
	keys   instance.Keys
	state  instance.State
	master HMACMasterKey
	sender WebhookSender
	clock  clock.Clock
	opts   TestSendOptions
}

var _ apps.WebhookTests = (*TestSends)(nil)

// NewTestSends returns the test send use case. It returns an error when a
// dependency is missing or an option is not positive (a wiring bug).
func NewTestSends(d TestSendDeps, o TestSendOptions) (*TestSends, error) {
	if d.UnitOfWork == nil || d.Authorizer == nil || d.Audit == nil || d.Installations == nil || d.Store == nil ||
		d.Keys == nil || d.State == nil || d.Master == nil || d.Sender == nil || d.Clock == nil {
		return nil, errors.New("apps: NewTestSends needs a unit of work, an authorizer, an audit recorder, the installations, " +
			"a store, the keys, the instance state, the master key, a sender and a clock")
	}
	if o.DeliveryTimeout <= 0 || o.SecretRotationOverlap <= 0 {
		return nil, errors.New("apps: webhook.delivery_timeout and webhook.secret_rotation_overlap must be positive")
	}
	return &TestSends{uow: d.UnitOfWork, az: d.Authorizer, audit: d.Audit, insts: d.Installations, store: d.Store,
		keys: d.Keys, state: d.State, master: d.Master, sender: d.Sender, clock: d.Clock, opts: o}, nil
}

// egressRefusal is the egress client's BlockedError, named by its method
// so the use case need not import the platform package.
type egressRefusal interface {
	error
	BlockReason() string
}

// testEnvelope is the body of a test send: the members of a delivery's
// envelope (ADR 0052) that fit a request that is no event, without seq (it
// is not in the log and must never move a receiver's last seen seq) and
// resource (it is about no resource of the chat), and without any JSON null
// (ADR 0053).
type testEnvelope struct {
	ID         ids.ID      `json:"id"`
	Type       string      `json:"type"`
	OccurredAt string      `json:"occurred_at"`
	Payload    testPayload `json:"payload"`
	SyncEpoch  ids.ID      `json:"sync_epoch,omitzero"`
}

// testPayload names what was tested.
type testPayload struct {
	SubscriptionID ids.ID `json:"subscription_id"`
	AppID          ids.ID `json:"app_id"`
}

// SendTest implements apps.WebhookTests (sendWebhookTest; webhook_out.test
// on the subscription's app: owners, no step-up). The request must never be
// sent inside a transaction (docs/spec/02-architecture.md 8.5); the caller
// runs it outside one (the operation declares no Idempotency-Key, so the
// HTTP chain refuses the key instead of opening its stage's transaction,
// httpserver.Route.Idempotent). In one unit of work that commits
// before anything is sent: read the subscription (not_found), authorize,
// read its installation (conflict app_not_installed unless active or
// suspended) and audit the allow with the test's webhook-id and the host.
// Outside any transaction: build the body (type webhook.test, a fresh
// UUIDv7 as id and webhook-id, payload subscription_id and app_id,
// sync_epoch), sign it as a delivery is signed (signWebhook) and send it
// through the sender within webhook.delivery_timeout. The outcome is
// webhook.Classify's; nothing is stored and the subscription does not
// change, in any state.
//
// Errors (*errs.Error): not_found for an unknown
// subscription (before authorize) and the authorizer's denials; conflict
// app_not_installed; internal (keys, master key, instance record). A
// request that got no answer is a result with Error set, not an error.
func (s *TestSends) SendTest(ctx context.Context, subscriptionID ids.ID) (apps.TestSendResult, error) {
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	webhookID, err := newID(now)
	if err != nil {
		return apps.TestSendResult{}, err
	}
	var sub apps.Subscription
	err = s.uow.Do(ctx, func(ctx context.Context) error {
		p := actor.From(ctx)
		var ok bool
		var err error
		if sub, ok, err = s.store.Subscription(ctx, subscriptionID); err != nil {
			return err
		} else if !ok {
			return errs.NotFound()
		}
		if err := authorize.Check(ctx, s.az, p, authorize.WebhookOutTest, authorize.Resource{Kind: authorize.KindApp, ID: sub.AppID}); err != nil {
			return err
		}
		inst, ok, err := s.insts.Installation(ctx, sub.AppInstallationID, apps.NoLock)
		if err != nil {
			return err
		}
		if !ok || !inst.Live() {
			return errs.Conflict(domain.ReasonAppNotInstalled)
		}
		return s.audit.Record(ctx, testSendEntry(p, sub, webhookID))
	})
	if err != nil {
		return apps.TestSendResult{}, err
	}
	req, err := s.request(ctx, sub, webhookID, now)
	if err != nil {
		return apps.TestSendResult{}, err
	}
	sendCtx, cancel := context.WithTimeout(ctx, s.opts.DeliveryTimeout)
	defer cancel()
	// The duration is measured, not decided: the monotonic clock, never
	// the clock of the rules (a fake one stands still in tests).
	start := time.Now()
	res, sendErr := s.sender.Send(sendCtx, req)
	out := apps.TestSendResult{WebhookID: webhookID, Duration: time.Since(start)}
	if sendErr == nil {
		out.StatusCode = res.StatusCode
	}
	out.Error = webhook.Classify(res.StatusCode, sendErr).LastError
	if b, ok := errors.AsType[egressRefusal](sendErr); ok {
		out.EgressReason = b.BlockReason()
	}
	return out, nil
}

// request builds and signs the test request for sub at now.
func (s *TestSends) request(ctx context.Context, sub apps.Subscription, webhookID ids.ID, now time.Time) (SignedRequest, error) {
	rec, err := s.state.Load(ctx)
	if err != nil {
		return SignedRequest{}, err
	}
	body, err := json.Marshal(testEnvelope{ID: webhookID, Type: apps.TestEventType, OccurredAt: now.Format(eventsync.OccurredAtLayout),
		Payload: testPayload{SubscriptionID: sub.ID, AppID: sub.AppID}, SyncEpoch: rec.SyncEpoch})
	if err != nil {
		return SignedRequest{}, errs.Wrap(err, "apps: encoding the webhook test body failed")
	}
	ts := now.Unix()
	sig, _, err := signWebhook(ctx, s.keys, s.master, s.opts.SecretRotationOverlap, webhookSigning{
		SubscriptionID: sub.ID, HMACEnabled: sub.HMACEnabled, HMACGeneration: sub.HMACGeneration,
		HMACRotatedAt: sub.HMACRotatedAt, WebhookID: webhookID, Timestamp: ts, Body: body,
	}, nil, now)
	if err != nil {
		return SignedRequest{}, err
	}
	return SignedRequest{SubscriptionID: sub.ID, URL: sub.URL, WebhookID: webhookID, Timestamp: ts, Signature: sig, Body: body}, nil
}

// testSendEntry is the allow entry webhook_out.test: the subscription, the
// app, the test's webhook-id and the host of the address, never its path,
// query or a signature (SEC-AUD-5).
func testSendEntry(p actor.Principal, sub apps.Subscription, webhookID ids.ID) auditing.Entry {
	details := []auditing.Detail{
		auditing.ID("subscription_id", sub.ID),
		auditing.ID("app_id", sub.AppID),
		auditing.ID("webhook_id", webhookID),
	}
	// A host longer than an audit code allows is left out rather than cut.
	if host := domain.TargetHost(sub.URL); auditing.ValidCode(host) {
		details = append(details, auditing.Code("host", host))
	}
	return auditing.Entry{
		Action: string(authorize.WebhookOutTest), Actor: p, Outcome: auditing.Allow,
		ResourceKind: string(authorize.KindApp), ResourceID: sub.AppID, Details: details,
	}
}
