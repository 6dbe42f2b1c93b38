package app

import (
	"context"
	"errors"
	"log/slog"
	mrand "math/rand/v2"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/authz"
	"bothy/server/internal/instance"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/platform/otel/attr"
	eventsync "bothy/server/internal/sync"
)

// DeliveryOptions configure the delivery path. Only internal/wire reads
// configuration; every field names its key.
type DeliveryOptions struct {
	// Retry holds webhook.retry_backoff_base, webhook.retry_backoff_cap and
	// webhook.retry_max_age (D-M2-26-7).
	Retry webhook.RetryConfig
	// DeliveryTimeout is webhook.delivery_timeout: the most an attempt
	// takes, after which the lease wake-up of its run sends it again
	// (ADR 0067). The egress client bounds the exchange with the same key.
	DeliveryTimeout time.Duration
	// LeaseRecordAllowance is webhook.lease_record_allowance: the lease of
	// an attempt lasts this much longer than the attempt's deadline, so the
	// record of its answer locks the subscription before the lease ends and
	// no other job can claim the head in between (D-M2-26-58).
	LeaseRecordAllowance time.Duration
	// MaxConsecutiveFailures is webhook.max_consecutive_failures.
	MaxConsecutiveFailures int
	// MaxPendingPerSubscription is webhook.max_pending_per_subscription: the
	// delivery quota of a round (D-M2-26-2).
	MaxPendingPerSubscription int
	// SecretRotationOverlap is webhook.secret_rotation_overlap: how long the
	// previous HMAC generation signs as well after a rotation.
	SecretRotationOverlap time.Duration
	// ChainMaxDeliveries is webhook.chain_max_deliveries: the most
	// deliveries one run of the job finishes before it leaves the next head
	// to a new job.
	ChainMaxDeliveries int
	// ChainMaxDuration is webhook.chain_max_duration: how long one run of
	// the job goes on with the next head. A run's lease wake-up is due this
	// long plus one lease (leaseLength) after its start (ADR 0067).
	ChainMaxDuration time.Duration
	// BatchMaxDeliveries is webhook.batch_max_deliveries: the most due
	// heads of a subscription one claim takes and sends one after the
	// other under one lease (ADR 0088); 1 claims one head at a time.
	BatchMaxDeliveries int
	// RunMaxSubscriptions is webhook.run_max_subscriptions: the most
	// subscriptions of a consumer round whose runs share one job and its
	// units of work (DeliverTogether, ADR 0089); 1 gives each its own job.
	RunMaxSubscriptions int
	// RunGatherPause is webhook.run_gather_pause: how long a step of a
	// run of a job of several subscriptions (DeliverTogether) waits for
	// the steps of the job's other runs that are still sending, so that
	// their records and claims share its unit of work (D-M2-26-90); the
	// wait ends once every run that has not ended asked. 0 waits for
	// none.
	RunGatherPause time.Duration
	// BatchMaxDuration is webhook.batch_max_duration: how long after its
	// claim a batch starts its sends after the first; a batch's lease
	// lasts this much longer than one attempt's (leaseLength).
	BatchMaxDuration time.Duration
	// RoundInsertMaxDeliveries is webhook.round_insert_max_deliveries: the
	// most rows a consumer round routes and inserts at once; the rows of
	// one event always go together (D-M2-26-82).
	RoundInsertMaxDeliveries int
}

func (o DeliveryOptions) validate() error {
	switch {
	case o.Retry.Base <= 0 || o.Retry.Cap < o.Retry.Base || o.Retry.MaxAge <= 0:
		return errors.New("apps: the webhook retry keys must be positive with base at most cap")
	case o.DeliveryTimeout <= 0:
		return errors.New("apps: webhook.delivery_timeout must be positive")
	case o.LeaseRecordAllowance <= 0:
		return errors.New("apps: webhook.lease_record_allowance must be positive")
	case o.MaxConsecutiveFailures < 1:
		return errors.New("apps: webhook.max_consecutive_failures must be at least 1")
	case o.MaxPendingPerSubscription < 1:
		return errors.New("apps: webhook.max_pending_per_subscription must be at least 1")
	case o.SecretRotationOverlap <= 0:
		return errors.New("apps: webhook.secret_rotation_overlap must be positive")
	case o.ChainMaxDeliveries < 1 || o.ChainMaxDuration <= 0:
		return errors.New("apps: webhook.chain_max_deliveries and webhook.chain_max_duration must be positive")
	case o.BatchMaxDeliveries < 1 || o.BatchMaxDuration <= 0:
		return errors.New("apps: webhook.batch_max_deliveries and webhook.batch_max_duration must be positive")
	case o.RunMaxSubscriptions < 1:
		return errors.New("apps: webhook.run_max_subscriptions must be at least 1")
	case o.RunGatherPause < 0:
		return errors.New("apps: webhook.run_gather_pause must not be negative")
	case o.RoundInsertMaxDeliveries < 1:
		return errors.New("apps: webhook.round_insert_max_deliveries must be at least 1")
	}
	return nil
}

