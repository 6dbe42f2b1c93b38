package app

import (
	"context"
	"errors"
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
)

// This file is the use case recoverWebhookDeliveries (ADR 0079,
// D-M2-26-50 to D-M2-26-53): the bulk form of redeliverWebhook.

// The reason and item codes of a defective recovery window (D-M2-26-51).
const (
	// ReasonInvalidWindow is the validation_failed reason of a window whose
	// since or until is defective.
	ReasonInvalidWindow = "invalid_window"
	// itemInFuture: since does not lie before the time of the request.
	itemInFuture = "in_future"
	// itemNotAfterSince: until does not lie after since.
	itemNotAfterSince = "not_after_since"
)

// RecoveryStore persists what a recovery reads and writes. Every method
// joins the unit of work of ctx; the caller locks the installation, then
// the subscription, then its deliveries (the module's lock order).
// Implemented by adapters/postgres.Store.
type RecoveryStore interface {
	SubscriptionReader
	// LockSubscription returns the app subscription id with a FOR UPDATE
	// row lock held until the unit of work ends, and false when there is
	// none.
	LockSubscription(ctx context.Context, id ids.ID) (apps.Subscription, bool, error)
	// RecoverDeliveries makes up to w.Max failed or dead deliveries of
	// w.SubscriptionID with an event_seq at or above w.MinSeq and a
	// created_at in [w.Since, w.Until), lowest event_seq first, pending
	// again as a redelivery leaves a row (due at w.Now, last_error,
	// response_code, delivered_at and finished_at cleared, attempt kept,
	// created_at = w.Now). The caller holds the subscription's row lock.
	RecoverDeliveries(ctx context.Context, w RecoveryWindow) (RecoveredDeliveries, error)
}

// RecoveryWindow selects the deliveries one recovery makes pending again.
type RecoveryWindow struct {
	// SubscriptionID names the subscription.
	SubscriptionID ids.ID
	// MinSeq is the lowest event_seq whose event is still in the log
	// (sync.LogReader.MinRetainedSeq).
	MinSeq int64
	// Since (included) and Until (excluded) bound created_at.
	Since, Until time.Time
	// Max is webhook.recover_max_deliveries.
	Max int
	// Now stamps the recovered rows.
	Now time.Time
}

// RecoveredDeliveries is what RecoverDeliveries changed.
type RecoveredDeliveries struct {
	// Count is the number of deliveries that are pending again.
	Count int
	// FirstSeq and LastSeq are their lowest and highest event_seq, zero
	// when Count is zero.
	FirstSeq, LastSeq int64
	// HasMore is true when more deliveries matched than Max.
	HasMore bool
}

// RetentionReader tells from where the event log still holds every event
// (sync.LogReader has the method).
type RetentionReader interface {
	// MinRetainedSeq returns the lowest seq a reader can still find.
	MinRetainedSeq(ctx context.Context) (int64, error)
}

// RecoveryOptions configure the recovery. Only internal/wire reads
// configuration.
type RecoveryOptions struct {
	// MaxDeliveries is webhook.recover_max_deliveries: the most deliveries
	// one request makes pending again. At least 1.
	MaxDeliveries int
	// EventRetention is sync.event_retention: a window that begins more
	// than this before now reaches before what the log guarantees to hold,
	// and answers conflict event_expired. Positive.
	EventRetention time.Duration
}

// RecoveryDeps are the collaborators of the recovery.
type RecoveryDeps struct {
	// UnitOfWork runs the use case in one transaction.
	UnitOfWork txn.UnitOfWork
	// Authorizer decides webhook_out.redeliver.
	Authorizer authorize.Authorizer
	// Audit records the allow.
	Audit auditing.Recorder
	// Installations reads and locks the subscription's installation.
	Installations apps.Installations
	// Store reads, locks and recovers.
	Store RecoveryStore
	// Log gives the retention watermark.
	Log RetentionReader
	// Scheduler wakes the subscription's delivery job.
	Scheduler DeliveryScheduler
	// Clock stamps the rows and is the "now" of the window.
	Clock clock.Clock
}

// Recovery runs recoverWebhookDeliveries. It implements
// apps.DeliveryRecovery.
type Recovery struct {
	uow   txn.UnitOfWork
	az    authorize.Authorizer
	audit auditing.Recorder
	insts apps.Installations
	store RecoveryStore
	log   RetentionReader
	jobs  DeliveryScheduler
	clock clock.Clock
	opts  RecoveryOptions
}

var _ apps.DeliveryRecovery = (*Recovery)(nil)

// NewRecovery returns the recovery use case. It returns an error when a
// dependency is missing or an option is out of range (a wiring bug).
func NewRecovery(d RecoveryDeps, o RecoveryOptions) (*Recovery, error) {
	if d.UnitOfWork == nil || d.Authorizer == nil || d.Audit == nil || d.Installations == nil || d.Store == nil ||
		d.Log == nil || d.Scheduler == nil || d.Clock == nil {
		return nil, errors.New("apps: NewRecovery needs a unit of work, an authorizer, an audit recorder, the installations, " +
			"a recovery store, a log reader, a scheduler and a clock")
	}
	if o.MaxDeliveries < 1 || o.EventRetention <= 0 {
		return nil, errors.New("apps: webhook.recover_max_deliveries must be at least 1 and sync.event_retention positive")
	}
	return &Recovery{uow: d.UnitOfWork, az: d.Authorizer, audit: d.Audit, insts: d.Installations, store: d.Store,
		log: d.Log, jobs: d.Scheduler, clock: d.Clock, opts: o}, nil
}

