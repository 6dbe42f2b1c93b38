package app

import (
	"context"
	"errors"
	"slices"
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
	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/kernel/idempotency"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
	eventsync "bothy/server/internal/sync"
)

// This file holds the owner side of outgoing webhooks (D-M2-26-14, D-M2-26-15,
// D-M2-26-18, D-M2-26-29; docs/api/webhooks.md 1 and 4): WebhookService, its
// options and the helpers its use cases share. Each use case of the port
// apps.Webhooks has a file of its own; installation_hooks.go holds the
// InstallationHooks the app life cycle calls.

// Pointer and item code of a rotation without HMAC (D-M2-26-18).
const (
	pointerRotate     = "/rotate_hmac_secret"
	itemHMACNotEnable = "hmac_not_enabled"
)

// ReasonEventExpired is the conflict reason of Redeliver for a delivery
// whose event left the event log (D-M2-26-14).
const ReasonEventExpired = "event_expired"

// WebhookOptions configure the webhook use cases. Only internal/wire reads
// configuration.
type WebhookOptions struct {
	// AllowedHosts is webhook.allowed_hosts: the host[:port] entries a
	// subscription URL must match (D-M2-26-8).
	AllowedHosts hostlist.List
	// PageSizeDefault is webhook.page_size_default: the page size of
	// listWebhookDeliveries without a limit. At least 1.
	PageSizeDefault int
	// PageSizeMax is webhook.page_size_max: larger limits are lowered to
	// it. At least PageSizeDefault.
	PageSizeMax int
	// RateLimitMax is webhook.rate_limit_max: the highest max_per_second a
	// subscription may have (ADR 0081). At least 1.
	RateLimitMax int
}

// WebhookDeps are the collaborators of the webhook use cases.
type WebhookDeps struct {
	// UnitOfWork runs each use case in one transaction; the hooks join the
	// transaction of the life-cycle use case that calls them.
	UnitOfWork txn.UnitOfWork
	// Authorizer decides webhook_out.manage, .read and .redeliver first.
	Authorizer authorize.Authorizer
	// Audit records the allows.
	Audit auditing.Recorder
	// Apps reads apps and locks installations (the module's Store).
	Apps Store
	// Subscriptions persists subscriptions and the owner's delivery writes.
	Subscriptions SubscriptionStore
	// Keys gives the active webhook_out key, whose kid a new subscription
	// records (D-M2-26-4).
	Keys instance.Keys
	// Log reads events: the event_type of a delivery and whether its event
	// is still retained.
	Log eventsync.LogReader
	// MasterKey derives the v1 secrets (webhook.hmac_master_key_ref).
	MasterKey HMACMasterKey
	// Scheduler wakes the delivery job of a subscription.
	Scheduler DeliveryScheduler
	// Clock stamps rows and due times.
	Clock clock.Clock
}

// WebhookService runs the owner-facing webhook use cases. It implements
// apps.Webhooks and InstallationHooks.
type WebhookService struct {
	uow    txn.UnitOfWork
	az     authorize.Authorizer
	audit  auditing.Recorder
	apps   Store
	subs   SubscriptionStore
	keys   instance.Keys
	log    eventsync.LogReader
	master HMACMasterKey
	jobs   DeliveryScheduler
	clock  clock.Clock
	opts   WebhookOptions
}

var (
	_ apps.Webhooks     = (*WebhookService)(nil)
	_ InstallationHooks = (*WebhookService)(nil)
)

// NewWebhookService returns the webhook use cases. It returns an error when
// a dependency is missing or the page sizes are out of order (a wiring
// bug).
func NewWebhookService(d WebhookDeps, o WebhookOptions) (*WebhookService, error) {
	if d.UnitOfWork == nil || d.Authorizer == nil || d.Audit == nil || d.Apps == nil || d.Subscriptions == nil ||
		d.Keys == nil || d.Log == nil || d.MasterKey == nil || d.Scheduler == nil || d.Clock == nil {
		return nil, errors.New("apps: NewWebhookService needs a unit of work, an authorizer, an audit recorder, the apps store, " +
			"a subscription store, the keys, a log reader, the master key, a scheduler and a clock")
	}
	if o.PageSizeDefault < 1 || o.PageSizeMax < o.PageSizeDefault {
		return nil, errors.New("apps: webhook.page_size_default must be at least 1 and at most webhook.page_size_max")
	}
	if o.RateLimitMax < 1 {
		return nil, errors.New("apps: webhook.rate_limit_max must be at least 1")
	}
	return &WebhookService{
		uow: d.UnitOfWork, az: d.Authorizer, audit: d.Audit, apps: d.Apps, subs: d.Subscriptions, keys: d.Keys,
		log: d.Log, master: d.MasterKey, jobs: d.Scheduler, clock: d.Clock, opts: o,
	}, nil
}

