package app

import (
	"context"
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
	eventsync "bothy/server/internal/sync"
)

// DeliveryStore persists what the delivery path writes: the pending rows a
// consumer round creates, the claim, lease and record of an attempt, and
// the system transitions of a subscription (quota, gap, 410, failures,
// age). It is the delivery job's half of the module's WebhookStore; the
// owner side is SubscriptionStore. Implemented by adapters/postgres.
//
// Every method joins the unit of work of ctx (pg.Conn) and the locking
// ones need it. Locks follow the lock order of the module: a subscription
// row first, then its delivery rows. The delivery path takes the
// subscription row with FOR NO KEY UPDATE: two jobs of one subscription
// still serialize on it, and so do owner changes (FOR UPDATE), while a
// round that inserts delivery rows (FOR KEY SHARE through the foreign key)
// never waits for a job.
type DeliveryStore interface {
	// DeliveryCandidates returns the app subscriptions that may receive an
	// event of type t (D-M2-26-1): state active or paused, t in
	// their event_types, their installation active or suspended with t in
	// its event_subscriptions; ordered by subscription id, never nil. Each
	// comes with its open rows counted up to countLimit (an active one's;
	// a larger backlog gives countLimit) and the highest event seq of its
	// rows (D-M2-26-84).
	DeliveryCandidates(ctx context.Context, t eventlog.Type, countLimit int) ([]Candidate, error)
	// DeliveryCandidatesOf returns the candidates of type t among the apps
	// whose principals are in principals, found from those apps (not from
	// every subscription of t), with DeliveryCandidates' counts; ordered by
	// subscription id, never nil.
	DeliveryCandidatesOf(ctx context.Context, t eventlog.Type, principals []ids.ID, countLimit int) ([]Candidate, error)
	// InsertDeliveries creates one pending row (attempt 0, due at now) per
	// element of rows, all in one statement, skipping a subscription that
	// already has a row for the event or no longer exists. It returns the
	// ids of the rows it created, never nil.
	InsertDeliveries(ctx context.Context, rows []NewDelivery, now time.Time) (map[ids.ID]bool, error)
	// LockLeased returns, in the order of their ids, the subscriptions of
	// subs whose lease is in force at now and whose rows it could lock
	// FOR SHARE without waiting, holding those locks until the unit of
	// work ends (ADR 0106); never nil. A record of a subscription locks
	// its row for update before it reads the next heads, so the lease's
	// holder reads every row the unit of work created.
	LockLeased(ctx context.Context, subs []ids.ID, now time.Time) ([]ids.ID, error)
	// LockDeliveryTargets returns the app subscriptions of subs with their
	// installations and app principals, taking their row locks (FOR NO KEY
	// UPDATE) in the order of their ids until the unit of work ends, each
	// with up to heads of its pending deliveries in seq order
	// (PendingHeads), all in one statement (D-M2-26-76); ordered by id,
	// without the ids that name no app subscription, never nil. The heads
	// are read as they were before a lock waited for another transaction
	// (ClaimHeads).
	LockDeliveryTargets(ctx context.Context, subs []ids.ID, heads int) ([]LockedTarget, error)
	// PendingHeads returns up to max of the subscription's pending
	// deliveries in seq order, never nil. The caller holds the
	// subscription's row lock.
	PendingHeads(ctx context.Context, subscriptionID ids.ID, max int) ([]PendingHead, error)
	// LockLiveSubscriptions returns every app subscription in state active
	// or paused whose installation is active or suspended, ordered by id,
	// each with its row lock; never nil.
	LockLiveSubscriptions(ctx context.Context) ([]SubscriptionRef, error)
	// SetSubscriptionState writes a system transition: state, disabled_at
	// (zero for none) and updated_at = now. The caller holds the row lock.
	SetSubscriptionState(ctx context.Context, id ids.ID, state apps.SubscriptionState, disabledAt, now time.Time) error
	// ClaimHeads claims the batch of each of cs (ADR 0088), all with one
	// statement (D-M2-26-77): attempt + 1 for each head of c.Heads, and
	// its subscription takes the lease of the batch
	// (Lease{c.Heads[0], c.LeaseUntil}) and c.RateWindow. The caller holds
	// each subscription's row lock, under which it read the heads
	// (PendingHeads) and found them due and consecutive from the head, and
	// has seen no lease in force (DeliveryTarget.Lease). It returns, for
	// each of cs in order, the claimed heads in seq order, and none when,
	// as the claim finds them, they are not exactly the subscription's
	// first pending deliveries or not all due: the read in the statement
	// that took the row lock sees the rows as they were before the lock
	// waited for another transaction, so the caller reads them again
	// (PendingHeads).
	ClaimHeads(ctx context.Context, cs ...HeadClaimRequest) ([][]ClaimedHead, error)
	// MarkHeadStalled makes the subscription's head name internal_error
	// and be due at nextAttemptAt, still pending (D-M2-26-42). It returns
	// the head's event_seq, and false without a head. The caller holds the
	// subscription's row lock.
	MarkHeadStalled(ctx context.Context, subscriptionID ids.ID, nextAttemptAt, now time.Time) (int64, bool, error)
	// FinishUnsent ends a pending head that a run read and did not claim
	// without a request: status dead, last_error code, next_attempt_at
	// cleared; its attempt stays (no request of the run left) and
	// response_code keeps the answer of an earlier attempt. It returns
	// false, and changes nothing, when the delivery is no longer pending
	// (a read from before the row lock waited). The caller holds the
	// subscription's row lock.
	FinishUnsent(ctx context.Context, deliveryID ids.ID, code apps.LastError, now time.Time) (bool, error)
	// ExpirePending makes every pending row of the subscription with an
	// event_seq below belowSeq dead with last_error event_expired and
	// returns how many there were with their lowest and highest event_seq.
	ExpirePending(ctx context.Context, subscriptionID ids.ID, belowSeq int64, now time.Time) (Expired, error)
	// RecordAttempts records the batches of rs, all with one statement
	// (D-M2-26-78) after one that takes the subscriptions' row locks, in the
	// order of their ids, in the same round trip (D-M2-26-83): for each
	// record it writes the outcomes of its sent attempts when the
	// subscription's standing and rate are r.Expected (D-M2-26-68), each
	// while its delivery is still pending with the claimed attempt, gives
	// the heads the batch did not send (r.Unsent) their attempt back, and
	// writes the subscription's change when r.Subscription is set and every
	// outcome was written. It returns, for each record in order, the locked
	// target as it was before the record, whether the expectation held
	// (false: nothing of the record is written, and the caller computes it
	// again from the target), whether the outcomes were written (false: a
	// row was deleted, redelivered or claimed again, and the batch's result
	// is discarded) and up to r.NextHeads of the subscription's other
	// pending deliveries, read once its lock was granted, so every one
	// committed before is among them. Whenever the expectation held, the
	// subscription's lease of the batch is given back. Found is false, and
	// nothing of the record written, when its subscription is gone.
	RecordAttempts(ctx context.Context, rs ...AttemptRecord) ([]Recorded, error)
}