// DeliveryDeps are the collaborators of the delivery path.
type DeliveryDeps struct {
	// UnitOfWork runs the claim and record steps; the consumer round runs
	// in its caller's unit of work.
	UnitOfWork txn.UnitOfWork
	// Store persists deliveries and subscription transitions.
	Store DeliveryStore
	// Events reads the event of an attempt (sync.LogReader).
	Events eventsync.LogReader
	// Authorizer decides webhook_out.deliver in filter mode before every
	// attempt.
	Authorizer authorize.Authorizer
	// Router routes the events of a round to the apps that can see them
	// (D-M2-26-35); the same rules as Authorizer.
	Router authz.DeliveryRouter
	// Audit records the system transitions (webhook_out.transition).
	Audit auditing.Recorder
	// Keys gives the webhook_out signers (v1a).
	Keys instance.Keys
	// State gives instance.sync_epoch for the body.
	State instance.State
	// Master gives the HMAC master key (v1).
	Master HMACMasterKey
	// Sender sends the signed requests through the egress client.
	Sender WebhookSender
	// Scheduler inserts apps.webhook_deliver in the ambient unit of work.
	Scheduler DeliveryScheduler
	// Clock stamps rows and decides due times.
	Clock clock.Clock
	// Random drives the backoff jitter like math/rand/v2.Int64N; nil uses
	// math/rand/v2. Tests inject a fixed source.
	Random func(n int64) int64
	// Logger receives "webhook delivery failed" (info) and "webhook
	// subscription state changed" (warn); nil discards.
	Logger *slog.Logger
	// Meter makes the delivery metrics (delivery_metrics.go); nil records
	// none.
	Meter metric.MeterProvider
}

// Deliveries is the delivery path of outgoing webhooks: the consumer
// webhooks (HandleEvent, HandleLost) and the attempt (Deliver).
type Deliveries struct {
	uow       txn.UnitOfWork
	store     DeliveryStore
	events    eventsync.LogReader
	az        authorize.Authorizer
	router    authz.DeliveryRouter
	audit     auditing.Recorder
	keys      instance.Keys
	state     instance.State
	master    HMACMasterKey
	sender    WebhookSender
	scheduler DeliveryScheduler
	clock     clock.Clock
	rnd       func(n int64) int64
	log       *slog.Logger
	metrics   deliveryMetrics
	opts      DeliveryOptions
	// epoch is instance.sync_epoch once a run read it (D-M2-26-66).
	epoch atomic.Pointer[ids.ID]
	// signatures are the v1a signatures of the last two seconds, which
	// the deliveries of one event share (ADR 0101).
	signatures signatureMemo
	// firstReads are what this process's rounds expect the first claims
	// of their runs to read (ADR 0104).
	firstReads *firstReads
	// reachGuesses are the apps the last reach of each place named, whose
	// candidates a round reads with its reach (ADR 0108); bounded, like
	// firstReads, by webhook.round_insert_max_deliveries.
	reachGuesses *reachGuesses
	// paces are the send limits the runs of this worker learned, which
	// the next run of each subscription starts with (D-M2-26-89).
	paces *sendPaces
}

var (
	_ eventsync.ConsumerHandler     = (*Deliveries)(nil)
	_ eventsync.ConsumerLossHandler = (*Deliveries)(nil)
)

