package postgres

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/adapters/postgres/db"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
)

// SubscriptionStore is the owner side of the webhook tables (migrations
// 00040 and 00041): app.SubscriptionStore over the sqlc queries of
// queries/webhook_subscriptions.sql, and app.RecoveryStore
// (webhook_recovery.go), the narrower port of a recovery on the same rows.
type SubscriptionStore struct {
	handle
}

var _ app.SubscriptionStore = (*SubscriptionStore)(nil)

// NewSubscriptionStore returns the store over pool (connected as
// bothy_app). It panics on a nil pool (a wiring bug).
func NewSubscriptionStore(pool *pgxpool.Pool) *SubscriptionStore {
	return &SubscriptionStore{handle: newHandle(pool, "NewSubscriptionStore")}
}

// InsertSubscription implements app.SubscriptionStore.
func (s *SubscriptionStore) InsertSubscription(ctx context.Context, sub apps.Subscription) error {
	err := s.q(ctx).WebhookSubscriptionInsert(ctx, db.WebhookSubscriptionInsertParams{
		ID: sub.ID, AppInstallationID: sub.AppInstallationID, Url: sub.URL, EventTypes: nonNil(sub.EventTypes),
		State: string(sub.State), SigningKeyKid: sub.SigningKeyKID, HmacEnabled: sub.HMACEnabled,
		HmacGeneration: int32(sub.HMACGeneration), MaxPerSecond: nullInt32(sub.MaxPerSecond), CreatedBy: sub.CreatedBy,
		CreatedAt: sub.CreatedAt, UpdatedAt: sub.UpdatedAt,
	})
	if err != nil {
		return errs.Wrap(err, "apps: inserting the webhook subscription failed")
	}
	return nil
}

// Subscription implements app.SubscriptionStore.
func (s *SubscriptionStore) Subscription(ctx context.Context, id ids.ID) (apps.Subscription, bool, error) {
	row, err := s.q(ctx).WebhookSubscriptionGetWithApp(ctx, id)
	return oneSubscription(row.WebhookSubscription, row.AppID, err)
}

// LockSubscription implements app.SubscriptionStore.
func (s *SubscriptionStore) LockSubscription(ctx context.Context, id ids.ID) (apps.Subscription, bool, error) {
	if _, err := pg.RequireTx(ctx); err != nil {
		return apps.Subscription{}, false, err
	}
	row, err := s.q(ctx).WebhookSubscriptionLockWithApp(ctx, id)
	return oneSubscription(row.WebhookSubscription, row.AppID, err)
}

func oneSubscription(row db.WebhookSubscription, appID ids.ID, err error) (apps.Subscription, bool, error) {
	if errors.Is(err, pgx.ErrNoRows) {
		return apps.Subscription{}, false, nil
	}
	if err != nil {
		return apps.Subscription{}, false, errs.Wrap(err, "apps: reading the webhook subscription failed")
	}
	return subscriptionOf(row, appID), true, nil
}

// LockInstallationSubscriptions implements app.SubscriptionStore.
func (s *SubscriptionStore) LockInstallationSubscriptions(ctx context.Context, installationID ids.ID) ([]apps.Subscription, error) {
	if _, err := pg.RequireTx(ctx); err != nil {
		return nil, err
	}
	rows, err := s.q(ctx).WebhookSubscriptionLockByInstallation(ctx, installationID)
	if err != nil {
		return nil, errs.Wrap(err, "apps: locking the webhook subscriptions failed")
	}
	return subscriptionsOf(rows, func(r db.WebhookSubscriptionLockByInstallationRow) (db.WebhookSubscription, ids.ID) {
		return r.WebhookSubscription, r.AppID
	}), nil
}

// AppSubscriptions implements app.SubscriptionStore.
func (s *SubscriptionStore) AppSubscriptions(ctx context.Context, appID ids.ID) ([]apps.Subscription, error) {
	rows, err := s.q(ctx).WebhookSubscriptionListByApp(ctx, appID)
	if err != nil {
		return nil, errs.Wrap(err, "apps: listing the webhook subscriptions failed")
	}
	return subscriptionsOf(rows, func(r db.WebhookSubscriptionListByAppRow) (db.WebhookSubscription, ids.ID) {
		return r.WebhookSubscription, r.AppID
	}), nil
}