// now returns the clock's time cut to microseconds, the precision of
// timestamptz, so returned values equal the stored ones.
func (w *WebhookService) now() time.Time { return clock.Stamp(w.clock) }

// withSecret runs fn in one unit of work for a use case that may show a
// one-time HMAC secret. When needed, the master key is read first, before
// the unit of work, so no secret store is consulted inside a transaction
// (fn gets nil otherwise). When the result carries a secret, the response
// is marked a one-time secret (idempotency.MarkOneTimeSecret), so an
// idempotent replay answers conflict one_time_secret instead of repeating
// it.
func (w *WebhookService) withSecret(ctx context.Context, needed bool,
	fn func(ctx context.Context, master []byte) (apps.SubscriptionWithSecret, error)) (apps.SubscriptionWithSecret, error) {
	var master []byte
	if needed {
		key, err := w.master.Key(ctx)
		if err != nil {
			return apps.SubscriptionWithSecret{}, errs.Wrap(err, "apps: reading the webhook master key failed")
		}
		master = key
	}
	var out apps.SubscriptionWithSecret
	err := w.uow.Do(ctx, func(ctx context.Context) error {
		var err error
		out, err = fn(ctx, master)
		return err
	})
	if err != nil {
		return apps.SubscriptionWithSecret{}, err
	}
	if out.HMACSecret != "" {
		idempotency.MarkOneTimeSecret(ctx)
	}
	return out, nil
}

// authorizeApp decides action for p on the app appID and then requires
// the app to exist, so an unknown app answers not_found like an invisible
// one.
func (w *WebhookService) authorizeApp(ctx context.Context, p actor.Principal, action authorize.Action, appID ids.ID) error {
	if err := authorize.Check(ctx, w.az, p, action, authorize.Resource{Kind: authorize.KindApp, ID: appID}); err != nil {
		return err
	}
	if _, ok, err := w.apps.App(ctx, appID); err != nil {
		return err
	} else if !ok {
		return errs.NotFound()
	}
	return nil
}

// authorizeSubscription reads the app subscription id (not_found before
// authorize for an unknown ID) and decides action for the principal of
// ctx on its app, so a principal who may not see the app gets the same
// not_found. It returns the principal and the unlocked subscription.
func (w *WebhookService) authorizeSubscription(ctx context.Context, action authorize.Action, id ids.ID) (actor.Principal, apps.Subscription, error) {
	p := actor.From(ctx)
	sub, ok, err := w.subs.Subscription(ctx, id)
	if err != nil {
		return p, apps.Subscription{}, err
	}
	if !ok {
		return p, apps.Subscription{}, errs.NotFound()
	}
	res := authorize.Resource{Kind: authorize.KindApp, ID: sub.AppID}
	return p, sub, authorize.Check(ctx, w.az, p, action, res)
}

// installationOf locks the current installation of appID FOR SHARE; the
// app must exist (authorizeApp checked it).
func (w *WebhookService) installationOf(ctx context.Context, appID ids.ID) (apps.Installation, error) {
	inst, ok, err := w.apps.CurrentInstallation(ctx, appID, apps.ForShare)
	if err != nil {
		return apps.Installation{}, err
	}
	if !ok {
		return apps.Installation{}, errs.Conflict(domain.ReasonAppNotInstalled)
	}
	return inst, nil
}

// proposal is the part of a create or an update that validate checks; a
// nil member is not given.
type proposal struct {
	url          *string
	eventTypes   *[]string
	maxPerSecond *int
	// granted are the installation's event subscriptions.
	granted []string
	// rotateWithoutHMAC is a rotation asked of a subscription without
	// HMAC.
	rotateWithoutHMAC bool
}

// validate checks the parts of a subscription that p gives: the URL
// against webhook.allowed_hosts, the event types against the granted ones,
// the rate limit against webhook.rate_limit_max
// (webhook.ValidateMaxPerSecond), and a rotation without HMAC. Every
// defect is listed; the error is webhook_host_not_allowed when each defect
// is a host or port outside the list (R-DM-17), validation_failed
// otherwise. The target is the zero Target when p gives no URL.
func (w *WebhookService) validate(p proposal) (domain.Target, error) {
	var (
		target   domain.Target
		fields   []errs.FieldError
		hostOnly = true
	)
	collect := func(err error) error {
		e, ok := errs.As(err)
		if !ok {
			return err
		}
		fields = append(fields, e.Fields...)
		hostOnly = hostOnly && e.Code == errs.CodeWebhookHostNotAllowed
		return nil
	}
	if p.url != nil {
		t, err := domain.ValidateTarget(*p.url, w.opts.AllowedHosts)
		if err != nil {
			if err := collect(err); err != nil {
				return domain.Target{}, err
			}
		}
		target = t
	}
	if p.eventTypes != nil {
		if err := domain.ValidateEventTypes(*p.eventTypes, p.granted); err != nil {
			if err := collect(err); err != nil {
				return domain.Target{}, err
			}
		}
	}
	if p.maxPerSecond != nil {
		if err := collect(webhook.ValidateMaxPerSecond(*p.maxPerSecond, w.opts.RateLimitMax)); err != nil {
			return domain.Target{}, err
		}
	}
	if p.rotateWithoutHMAC {
		fields, hostOnly = append(fields, errs.Field(pointerRotate, itemHMACNotEnable)), false
	}
	switch {
	case len(fields) == 0:
		return target, nil
	case hostOnly:
		e := errs.New(errs.CodeWebhookHostNotAllowed, "webhook host not allowed")
		e.Fields = fields
		return domain.Target{}, e
	default:
		return domain.Target{}, errs.Validation(fields...)
	}
}