// NewDeliveries returns the delivery path. It returns an error when a
// required dependency is missing or an option is out of range (a wiring
// bug).
func NewDeliveries(d DeliveryDeps, o DeliveryOptions) (*Deliveries, error) {
	if d.UnitOfWork == nil || d.Store == nil || d.Events == nil || d.Authorizer == nil || d.Router == nil || d.Audit == nil ||
		d.Keys == nil || d.State == nil || d.Master == nil || d.Sender == nil || d.Scheduler == nil || d.Clock == nil {
		return nil, errors.New("apps: NewDeliveries needs a unit of work, a store, the event log, an authorizer, a router, " +
			"an audit recorder, keys, the instance state, the HMAC master key, a sender, a scheduler and a clock")
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	rnd := d.Random
	if rnd == nil {
		rnd = mrand.Int64N
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	metrics, err := newDeliveryMetrics(d.Meter)
	if err != nil {
		return nil, err
	}
	return &Deliveries{
		uow: d.UnitOfWork, store: d.Store, events: d.Events, az: d.Authorizer, router: d.Router, audit: d.Audit,
		keys: d.Keys, state: d.State, master: d.Master, sender: d.Sender, scheduler: d.Scheduler,
		clock: d.Clock, rnd: rnd, log: log, metrics: metrics, opts: o,
		firstReads:   newFirstReads(o.RoundInsertMaxDeliveries),
		reachGuesses: newReachGuesses(o.RoundInsertMaxDeliveries),
		paces:        newSendPaces(o.ChainMaxDuration),
	}, nil
}

// now returns the clock's time cut to microseconds, the precision of
// timestamptz, so compared and stored times agree.
func (s *Deliveries) now() time.Time { return clock.Stamp(s.clock) }

// transition is one system transition of a subscription
// (webhook.Transition) with the subscription and app it happened to.
type transition struct {
	webhook.Transition
	subscriptionID, appID ids.ID
	// fromSeq and toSeq name the lost range of a gap; zero otherwise.
	fromSeq, toSeq int64
}

// setState asks the rule what the system event ev changes on the
// subscription id of appID in standing from at now (webhook.Standing.Apply)
// and writes the new state, in the unit of work of ctx, which holds the
// subscription's row lock. It returns the transition to audit, and false
// when ev does not apply to the state: nothing written, nothing to audit.
func (s *Deliveries) setState(ctx context.Context, id, appID ids.ID, from webhook.Standing, ev webhook.SubscriptionEvent,
	now time.Time) (transition, bool, error) {
	next, tr, ok, err := from.Apply(ev, now)
	if err != nil || !ok {
		return transition{}, false, err
	}
	if err := s.store.SetSubscriptionState(ctx, id, next.State, next.DisabledAt, now); err != nil {
		return transition{}, false, err
	}
	return transition{Transition: tr, subscriptionID: id, appID: appID}, true, nil
}

// recordTransition writes the audit entry of a system transition in the
// unit of work of ctx: action webhook_out.transition (R-AZ-27), actor
// system, resource the subscription's app, details subscription_id,
// from_state, to_state, cause and, for a gap, from_seq and to_seq.
func (s *Deliveries) recordTransition(ctx context.Context, t transition) error {
	details := []auditing.Detail{
		auditing.ID("subscription_id", t.subscriptionID),
		auditing.Code("from_state", string(t.From)),
		auditing.Code("to_state", string(t.To)),
		auditing.Code("cause", t.Cause),
	}
	if t.toSeq > 0 {
		details = append(details, auditing.Int("from_seq", t.fromSeq), auditing.Int("to_seq", t.toSeq))
	}
	return s.audit.Record(ctx, auditing.Entry{
		Action:       string(authorize.WebhookOutTransition),
		Actor:        actor.System,
		ResourceKind: string(authorize.KindApp),
		ResourceID:   t.appID,
		Outcome:      auditing.Allow,
		Details:      details,
	})
}

// logTransition logs a system transition at warn level with closed
// attributes only (D-M2-26-17) and counts it in
// bothy.webhook.subscription.transitions.
func (s *Deliveries) logTransition(ctx context.Context, t transition) {
	s.metrics.transition(ctx, t)
	s.log.WarnContext(ctx, "webhook subscription state changed",
		slog.String(string(attr.WebhookSubscriptionID), t.subscriptionID.String()),
		slog.String(string(attr.Reason), t.Cause))
}

// failure is one delivery that did not succeed, for the log line
// "webhook delivery failed".
type failure struct {
	subscriptionID ids.ID
	seq            int64
	eventType      string
	reason         apps.LastError
	host           string
}

// logFailure logs a delivery that did not succeed at info level with the
// closed attributes of D-M2-26-17: never the URL path or query, the
// body, a signature or a secret.
func (s *Deliveries) logFailure(ctx context.Context, f failure) {
	args := []any{
		slog.String(string(attr.WebhookSubscriptionID), f.subscriptionID.String()),
		slog.Int64(string(attr.EventSeq), f.seq),
		slog.String(string(attr.Reason), string(f.reason)),
	}
	if f.eventType != "" {
		args = append(args, slog.String(string(attr.EventType), f.eventType))
	}
	if f.host != "" {
		args = append(args, slog.String(string(attr.ServerAddress), f.host))
	}
	s.log.InfoContext(ctx, "webhook delivery failed", args...)
}