// UpdateSubscription implements app.SubscriptionStore.
func (s *SubscriptionStore) UpdateSubscription(ctx context.Context, sub apps.Subscription) error {
	n, err := s.q(ctx).WebhookSubscriptionUpdateOwned(ctx, db.WebhookSubscriptionUpdateOwnedParams{
		ID: sub.ID, Url: sub.URL, EventTypes: nonNil(sub.EventTypes), State: string(sub.State),
		HmacGeneration: int32(sub.HMACGeneration), HmacRotatedAt: pg.NullTime(sub.HMACRotatedAt),
		ConsecutiveFailures: int32(sub.ConsecutiveFailures), DisabledAt: pg.NullTime(sub.DisabledAt),
		MaxPerSecond: nullInt32(sub.MaxPerSecond), UpdatedAt: sub.UpdatedAt,
	})
	if err != nil {
		return errs.Wrap(err, "apps: updating the webhook subscription failed")
	}
	if n != 1 {
		return errs.Internalf("apps: the webhook subscription to update does not exist")
	}
	return nil
}

// DeleteSubscription implements app.SubscriptionStore.
func (s *SubscriptionStore) DeleteSubscription(ctx context.Context, id ids.ID) (bool, error) {
	n, err := s.q(ctx).WebhookSubscriptionDelete(ctx, id)
	if err != nil {
		return false, errs.Wrap(err, "apps: deleting the webhook subscription failed")
	}
	return n == 1, nil
}

// MakeHeadDue implements app.SubscriptionStore.
func (s *SubscriptionStore) MakeHeadDue(ctx context.Context, subscriptionID ids.ID, now time.Time) (bool, error) {
	n, err := s.q(ctx).WebhookDeliveryMakeHeadDue(ctx, db.WebhookDeliveryMakeHeadDueParams{
		SubscriptionID: subscriptionID, Now: now})
	if err != nil {
		return false, errs.Wrap(err, "apps: making the webhook head due failed")
	}
	return n == 1, nil
}

// Delivery implements app.SubscriptionStore.
func (s *SubscriptionStore) Delivery(ctx context.Context, id ids.ID) (apps.Delivery, bool, error) {
	row, err := s.q(ctx).WebhookDeliveryGetByID(ctx, id)
	return oneDelivery(row, err)
}

// LockDelivery implements app.SubscriptionStore.
func (s *SubscriptionStore) LockDelivery(ctx context.Context, id ids.ID) (apps.Delivery, bool, error) {
	if _, err := pg.RequireTx(ctx); err != nil {
		return apps.Delivery{}, false, err
	}
	row, err := s.q(ctx).WebhookDeliveryLockByID(ctx, id)
	return oneDelivery(row, err)
}

func oneDelivery(row db.WebhookDelivery, err error) (apps.Delivery, bool, error) {
	if errors.Is(err, pgx.ErrNoRows) {
		return apps.Delivery{}, false, nil
	}
	if err != nil {
		return apps.Delivery{}, false, errs.Wrap(err, "apps: reading the webhook delivery failed")
	}
	return deliveryOf(row), true, nil
}

// UpdateRedelivered implements app.SubscriptionStore.
func (s *SubscriptionStore) UpdateRedelivered(ctx context.Context, d apps.Delivery) error {
	n, err := s.q(ctx).WebhookDeliveryUpdateForRedelivery(ctx, db.WebhookDeliveryUpdateForRedeliveryParams{
		ID: d.ID, Status: string(d.Status), NextAttemptAt: pg.NullTime(d.NextAttemptAt), LastError: nullString(string(d.LastError)),
		ResponseCode: nullInt32(d.ResponseCode), DeliveredAt: pg.NullTime(d.DeliveredAt), CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
	})
	if err != nil {
		return errs.Wrap(err, "apps: updating the webhook delivery failed")
	}
	if n != 1 {
		return errs.Internalf("apps: the webhook delivery to update does not exist")
	}
	return nil
}

