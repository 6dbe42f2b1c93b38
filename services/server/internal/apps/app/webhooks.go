package app

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
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

// This file holds the owner side of outgoing webhooks (M2-26 Design notes
// 2, 5, 13 and 14; docs/api/webhooks.md 1 and 4): the use cases of the port
// apps.Webhooks and the InstallationHooks the app life cycle calls.

// The change codes of the audit entry webhook_out.manage (Design note 2 e).
const (
	changeCreated = "created"
	changeUpdated = "updated"
	changePaused  = "paused"
	changeResumed = "resumed"
	changeRotated = "rotated"
	changeDeleted = "deleted"
)

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
	// subscription URL must match (Design note 9).
	AllowedHosts hostlist.List
	// PageSizeDefault is webhook.page_size_default: the page size of
	// listWebhookDeliveries without a limit. At least 1.
	PageSizeDefault int
	// PageSizeMax is webhook.page_size_max: larger limits are lowered to
	// it. At least PageSizeDefault.
	PageSizeMax int
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
	return &WebhookService{
		uow: d.UnitOfWork, az: d.Authorizer, audit: d.Audit, apps: d.Apps, subs: d.Subscriptions, keys: d.Keys,
		log: d.Log, master: d.MasterKey, jobs: d.Scheduler, clock: d.Clock, opts: o,
	}, nil
}

// CreateSubscription subscribes the current installation of cmd.AppID
// (createWebhookSubscription; webhook_out.manage: owner with a fresh
// step-up). In one unit of work: authorize on the app; not_found for an
// unknown app; lock the current installation FOR SHARE (conflict
// app_not_installed without an active or suspended one); validate the URL
// and the event types against webhook.allowed_hosts and the installation's
// event_subscriptions; insert the active subscription with the kid of the
// active webhook_out key; audit webhook_out.manage (change created). With
// EnableHMAC the result carries the generation-0 secret once and the
// response is marked a one-time secret, so an idempotent replay answers 409
// conflict one_time_secret instead of repeating it.
//
// Errors (*errs.Error): the authorizer's denials (not_found for anyone but
// an owner, step_up_required); not_found; conflict app_not_installed;
// webhook_host_not_allowed (every defect a host or port outside the list)
// or validation_failed with the pointers /url and /event_types/<i> (item
// codes of domain.ValidateTarget and domain.ValidateEventTypes:
// not_subscribable, not_granted, duplicate); internal.
func (w *WebhookService) CreateSubscription(ctx context.Context, cmd apps.CreateSubscription) (apps.SubscriptionCreated, error) {
	master, err := w.masterKey(ctx, cmd.EnableHMAC)
	if err != nil {
		return apps.SubscriptionCreated{}, err
	}
	var out apps.SubscriptionCreated
	err = w.uow.Do(ctx, func(ctx context.Context) error {
		p := actor.From(ctx)
		if err := w.authorizeApp(ctx, p, authorize.WebhookOutManage, cmd.AppID); err != nil {
			return err
		}
		inst, err := w.installationOf(ctx, cmd.AppID)
		if err != nil {
			return err
		}
		target, err := w.validate(&cmd.URL, &cmd.EventTypes, inst.EventSubscriptions, false)
		if err != nil {
			return err
		}
		out, err = w.insert(ctx, p, inst, target, cmd.EventTypes, master)
		return err
	})
	if err != nil {
		return apps.SubscriptionCreated{}, err
	}
	if out.HMACSecret != "" {
		idempotency.MarkOneTimeSecret(ctx)
	}
	return out, nil
}