// Candidate is a subscription that may receive an event in a round.
type Candidate struct {
	// SubscriptionID and State name the subscription as the round saw it.
	SubscriptionID ids.ID
	State          apps.SubscriptionState
	// InstallationID, AppID, AppPrincipalID and InstallationState describe
	// its installation; a personal event goes only to the installation whose
	// app principal is its audience.
	InstallationID, AppID, AppPrincipalID ids.ID
	InstallationState                     apps.InstallationState
	// GrantedScopes are the installation's scopes, for the routing by
	// rights of the round.
	GrantedScopes []string
	// Pending are the open rows of an active subscription, counted up to
	// the limit the round asked for (0 for a paused one), before the
	// round's rows: where its quota starts (D-M2-26-2, D-M2-26-84).
	Pending int
	// LastEventSeq is the highest event seq of any of its rows, 0 without
	// one: a row of the round for a later event cannot exist already, so
	// its insert creates it.
	LastEventSeq int64
}

// LockedTarget is a subscription LockDeliveryTargets locked, with its
// pending heads.
type LockedTarget struct {
	// Target is the subscription as it reads under its row lock.
	Target DeliveryTarget
	// Heads are its first pending deliveries in seq order.
	Heads []PendingHead
}

// DeliveryTarget is a subscription as the delivery job reads it under its
// row lock: everything an attempt needs besides the event, in one read.
type DeliveryTarget struct {
	// SubscriptionID, State, URL and EventTypes of the subscription.
	SubscriptionID ids.ID
	State          apps.SubscriptionState
	URL            string
	EventTypes     []string
	// HMACEnabled, HMACGeneration and HMACRotatedAt (zero when never
	// rotated) decide the v1 signatures.
	HMACEnabled    bool
	HMACGeneration int
	HMACRotatedAt  time.Time
	// ConsecutiveFailures counts counted failures in a row.
	ConsecutiveFailures int
	// DisabledAt is set while the state is disabled.
	DisabledAt time.Time
	// Installation is the subscription's installation with its app
	// principal, current grants' scopes and event subscriptions.
	Installation apps.Installation
	// Lease is the attempt in flight, zero when none.
	Lease Lease
	// MaxPerSecond is the subscription's rate limit, 0 for none; RateWindow
	// the ends of its latest attempts (ADR 0081).
	MaxPerSecond int
	RateWindow   webhook.RateWindow
	// WakeUpAt is when the latest lease wake-up a run of the subscription
	// scheduled is due, which a later run may rely on (ADR 0087); zero when
	// none was named.
	WakeUpAt time.Time
}