// Deliveries implements app.SubscriptionStore. It reads one row more than
// the page holds to learn whether another page follows.
func (s *SubscriptionStore) Deliveries(ctx context.Context, q apps.DeliveryQuery) (apps.DeliveryPage, error) {
	if q.Limit < 1 || q.Limit >= math.MaxInt32 {
		return apps.DeliveryPage{}, errs.Internalf("apps: a delivery page needs a bounded limit")
	}
	p := db.WebhookDeliveryPageParams{SubscriptionID: q.SubscriptionID, Status: string(q.Status), MaxRows: int32(q.Limit + 1)}
	if q.After != nil {
		p.HasAfter, p.AfterSeq, p.AfterID = true, q.After.EventSeq, q.After.ID
	}
	rows, err := s.q(ctx).WebhookDeliveryPage(ctx, p)
	if err != nil {
		return apps.DeliveryPage{}, errs.Wrap(err, "apps: listing the webhook deliveries failed")
	}
	page := apps.DeliveryPage{Items: make([]apps.Delivery, 0, min(len(rows), q.Limit))}
	for i, r := range rows {
		if i == q.Limit {
			last := page.Items[len(page.Items)-1]
			page.Next = &apps.DeliveryPosition{EventSeq: last.EventSeq, ID: last.ID}
			break
		}
		page.Items = append(page.Items, deliveryOf(r))
	}
	return page, nil
}

// subscriptionsOf maps the rows of a list query (each a subscription with
// the app of its installation, in a row type of its own); never nil.
func subscriptionsOf[R any](rows []R, split func(R) (db.WebhookSubscription, ids.ID)) []apps.Subscription {
	out := make([]apps.Subscription, 0, len(rows))
	for _, r := range rows {
		out = append(out, subscriptionOf(split(r)))
	}
	return out
}

// subscriptionOf maps a row and the app of its installation to the port's
// Subscription, with times in UTC.
func subscriptionOf(r db.WebhookSubscription, appID ids.ID) apps.Subscription {
	return apps.Subscription{
		ID: r.ID, AppID: appID, AppInstallationID: r.AppInstallationID, URL: r.Url, EventTypes: nonNil(r.EventTypes),
		State: apps.SubscriptionState(r.State), SignatureSchemes: webhook.SignatureSchemes(r.HmacEnabled),
		SigningKeyKID: r.SigningKeyKid, HMACEnabled: r.HmacEnabled, HMACGeneration: int(r.HmacGeneration),
		HMACRotatedAt: utc(r.HmacRotatedAt), ConsecutiveFailures: int(r.ConsecutiveFailures),
		LastDeliveredSeq: r.LastDeliveredSeq, DisabledAt: utc(r.DisabledAt), MaxPerSecond: intOf(r.MaxPerSecond), CreatedBy: r.CreatedBy,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}
}

// deliveryOf maps a row to the port's Delivery (EventType stays empty: it
// is read from the event log), with times in UTC.
func deliveryOf(r db.WebhookDelivery) apps.Delivery {
	d := apps.Delivery{
		ID: r.ID, SubscriptionID: r.SubscriptionID, EventSeq: r.EventSeq, EventID: r.EventID, EventOccurredAt: r.EventOccurredAt.UTC(),
		Status: apps.DeliveryStatus(r.Status), Attempt: int(r.Attempt), NextAttemptAt: utc(r.NextAttemptAt),
		DeliveredAt: utc(r.DeliveredAt), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}
	if r.LastError != nil {
		d.LastError = apps.LastError(*r.LastError)
	}
	if r.ResponseCode != nil {
		d.ResponseCode = int(*r.ResponseCode)
	}
	return d
}

// utc returns *t in UTC, or the zero time for NULL.
func utc(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// nullString returns nil for "" (SQL NULL), else &v.
func nullString(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// nullInt32 returns nil for 0 (SQL NULL), else v as *int32; callers pass
// values of int4 columns such as a status code or a rate limit.
func nullInt32(v int) *int32 {
	if v == 0 {
		return nil
	}
	n := int32(v)
	return &n
}

// intOf returns *v as an int, or 0 for NULL: the inverse of nullInt32.
func intOf(v *int32) int {
	if v == nil {
		return 0
	}
	return int(*v)
}