// UpdateSubscription changes a subscription (updateWebhookSubscription;
// webhook_out.manage: owner with a fresh step-up). Only the fields of cmd
// that are set change; a command that changes nothing writes nothing and
// returns the subscription as it is. In one unit of work: read the
// subscription (not_found), authorize on its app, lock its installation
// FOR SHARE and the subscription FOR UPDATE (lock order), then:
//
//   - URL and EventTypes are validated as at creation;
//   - State paused pauses an active or disabled subscription (disabled_at
//     cleared); State active resumes a paused or re-enables a disabled one:
//     consecutive_failures = 0, disabled_at cleared, the head delivery due
//     now and its job scheduled (Design notes 2 b and 5 a); a State equal to
//     the current one changes nothing;
//   - RotateHMACSecret raises hmac_generation, sets hmac_rotated_at = now
//     and returns the new secret once (marked a one-time secret); the
//     delivery job signs with the previous generation as well for
//     webhook.secret_rotation_overlap.
//
// Each kind of change writes one audit entry webhook_out.manage, in the
// order updated, paused or resumed, rotated.
//
// Errors (*errs.Error): not_found for an unknown subscription (before
// authorize) and the authorizer's denials on its app, so anyone but an
// owner gets the same not_found; conflict app_not_installed when the
// installation was uninstalled; webhook_host_not_allowed or
// validation_failed with /url, /event_types/<i>, /state (item enum) and
// /rotate_hmac_secret (item hmac_not_enabled); internal.
func (w *WebhookService) UpdateSubscription(ctx context.Context, cmd apps.UpdateSubscription) (apps.SubscriptionCreated, error) {
	master, err := w.masterKey(ctx, cmd.RotateHMACSecret)
	if err != nil {
		return apps.SubscriptionCreated{}, err
	}
	var out apps.SubscriptionCreated
	err = w.uow.Do(ctx, func(ctx context.Context) error {
		p, cur, err := w.authorizeSubscription(ctx, authorize.WebhookOutManage, cmd.ID)
		if err != nil {
			return err
		}
		if cmd.URL == nil && cmd.EventTypes == nil && cmd.State == nil && !cmd.RotateHMACSecret {
			out = apps.SubscriptionCreated{Subscription: cur}
			return nil
		}
		inst, ok, err := w.apps.Installation(ctx, cur.AppInstallationID, apps.ForShare)
		if err != nil {
			return err
		}
		if !ok || !inst.Live() {
			return errs.Conflict(domain.ReasonAppNotInstalled)
		}
		sub, ok, err := w.subs.LockSubscription(ctx, cmd.ID)
		if err != nil {
			return err
		}
		if !ok {
			return errs.NotFound()
		}
		out, err = w.change(ctx, p, sub, inst, cmd, master)
		return err
	})
	if err != nil {
		return apps.SubscriptionCreated{}, err
	}
	if out.HMACSecret != "" {
		idempotency.MarkOneTimeSecret(ctx)
	}
	return out, nil
}

// change applies cmd to the locked subscription sub of the live
// installation inst, writes it, makes the head due on a resume and audits
// each kind of change.
func (w *WebhookService) change(ctx context.Context, p actor.Principal, sub apps.Subscription, inst apps.Installation,
	cmd apps.UpdateSubscription, master []byte) (apps.SubscriptionCreated, error) {
	target, err := w.validate(cmd.URL, cmd.EventTypes, inst.EventSubscriptions, cmd.RotateHMACSecret && !sub.HMACEnabled)
	if err != nil {
		return apps.SubscriptionCreated{}, err
	}
	if cmd.State != nil && *cmd.State != apps.SubscriptionActive && *cmd.State != apps.SubscriptionPaused {
		return apps.SubscriptionCreated{}, errs.Validation(errs.Field("/state", "enum"))
	}
	now := w.now()
	next := sub
	var changes []string
	if cmd.URL != nil && target.URL != sub.URL || cmd.EventTypes != nil && !slices.Equal(*cmd.EventTypes, sub.EventTypes) {
		if cmd.URL != nil {
			next.URL = target.URL
		}
		if cmd.EventTypes != nil {
			next.EventTypes = slices.Clone(*cmd.EventTypes)
		}
		changes = append(changes, changeUpdated)
	}
	resumed := false
	if cmd.State != nil && *cmd.State != sub.State {
		ev, code := domain.EventOwnerPause, changePaused
		if *cmd.State == apps.SubscriptionActive {
			ev, code, resumed = domain.EventOwnerResume, changeResumed, true
		}
		if next.State, err = domain.NextSubscriptionState(sub.State, ev); err != nil {
			return apps.SubscriptionCreated{}, err
		}
		next.DisabledAt = time.Time{}
		if resumed {
			next.ConsecutiveFailures = 0
		}
		changes = append(changes, code)
	}
	var secret string
	if cmd.RotateHMACSecret {
		next.HMACGeneration, next.HMACRotatedAt = sub.HMACGeneration+1, now
		secret = domain.FormatSecret(domain.DeriveHMACKey(master, sub.ID, next.HMACGeneration))
		changes = append(changes, changeRotated)
	}
	if len(changes) == 0 {
		return apps.SubscriptionCreated{Subscription: sub}, nil
	}
	next.UpdatedAt = now
	if err := w.subs.UpdateSubscription(ctx, next); err != nil {
		return apps.SubscriptionCreated{}, err
	}
	if resumed {
		if err := w.makeHeadDue(ctx, next.ID, now); err != nil {
			return apps.SubscriptionCreated{}, err
		}
	}
	for _, c := range changes {
		if err := w.recordManage(ctx, p, next, c); err != nil {
			return apps.SubscriptionCreated{}, err
		}
	}
	return apps.SubscriptionCreated{Subscription: next, HMACSecret: secret}, nil
}