// standing returns the part of t the state machine changes.
func (t *DeliveryTarget) standing() webhook.Standing {
	return webhook.Standing{State: t.State, DisabledAt: t.DisabledAt, ConsecutiveFailures: t.ConsecutiveFailures}
}

// setStanding takes over a standing the delivery path wrote.
func (t *DeliveryTarget) setStanding(st webhook.Standing) {
	t.State, t.DisabledAt, t.ConsecutiveFailures = st.State, st.DisabledAt, st.ConsecutiveFailures
}

// rateWindow returns the rate window a claim of t writes with its lease
// (ADR 0081): the stored one, with the end of an attempt whose lease ran
// out before anybody recorded it (a worker that stopped), since its
// request, if one left, reached the receiver before its lease ended; nil
// without a limit. The caller has seen no lease in force.
func (t *DeliveryTarget) rateWindow() webhook.RateWindow {
	if t.MaxPerSecond == 0 {
		return nil
	}
	if !t.Lease.DeliveryID.IsZero() {
		return t.RateWindow.Ended(t.Lease.Until, t.MaxPerSecond)
	}
	return t.RateWindow
}

// Lease is the subscription's attempt in flight (D-M2-26-37): the delivery
// it covers and when it ends. While it is in force no job claims a head of
// the subscription.
type Lease struct {
	// DeliveryID is the delivery whose attempt is in flight.
	DeliveryID ids.ID
	// Until is when the lease ends; the attempt's deadline is never later.
	Until time.Time
}

// InForce reports whether the lease still holds at now.
func (l Lease) InForce(now time.Time) bool { return !l.DeliveryID.IsZero() && now.Before(l.Until) }

// HeadClaimRequest is what ClaimHeads is asked to claim.
type HeadClaimRequest struct {
	// SubscriptionID names the subscription whose heads are claimed.
	SubscriptionID ids.ID
	// Heads are the deliveries to claim, in seq order; the lease names the
	// first.
	Heads []ids.ID
	// Now is the claim's time; LeaseUntil the end of the lease it takes.
	Now, LeaseUntil time.Time
	// RateWindow is written with the lease; nil for a subscription
	// without a limit.
	RateWindow webhook.RateWindow
	// WakeUpAt, when set, is the time of the lease wake-up the caller
	// inserts in the same unit of work; the claim names it on the
	// subscription (DeliveryTarget.WakeUpAt) for later runs. Zero keeps the
	// one named.
	WakeUpAt time.Time
}

// PendingHead is a pending delivery of a subscription as its lock or the
// record of an attempt read it: a head a run may claim next.
type PendingHead struct {
	// ID names the delivery, Event its event in the log (ADR 0068).
	ID    ids.ID
	Event eventsync.EventKey
	// NextAttemptAt is when it is due.
	NextAttemptAt time.Time
}

// SubscriptionRef names a subscription with its state and app.
type SubscriptionRef struct {
	// ID, State and AppID of the subscription.
	ID    ids.ID
	State apps.SubscriptionState
	AppID ids.ID
}

// ClaimedHead is a head delivery as ClaimHeads claimed it.
type ClaimedHead struct {
	// ID, EventSeq and EventID name the delivery and its event;
	// EventOccurredAt completes the event's key in the log (ADR 0068).
	ID              ids.ID
	EventSeq        int64
	EventID         ids.ID
	EventOccurredAt time.Time
	// Attempt is the attempt this claim made (the stored attempt after the
	// claim).
	Attempt int
	// CreatedAt starts the retry window of webhook.retry_max_age.
	CreatedAt time.Time
	// LeaseUntil is when the claim's lease ends: the attempt's deadline.
	LeaseUntil time.Time
}

// Recorded is the result of a record of RecordAttempts.
type Recorded struct {
	// Found is false when the subscription is gone; the rest is then
	// zero.
	Found bool
	// Target is the subscription as RecordAttempts locked it, before it
	// wrote anything.
	Target DeliveryTarget
	// AsExpected tells whether the subscription's standing and rate were
	// the AttemptRecord's Expected; nothing is written otherwise.
	AsExpected bool
	// Written is false when the result was discarded.
	Written bool
	// Next are up to AttemptRecord.NextHeads of the deliveries of the
	// subscription other than the recorded ones that were pending when
	// the record was written, in seq order, whatever their seq: the heads
	// the run claims next (D-M2-26-70). Empty when none is pending: the
	// run then ends without claiming (D-M2-26-67), since a row a round
	// creates later comes with a job of its own.
	Next []PendingHead
}

