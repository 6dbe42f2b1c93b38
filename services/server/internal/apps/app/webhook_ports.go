package app

import (
	"context"
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/kernel/ids"
)

// SubscriptionStore persists what the owner side of outgoing webhooks reads
// and writes: the subscriptions (webhook_subscriptions) and the delivery
// rows an owner lists, redelivers or makes due (webhook_deliveries). It is
// one half of the module's WebhookStore; the delivery job's half is its
// DeliveryStore. Implemented by adapters/postgres.
//
// Every method joins the unit of work of ctx (pg.Conn); the locking reads
// are internal errors outside one, because their locks would end with the
// statement. The lock order of the module holds for every caller: the
// installation row, then the subscription row, then its delivery rows, so
// the use cases, the consumer round and the delivery job never wait for
// each other in a cycle.
//
// A Subscription the store returns carries AppID (from its installation)
// and SignatureSchemes (derived from HMACEnabled); times are UTC. A
// Delivery never carries EventType: that comes from the event log.
type SubscriptionStore interface {
	// InsertSubscription stores a new app subscription: ID,
	// AppInstallationID, URL, EventTypes, State, SigningKeyKID,
	// HMACEnabled, HMACGeneration, CreatedBy, CreatedAt and UpdatedAt of
	// s (the other columns take their defaults).
	InsertSubscription(ctx context.Context, s apps.Subscription) error
	// Subscription returns the app subscription id without a lock, and
	// false when there is none.
	Subscription(ctx context.Context, id ids.ID) (apps.Subscription, bool, error)
	// LockSubscription returns the app subscription id with a FOR UPDATE
	// row lock held until the unit of work ends, and false when there is
	// none.
	LockSubscription(ctx context.Context, id ids.ID) (apps.Subscription, bool, error)
	// LockInstallationSubscriptions returns every subscription of the
	// installation, ordered by id, each with a FOR UPDATE row lock; never
	// nil.
	LockInstallationSubscriptions(ctx context.Context, installationID ids.ID) ([]apps.Subscription, error)
	// AppSubscriptions returns every subscription of every installation of
	// the app, ordered by created_at, then id; never nil.
	AppSubscriptions(ctx context.Context, appID ids.ID) ([]apps.Subscription, error)
	// UpdateSubscription writes what an owner or an uninstall changes: URL,
	// EventTypes, State, HMACGeneration, HMACRotatedAt,
	// ConsecutiveFailures, DisabledAt and UpdatedAt of s.ID. It never
	// writes last_delivered_seq or signing_key_kid, which belong to the
	// delivery job. Callers hold the row lock (LockSubscription).
	UpdateSubscription(ctx context.Context, s apps.Subscription) error
	// DeleteSubscription deletes the subscription and, by ON DELETE
	// CASCADE, its deliveries. It returns false when there was none.
	DeleteSubscription(ctx context.Context, id ids.ID) (bool, error)
	// MakeHeadDue sets next_attempt_at = now on the subscription's head
	// (its pending delivery with the lowest event_seq) and returns false
	// when it has no pending delivery. Callers hold the subscription's row
	// lock.
	MakeHeadDue(ctx context.Context, subscriptionID ids.ID, now time.Time) (bool, error)
	// Delivery returns the delivery id without a lock, and false when
	// there is none.
	Delivery(ctx context.Context, id ids.ID) (apps.Delivery, bool, error)
	// LockDelivery returns the delivery id with a FOR UPDATE row lock, and
	// false when there is none. Callers lock its subscription first.
	LockDelivery(ctx context.Context, id ids.ID) (apps.Delivery, bool, error)
	// UpdateRedelivered writes Status, NextAttemptAt, LastError,
	// ResponseCode, DeliveredAt, CreatedAt and UpdatedAt of d.ID (never
	// attempt): the row as a redelivery leaves it.
	UpdateRedelivered(ctx context.Context, d apps.Delivery) error
	// Deliveries returns one page of q.SubscriptionID's deliveries ordered
	// by (event_seq, id) descending, after q.After when set, with
	// q.Status when set, at most q.Limit items; Next is set when more
	// follow. Items is never nil.
	Deliveries(ctx context.Context, q apps.DeliveryQuery) (apps.DeliveryPage, error)
}

// HMACMasterKey gives the master key from which the v1 secrets of the
// subscriptions are derived (webhook.hmac_master_key_ref).
type HMACMasterKey interface {
	// Key returns the key bytes; callers must not keep or log them.
	Key(ctx context.Context) ([]byte, error)
}

// DeliveryScheduler wakes the delivery job of a subscription.
type DeliveryScheduler interface {
	// Schedule inserts a job apps.webhook_deliver for subscriptionID, due at
	// at, in the unit of work of ctx, so the job exists exactly when the rows
	// it serves were committed.
	Schedule(ctx context.Context, subscriptionID ids.ID, at time.Time) error
	// ScheduleGroups inserts, in one insert in the unit of work of ctx, a
	// job apps.webhook_deliver due at at for each of groups: the job of
	// a group of one is that subscription's as Schedule inserts it, the
	// job of a larger group runs Deliveries.DeliverTogether for its
	// subscriptions. No groups inserts nothing.
	ScheduleGroups(ctx context.Context, groups [][]ids.ID, at time.Time) error
	// StartGroups is ScheduleGroups for jobs due now that start in this
	// process right after the commit of ctx's unit of work where the job
	// runtime allows it, without River's hop from insert to fetch (ADR
	// 0092); a job it cannot start is River's as ScheduleGroups'. The
	// consumer round schedules every subscription it served at its end
	// this way.
	StartGroups(ctx context.Context, groups [][]ids.ID, at time.Time) error
	// EndStartedJob deletes the row of the job that StartGroups started in
	// this process and whose run is in ctx with the COMMIT of the unit of
	// work of ctx (jobs.RetireStartedRow, D-M2-26-87); once that committed,
	// a failure or a crash of the run is left to what the unit of work
	// committed. It does nothing for a job River runs. Its error is the
	// unit of work's.
	EndStartedJob(ctx context.Context) error
}