// RecoverDeliveries implements apps.DeliveryRecovery
// (recoverWebhookDeliveries; webhook_out.redeliver on the deliveries of
// the subscription: owners, no step-up). The window is checked first
// (validation_failed, reason invalid_window: /since in_future when since
// is not before now, /until not_after_since when a given until is not
// after since); an until after now, or none, is now. Then, in one unit of
// work: read the subscription (not_found), authorize, lock its
// installation FOR SHARE (conflict app_not_installed unless active or
// suspended) and the subscription FOR UPDATE; a since before now minus
// sync.event_retention is conflict event_expired; up to
// webhook.recover_max_deliveries failed or dead deliveries whose event is
// still in the log become pending again, lowest event_seq first (D-M2-26-50);
// one job is scheduled when any did and the subscription is active; the
// allow is audited. The recovered deliveries rejoin the order through the
// engine's head rule alone: the lowest pending event_seq goes next, after
// the attempt in flight (ADR 0079).
//
// Errors (*errs.Error): validation_failed; not_found for an unknown
// subscription (before authorize) and the authorizer's denials; conflict
// app_not_installed; conflict event_expired; internal.
func (r *Recovery) RecoverDeliveries(ctx context.Context, cmd apps.RecoverDeliveries) (apps.Recovery, error) {
	now := clock.Stamp(r.clock)
	since, until, err := recoveryWindow(cmd.Since, cmd.Until, now)
	if err != nil {
		return apps.Recovery{}, err
	}
	out := apps.Recovery{Since: since, Until: until}
	err = r.uow.Do(ctx, func(ctx context.Context) error {
		p := actor.From(ctx)
		sub, ok, err := r.store.Subscription(ctx, cmd.SubscriptionID)
		if err != nil {
			return err
		}
		if !ok {
			return errs.NotFound()
		}
		// The deliveries of the subscription as a collection: the catalogue
		// entry of webhook_out.redeliver targets webhook_delivery.
		if err := authorize.Check(ctx, r.az, p, authorize.WebhookOutRedeliver, authorize.Resource{Kind: authorize.KindWebhookDelivery}); err != nil {
			return err
		}
		inst, ok, err := r.insts.Installation(ctx, sub.AppInstallationID, apps.ForShare)
		if err != nil {
			return err
		}
		if !ok || !inst.Live() {
			return errs.Conflict(domain.ReasonAppNotInstalled)
		}
		if sub, ok, err = r.store.LockSubscription(ctx, cmd.SubscriptionID); err != nil {
			return err
		} else if !ok {
			return errs.NotFound()
		}
		if since.Before(now.Add(-r.opts.EventRetention)) {
			return errs.Conflict(ReasonEventExpired)
		}
		minSeq, err := r.log.MinRetainedSeq(ctx)
		if err != nil {
			return err
		}
		got, err := r.store.RecoverDeliveries(ctx, RecoveryWindow{SubscriptionID: sub.ID, MinSeq: minSeq, Since: since,
			Until: until, Max: r.opts.MaxDeliveries, Now: now})
		if err != nil {
			return err
		}
		if got.Count > 0 && sub.State == apps.SubscriptionActive {
			if err := r.jobs.Schedule(ctx, sub.ID, now); err != nil {
				return err
			}
		}
		out.Recovered, out.HasMore, out.FirstSeq, out.LastSeq = got.Count, got.HasMore, got.FirstSeq, got.LastSeq
		return r.audit.Record(ctx, recoveryEntry(p, sub, out))
	})
	if err != nil {
		return apps.Recovery{}, err
	}
	return out, nil
}

// recoveryWindow checks the window of a request at now and returns it as
// applied: since as given, until cut to now (none means now). Every defect
// is listed.
func recoveryWindow(since, until, now time.Time) (time.Time, time.Time, error) {
	since = since.UTC().Truncate(time.Microsecond)
	until = until.UTC().Truncate(time.Microsecond)
	var fields []errs.FieldError
	if !since.Before(now) {
		fields = append(fields, errs.FieldError{Pointer: "/since", Code: itemInFuture,
			Detail: "The window must begin before the time of the request."})
	}
	if !until.IsZero() && !until.After(since) {
		fields = append(fields, errs.FieldError{Pointer: "/until", Code: itemNotAfterSince,
			Detail: "The window must end after it begins."})
	}
	if len(fields) > 0 {
		e := errs.WithReason(errs.CodeValidationFailed, ReasonInvalidWindow, "recovery window is invalid")
		e.Fields = fields
		return time.Time{}, time.Time{}, e
	}
	if until.IsZero() || until.After(now) {
		until = now
	}
	return since, until, nil
}

// recoveryEntry is the allow entry webhook_out.redeliver of a recovery:
// the subscription, the window in Unix microseconds, what it recovered;
// identifiers, numbers and codes only (SEC-AUD-5).
func recoveryEntry(p actor.Principal, sub apps.Subscription, r apps.Recovery) auditing.Entry {
	details := []auditing.Detail{
		auditing.ID("subscription_id", sub.ID),
		auditing.ID("app_id", sub.AppID),
		auditing.Int("since_unix_us", r.Since.UnixMicro()),
		auditing.Int("until_unix_us", r.Until.UnixMicro()),
		auditing.Int("recovered", int64(r.Recovered)),
		auditing.Bool("has_more", r.HasMore),
	}
	if r.Recovered > 0 {
		details = append(details, auditing.Int("first_seq", r.FirstSeq), auditing.Int("last_seq", r.LastSeq))
	}
	return auditing.Entry{
		Action: string(authorize.WebhookOutRedeliver), Actor: p, Outcome: auditing.Allow,
		ResourceKind: string(authorize.KindWebhookDelivery), Details: details,
	}
}