// insert stores a new active subscription of inst to target for the event
// types and the rate limit of cmd, created by p, with the kid of the active
// webhook_out key, and audits it. With a master key the subscription uses
// HMAC and the result carries its generation-0 secret.
func (w *WebhookService) insert(ctx context.Context, p actor.Principal, inst apps.Installation, target domain.Target,
	cmd apps.CreateSubscription, master []byte) (apps.SubscriptionWithSecret, error) {
	signer, err := w.keys.Signer(ctx, instance.PurposeWebhookOut)
	if err != nil {
		return apps.SubscriptionWithSecret{}, err
	}
	now := w.now()
	id, err := newID(now)
	if err != nil {
		return apps.SubscriptionWithSecret{}, err
	}
	hmacEnabled := master != nil
	sub := apps.Subscription{
		ID: id, AppID: inst.AppID, AppInstallationID: inst.ID, URL: target.URL, EventTypes: slices.Clone(cmd.EventTypes),
		State: apps.SubscriptionActive, SignatureSchemes: webhook.SignatureSchemes(hmacEnabled),
		SigningKeyKID: signer.KeyID(), HMACEnabled: hmacEnabled, MaxPerSecond: cmd.MaxPerSecond,
		CreatedBy: p.ID, CreatedAt: now, UpdatedAt: now,
	}
	if err := w.subs.InsertSubscription(ctx, sub); err != nil {
		return apps.SubscriptionWithSecret{}, err
	}
	if err := w.recordManage(ctx, p, sub, webhook.ChangeCreated); err != nil {
		return apps.SubscriptionWithSecret{}, err
	}
	out := apps.SubscriptionWithSecret{Subscription: sub}
	if hmacEnabled {
		out.HMACSecret = webhook.FormatSecret(webhook.DeriveHMACKey(master, sub.ID, 0))
	}
	return out, nil
}

// makeHeadDue makes the subscription's head due at now and schedules its
// job at now; without a pending delivery there is nothing to wake.
func (w *WebhookService) makeHeadDue(ctx context.Context, subscriptionID ids.ID, now time.Time) error {
	ok, err := w.subs.MakeHeadDue(ctx, subscriptionID, now)
	if err != nil || !ok {
		return err
	}
	return w.jobs.Schedule(ctx, subscriptionID, now)
}

// eventKey returns the key in the log of d's event.
func eventKey(d apps.Delivery) eventsync.EventKey {
	return eventsync.EventKey{Seq: d.EventSeq, OccurredAt: d.EventOccurredAt}
}

// eventType returns the type of the event with key and true while the
// event is in the log, "" and false once it left it.
func (w *WebhookService) eventType(ctx context.Context, key eventsync.EventKey) (string, bool, error) {
	ev, ok, err := w.log.EventByKey(ctx, key)
	if err != nil || !ok {
		return "", false, err
	}
	return string(ev.Type), true, nil
}

// recordManage writes the allow entry webhook_out.manage of change on sub:
// codes and identifiers only, the host but never the path, query or a
// secret (SEC-AUD-5).
func (w *WebhookService) recordManage(ctx context.Context, p actor.Principal, sub apps.Subscription, change string) error {
	details := []auditing.Detail{
		auditing.ID("subscription_id", sub.ID),
		auditing.ID("app_id", sub.AppID),
		auditing.Code("change", change),
	}
	// A host longer than an audit code allows is left out rather than cut.
	if host := domain.TargetHost(sub.URL); auditing.ValidCode(host) {
		details = append(details, auditing.Code("host", host))
	}
	details = append(details,
		auditing.List("event_types", sub.EventTypes...),
		auditing.Bool("hmac_enabled", sub.HMACEnabled),
		auditing.Int("hmac_generation", int64(sub.HMACGeneration)),
		auditing.Int("max_per_second", int64(sub.MaxPerSecond)),
	)
	return w.audit.Record(ctx, auditing.Entry{
		Action: string(authorize.WebhookOutManage), Actor: p, Outcome: auditing.Allow,
		ResourceKind: string(authorize.KindApp), ResourceID: sub.AppID, Details: details,
	})
}