// DeleteSubscription deletes a subscription with its deliveries
// (deleteWebhookSubscription; webhook_out.manage: owner with a fresh
// step-up) and audits webhook_out.manage (change deleted). There is no
// tombstone: a second delete is not_found.
//
// Errors (*errs.Error): not_found for an unknown subscription (before
// authorize) and the authorizer's denials on its app; internal.
func (w *WebhookService) DeleteSubscription(ctx context.Context, id ids.ID) error {
	return w.uow.Do(ctx, func(ctx context.Context) error {
		p, sub, err := w.authorizeSubscription(ctx, authorize.WebhookOutManage, id)
		if err != nil {
			return err
		}
		ok, err := w.subs.DeleteSubscription(ctx, id)
		if err != nil {
			return err
		}
		if !ok {
			return errs.NotFound()
		}
		return w.recordManage(ctx, p, sub, changeDeleted)
	})
}

// ListSubscriptions lists every subscription of every installation of the
// app, ordered by created_at, then id (listWebhookSubscriptions;
// webhook_out.read: owners). The result is never nil.
//
// Errors (*errs.Error): the authorizer's denials (not_found for anyone but
// an owner); not_found for an unknown app; internal.
func (w *WebhookService) ListSubscriptions(ctx context.Context, appID ids.ID) ([]apps.Subscription, error) {
	var out []apps.Subscription
	err := w.uow.Do(ctx, func(ctx context.Context) error {
		if err := w.authorizeApp(ctx, actor.From(ctx), authorize.WebhookOutRead, appID); err != nil {
			return err
		}
		var err error
		out, err = w.subs.AppSubscriptions(ctx, appID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListDeliveries pages a subscription's deliveries newest first by
// (event_seq, id) (listWebhookDeliveries; webhook_out.read: owners;
// D-M2-26-20), optionally with one status. q.Limit 0 means
// webhook.page_size_default; larger limits than webhook.page_size_max are
// lowered to it. Each delivery carries the event_type of its event while
// the event is in the log, and none once it left it (D-M2-26-13).
//
// Errors (*errs.Error): not_found for an unknown subscription (before
// authorize) and the authorizer's denials on its app; validation_failed
// at query/status (item enum) for an unknown status; internal.
func (w *WebhookService) ListDeliveries(ctx context.Context, q apps.DeliveryQuery) (apps.DeliveryPage, error) {
	switch q.Status {
	case "", apps.DeliveryPending, apps.DeliverySucceeded, apps.DeliveryFailed, apps.DeliveryDead:
	default:
		return apps.DeliveryPage{}, errs.Validation(errs.Field("query/status", "enum"))
	}
	if q.Limit < 1 {
		q.Limit = w.opts.PageSizeDefault
	}
	q.Limit = min(q.Limit, w.opts.PageSizeMax)
	var out apps.DeliveryPage
	err := w.uow.Do(ctx, func(ctx context.Context) error {
		if _, _, err := w.authorizeSubscription(ctx, authorize.WebhookOutRead, q.SubscriptionID); err != nil {
			return err
		}
		page, err := w.subs.Deliveries(ctx, q)
		if err != nil {
			return err
		}
		// One read of the log names every item's event type (no read per
		// item); an event that left the log leaves event_type empty.
		keys := make([]eventsync.EventKey, len(page.Items))
		for i, d := range page.Items {
			keys[i] = eventKey(d)
		}
		types, err := w.log.EventTypesByKey(ctx, keys)
		if err != nil {
			return err
		}
		for i := range page.Items {
			page.Items[i].EventType = string(types[page.Items[i].EventSeq])
		}
		out = page
		return nil
	})
	if err != nil {
		return apps.DeliveryPage{}, err
	}
	return out, nil
}

// Redeliver sends a delivery's event again with the same webhook-id
// (redeliverWebhook; webhook_out.redeliver on the delivery: owners, no
// step-up; Design note 13 b, D-M2-26-14). In one unit of work: read the
// delivery (not_found), authorize, lock its subscription and then the
// delivery (lock order), check that the event is still in the log, then:
// a pending delivery becomes due now; a succeeded, failed or dead one
// becomes pending again, due now, with last_error, response_code and
// delivered_at cleared, the attempt count kept and created_at = now, so
// the retry window of webhook.retry_max_age starts again. The job is
// scheduled while the subscription is active; a paused or disabled
// subscription keeps the delivery waiting, and strict order still holds
// (a lower pending seq goes first). Audits webhook_out.redeliver with
// delivery_id, subscription_id, event_seq and previous_status, and returns
// the delivery with its event_type.
//
// Errors (*errs.Error): not_found for an unknown delivery (before
// authorize) and the authorizer's denials; conflict event_expired when the
// event left the event log; internal.
func (w *WebhookService) Redeliver(ctx context.Context, deliveryID ids.ID) (apps.Delivery, error) {
	var out apps.Delivery
	err := w.uow.Do(ctx, func(ctx context.Context) error {
		p := actor.From(ctx)
		d, ok, err := w.subs.Delivery(ctx, deliveryID)
		if err != nil {
			return err
		}
		if !ok {
			return errs.NotFound()
		}
		res := authorize.Resource{Kind: authorize.KindWebhookDelivery, ID: deliveryID}
		if err := authorize.Check(ctx, w.az, p, authorize.WebhookOutRedeliver, res); err != nil {
			return err
		}
		sub, ok, err := w.subs.LockSubscription(ctx, d.SubscriptionID)
		if err != nil {
			return err
		}
		if !ok {
			return errs.NotFound()
		}
		if d, ok, err = w.subs.LockDelivery(ctx, deliveryID); err != nil {
			return err
		} else if !ok {
			return errs.NotFound()
		}
		eventType, retained, err := w.eventType(ctx, eventKey(d))
		if err != nil {
			return err
		}
		if !retained {
			return errs.Conflict(ReasonEventExpired)
		}
		now := w.now()
		next := d
		next.NextAttemptAt, next.UpdatedAt = now, now
		if d.Status != apps.DeliveryPending {
			next.Status, next.LastError, next.ResponseCode, next.DeliveredAt = apps.DeliveryPending, "", 0, time.Time{}
			next.CreatedAt = now
		}
		if err := w.subs.UpdateRedelivered(ctx, next); err != nil {
			return err
		}
		if sub.State == apps.SubscriptionActive {
			if err := w.jobs.Schedule(ctx, sub.ID, now); err != nil {
				return err
			}
		}
		if err := w.audit.Record(ctx, auditing.Entry{
			Action: string(authorize.WebhookOutRedeliver), Actor: p, Outcome: auditing.Allow,
			ResourceKind: string(authorize.KindWebhookDelivery), ResourceID: deliveryID,
			Details: []auditing.Detail{
				auditing.ID("delivery_id", deliveryID),
				auditing.ID("subscription_id", sub.ID),
				auditing.Int("event_seq", d.EventSeq),
				auditing.Code("previous_status", string(d.Status)),
			},
		}); err != nil {
			return err
		}
		next.EventType = eventType
		out = next
		return nil
	})
	if err != nil {
		return apps.Delivery{}, err
	}
	return out, nil
}

// ResumeInstallation makes the head delivery of each active subscription of
// the installation due now and schedules its job (app.resume, Design note
// 14, D-M2-26-15). It runs in the caller's unit of work (or its own when
// there is none) and does not authorize: the caller decided app.resume.
// The subscriptions are locked FOR UPDATE after the installation the
// caller holds (lock order); a subscription without a pending delivery
// gets no job.
//
// Errors: internal.
func (w *WebhookService) ResumeInstallation(ctx context.Context, installationID ids.ID) error {
	return w.uow.Do(ctx, func(ctx context.Context) error {
		subs, err := w.subs.LockInstallationSubscriptions(ctx, installationID)
		if err != nil {
			return err
		}
		now := w.now()
		for _, s := range subs {
			if s.State != apps.SubscriptionActive {
				continue
			}
			if err := w.makeHeadDue(ctx, s.ID, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// Installed implements InstallationHooks (installApp, Design note 14): when
// the manifest delivers by webhook, the new installation gets one
// subscription to delivery.events_url for its event_subscriptions, without
// HMAC, created by the installing owner, after authorize(webhook_out.manage)
// and with its own audit entry (change created) in the install's unit of
// work. An installation without event subscriptions gets none (a
// subscription needs at least one event type).
//
// Errors (*errs.Error): the authorizer's denials; the target errors of
// domain.ValidateTarget when webhook.allowed_hosts no longer lists the
// address; internal.
func (w *WebhookService) Installed(ctx context.Context, inst apps.Installation, m domain.Manifest) error {
	if m.Delivery.Mode != domain.DeliveryWebhook || len(inst.EventSubscriptions) == 0 {
		return nil
	}
	return w.uow.Do(ctx, func(ctx context.Context) error {
		p := actor.From(ctx)
		res := authorize.Resource{Kind: authorize.KindApp, ID: inst.AppID}
		if err := authorize.Check(ctx, w.az, p, authorize.WebhookOutManage, res); err != nil {
			return err
		}
		target, err := w.validate(&m.Delivery.EventsURL, &inst.EventSubscriptions, inst.EventSubscriptions, false)
		if err != nil {
			return err
		}
		_, err = w.insert(ctx, p, inst, target, inst.EventSubscriptions, nil)
		return err
	})
}

// Uninstalled implements InstallationHooks (uninstallApp, Design note 5 c):
// every active or paused subscription of the installation becomes disabled
// with disabled_at = now, in the uninstall's unit of work. The audit entry
// of app.uninstall covers it.
//
// Errors: internal.
func (w *WebhookService) Uninstalled(ctx context.Context, inst apps.Installation) error {
	return w.uow.Do(ctx, func(ctx context.Context) error {
		subs, err := w.subs.LockInstallationSubscriptions(ctx, inst.ID)
		if err != nil {
			return err
		}
		now := w.now()
		for _, s := range subs {
			state, err := domain.NextSubscriptionState(s.State, domain.EventUninstall)
			if errs.CodeOf(err) == errs.CodeConflict {
				continue // disabled already
			} else if err != nil {
				return err
			}
			s.State, s.DisabledAt, s.UpdatedAt = state, now, now
			if err := w.subs.UpdateSubscription(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}

// Resumed implements InstallationHooks (resumeApp): ResumeInstallation.
func (w *WebhookService) Resumed(ctx context.Context, inst apps.Installation) error {
	return w.ResumeInstallation(ctx, inst.ID)
}

// now returns the clock's time cut to microseconds, the precision of
// timestamptz, so returned values equal the stored ones.
func (w *WebhookService) now() time.Time { return w.clock.Now().UTC().Truncate(time.Microsecond) }

// masterKey reads the HMAC master key when needed (nil otherwise). It runs
// before the unit of work, so no secret store is consulted inside a
// transaction.
func (w *WebhookService) masterKey(ctx context.Context, needed bool) ([]byte, error) {
	if !needed {
		return nil, nil
	}
	key, err := w.master.Key(ctx)
	if err != nil {
		return nil, errs.Wrap(err, "apps: reading the webhook master key failed")
	}
	return key, nil
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

// validate checks the parts of a subscription that are given: rawURL
// against webhook.allowed_hosts, eventTypes against granted, and a
// rotation without HMAC. Every defect is listed; the error is
// webhook_host_not_allowed when each defect is a host or port outside the
// list (R-DM-17), validation_failed otherwise. The target is the zero
// Target when rawURL is nil.
func (w *WebhookService) validate(rawURL *string, eventTypes *[]string, granted []string, rotateWithoutHMAC bool) (domain.Target, error) {
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
	if rawURL != nil {
		t, err := domain.ValidateTarget(*rawURL, w.opts.AllowedHosts)
		if err != nil {
			if err := collect(err); err != nil {
				return domain.Target{}, err
			}
		}
		target = t
	}
	if eventTypes != nil {
		if err := domain.ValidateEventTypes(*eventTypes, granted); err != nil {
			if err := collect(err); err != nil {
				return domain.Target{}, err
			}
		}
	}
	if rotateWithoutHMAC {
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

// insert stores a new active subscription of inst to target for
// eventTypes, created by p, with the kid of the active webhook_out key,
// and audits it. With a master key the subscription uses HMAC and the
// result carries its generation-0 secret.
func (w *WebhookService) insert(ctx context.Context, p actor.Principal, inst apps.Installation, target domain.Target,
	eventTypes []string, master []byte) (apps.SubscriptionCreated, error) {
	signer, err := w.keys.Signer(ctx, instance.PurposeWebhookOut)
	if err != nil {
		return apps.SubscriptionCreated{}, err
	}
	now := w.now()
	id, err := newID(now)
	if err != nil {
		return apps.SubscriptionCreated{}, err
	}
	hmacEnabled := master != nil
	sub := apps.Subscription{
		ID: id, AppID: inst.AppID, AppInstallationID: inst.ID, URL: target.URL, EventTypes: slices.Clone(eventTypes),
		State: apps.SubscriptionActive, SignatureSchemes: domain.SignatureSchemes(hmacEnabled),
		SigningKeyKID: signer.KeyID(), HMACEnabled: hmacEnabled, CreatedBy: p.ID, CreatedAt: now, UpdatedAt: now,
	}
	if err := w.subs.InsertSubscription(ctx, sub); err != nil {
		return apps.SubscriptionCreated{}, err
	}
	if err := w.recordManage(ctx, p, sub, changeCreated); err != nil {
		return apps.SubscriptionCreated{}, err
	}
	out := apps.SubscriptionCreated{Subscription: sub}
	if hmacEnabled {
		out.HMACSecret = domain.FormatSecret(domain.DeriveHMACKey(master, sub.ID, 0))
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
	if host, ok := auditHost(sub.URL); ok {
		details = append(details, auditing.Code("host", host))
	}
	details = append(details,
		auditing.List("event_types", sub.EventTypes...),
		auditing.Bool("hmac_enabled", sub.HMACEnabled),
		auditing.Int("hmac_generation", int64(sub.HMACGeneration)),
	)
	return w.audit.Record(ctx, auditing.Entry{
		Action: string(authorize.WebhookOutManage), Actor: p, Outcome: auditing.Allow,
		ResourceKind: string(authorize.KindApp), ResourceID: sub.AppID, Details: details,
	})
}

// auditHost returns the canonical host of a stored subscription URL (lower
// case, IPv6 without brackets) when it fits an audit code; a host longer
// than a code allows is left out rather than cut.
func auditHost(rawURL string) (string, bool) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", false
	}
	host := hostlist.Canonical(u.Hostname())
	return host, host != "" && auditing.ValidCode(host)
}