// Expired is the result of ExpirePending.
type Expired struct {
	// Count is the number of rows made dead; FirstSeq and LastSeq their
	// lowest and highest event_seq (zero when Count is zero).
	Count             int
	FirstSeq, LastSeq int64
}

// AttemptRecord is the record of a batch's sent attempts as RecordAttempts
// writes it (ADR 0088).
type AttemptRecord struct {
	// SubscriptionID names the subscription; LeaseDeliveryID the delivery
	// its lease of the batch names, given back.
	SubscriptionID  ids.ID
	LeaseDeliveryID ids.ID
	// Outcomes are the sent attempts in seq order; each row is written
	// only while it is pending with its claimed attempt.
	Outcomes []AttemptOutcome
	// Unsent are the heads the batch claimed and did not send; each gets
	// its attempt back while it is pending with its claimed attempt.
	Unsent []ClaimedHead
	// Subscription is the subscription's change after the last outcome,
	// nil when it stays as it is (a throttle).
	Subscription *SubscriptionChange
	// RateWindow is the subscription's rate window with the attempts'
	// ends, written whether or not the result is discarded; nil without a
	// limit (ADR 0081).
	RateWindow webhook.RateWindow
	// Now stamps updated_at.
	Now time.Time
	// Expected is what the record was computed from; it is written only
	// when the subscription still has it (D-M2-26-68).
	Expected RecordBasis
	// NextHeads is how many pending heads Recorded.Next names at most.
	NextHeads int
}

// AttemptOutcome is the outcome of one sent attempt of a batch.
type AttemptOutcome struct {
	// DeliveryID and Attempt name the claimed delivery.
	DeliveryID ids.ID
	Attempt    int
	// StoredAttempt is the attempt the row keeps: Attempt, or Attempt - 1
	// when the egress guard refused the target before any byte left
	// (attempt counts requests, D-M2-26-43).
	StoredAttempt int
	// Status is the new status; NextAttemptAt is set exactly when it is
	// pending, DeliveredAt exactly when it is succeeded.
	Status        apps.DeliveryStatus
	NextAttemptAt time.Time
	DeliveredAt   time.Time
	// LastError is the code of a failed attempt, "" for a success.
	LastError apps.LastError
	// ResponseCode is the HTTP status of the answer, 0 when none arrived.
	ResponseCode int
}

// RecordBasis is the part of a subscription the record of an attempt is
// computed from: its standing (webhook.Settle) and its rate (the window's
// end of the attempt).
type RecordBasis struct {
	Standing     webhook.Standing
	MaxPerSecond int
	RateWindow   webhook.RateWindow
}

// SubscriptionChange is what an attempt changes on its subscription.
type SubscriptionChange struct {
	// State and DisabledAt (zero unless disabled) after the attempt.
	State      apps.SubscriptionState
	DisabledAt time.Time
	// ConsecutiveFailures after the attempt.
	ConsecutiveFailures int
	// DeliveredSeq, when not 0, raises last_delivered_seq to it
	// (GREATEST): the highest seq of the batch's accepted deliveries.
	DeliveredSeq int64
	// SigningKeyKID replaces signing_key_kid when not "": the active key
	// that signed an accepted delivery (D-M2-26-4).
	SigningKeyKID string
}

// SignedRequest is one webhook POST, signed and ready to send. It lives in
// memory only: the body and the signature are never stored or logged.
type SignedRequest struct {
	// SubscriptionID names the subscription, for telemetry.
	SubscriptionID ids.ID
	// URL is the subscription's https address.
	URL string
	// WebhookID is the event ID, the same on every retry and redelivery.
	WebhookID ids.ID
	// Timestamp is the Unix time in seconds of this attempt.
	Timestamp int64
	// Signature is the value of the webhook-signature header.
	Signature string
	// Body is the JSON envelope exactly as signed.
	Body []byte
}

// SendResult is what came back from a receiver. Only the status and the
// Retry-After header are kept: a response body is never stored
// (docs/api/webhooks.md 4).
type SendResult struct {
	// StatusCode is the HTTP status of the response.
	StatusCode int
	// RetryAfter is the raw Retry-After header, or "".
	RetryAfter string
}

// WebhookSender sends signed requests to receivers.
type WebhookSender interface {
	// Send POSTs req. A response of any status is a SendResult with a nil
	// error; an error means no response arrived (blocked address, timeout,
	// TLS or connection failure) and is classified by domain.Classify.
	Send(ctx context.Context, req SignedRequest) (SendResult, error)
}

// NewDelivery is one row a consumer round creates: delivery ID of the
// event Event (with its id EventID) to subscription SubscriptionID.
type NewDelivery struct {
	ID             ids.ID
	SubscriptionID ids.ID
	Event          eventsync.EventKey
	EventID        ids.ID
}
