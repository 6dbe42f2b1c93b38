package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/adapters/postgres/db"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
	eventsync "bothy/server/internal/sync"
)

// DeliveryStore implements app.DeliveryStore over the sqlc queries of
// queries/webhook_deliveries.sql. Every query joins the unit of work of its
// context (pg.Conn); the locking reads refuse to run outside one.
type DeliveryStore struct {
	pool *pgxpool.Pool
}

var _ app.DeliveryStore = (*DeliveryStore)(nil)

// NewDeliveryStore returns the store over pool (connected as bothy_app). It
// panics on a nil pool (a wiring bug).
func NewDeliveryStore(pool *pgxpool.Pool) *DeliveryStore {
	if pool == nil {
		panic("apps: postgres.NewDeliveryStore needs a pool")
	}
	return &DeliveryStore{pool: pool}
}

// q returns the queries on the ambient transaction of ctx, or the pool.
func (s *DeliveryStore) q(ctx context.Context) *db.Queries { return db.New(pg.Conn(ctx, s.pool)) }

// locked returns the queries on the ambient transaction and an internal
// error outside one: a row lock would end with its statement.
func (s *DeliveryStore) locked(ctx context.Context) (*db.Queries, error) {
	tx, err := pg.RequireTx(ctx)
	if err != nil {
		return nil, err
	}
	return db.New(tx), nil
}

// DeliveryCandidates implements app.DeliveryStore.
func (s *DeliveryStore) DeliveryCandidates(ctx context.Context, t eventlog.Type) ([]app.Candidate, error) {
	rows, err := s.q(ctx).WebhookSubscriptionDeliveryCandidates(ctx, string(t))
	if err != nil {
		return nil, errs.Wrap(err, "apps: reading the webhook candidates failed")
	}
	out := make([]app.Candidate, 0, len(rows))
	for _, r := range rows {
		out = append(out, candidate(db.WebhookSubscriptionDeliveryCandidatesOfRow(r)))
	}
	return out, nil
}

// DeliveryCandidatesOf implements app.DeliveryStore.
func (s *DeliveryStore) DeliveryCandidatesOf(ctx context.Context, t eventlog.Type, principals []ids.ID) ([]app.Candidate, error) {
	out := []app.Candidate{}
	if len(principals) == 0 {
		return out, nil
	}
	rows, err := s.q(ctx).WebhookSubscriptionDeliveryCandidatesOf(ctx, db.WebhookSubscriptionDeliveryCandidatesOfParams{
		PrincipalIds: principals, EventType: string(t),
	})
	if err != nil {
		return nil, errs.Wrap(err, "apps: reading the webhook candidates failed")
	}
	for _, r := range rows {
		out = append(out, candidate(r))
	}
	return out, nil
}

// candidate maps a row of either candidate query.
func candidate(r db.WebhookSubscriptionDeliveryCandidatesOfRow) app.Candidate {
	return app.Candidate{
		SubscriptionID:    r.ID,
		State:             apps.SubscriptionState(r.State),
		InstallationID:    r.InstallationID,
		AppID:             r.AppID,
		AppPrincipalID:    r.PrincipalID,
		InstallationState: apps.InstallationState(r.InstallationState),
		GrantedScopes:     nonNil(r.GrantedScopes),
	}
}

// InsertDeliveries implements app.DeliveryStore.
func (s *DeliveryStore) InsertDeliveries(ctx context.Context, rows []app.NewDelivery, now time.Time) (map[ids.ID]bool, error) {
	p := db.WebhookDeliveryInsertForRoundParams{Now: now,
		Ids: make([]ids.ID, len(rows)), SubscriptionIds: make([]ids.ID, len(rows)), EventSeqs: make([]int64, len(rows)),
		EventIds: make([]ids.ID, len(rows)), EventOccurredAts: make([]time.Time, len(rows))}
	for i, r := range rows {
		p.Ids[i], p.SubscriptionIds[i], p.EventSeqs[i] = r.ID, r.SubscriptionID, r.Event.Seq
		p.EventIds[i], p.EventOccurredAts[i] = r.EventID, r.Event.OccurredAt
	}
	created, err := s.q(ctx).WebhookDeliveryInsertForRound(ctx, p)
	if err != nil {
		return nil, errs.Wrap(err, "apps: inserting webhook deliveries failed")
	}
	out := make(map[ids.ID]bool, len(created))
	for _, id := range created {
		out[id] = true
	}
	return out, nil
}

// CountPending implements app.DeliveryStore.
func (s *DeliveryStore) CountPending(ctx context.Context, subs []ids.ID, limit int) (map[ids.ID]int, error) {
	rows, err := s.q(ctx).WebhookDeliveryCountPending(ctx, db.WebhookDeliveryCountPendingParams{
		MaxCount: int32(min(limit, maxInt32)), SubscriptionIds: subs,
	})
	if err != nil {
		return nil, errs.Wrap(err, "apps: counting pending webhook deliveries failed")
	}
	out := make(map[ids.ID]int, len(rows))
	for _, r := range rows {
		out[r.SubscriptionID] = int(r.Pending)
	}
	return out, nil
}

const maxInt32 = 1<<31 - 1

// LockDeliveryTarget implements app.DeliveryStore.
func (s *DeliveryStore) LockDeliveryTarget(ctx context.Context, id ids.ID) (app.DeliveryTarget, bool, error) {
	r, found, err := s.lockTarget(ctx, db.WebhookSubscriptionLockDeliveryTargetParams{ID: id})
	return r.target(), found, err
}

// lockTarget runs WebhookSubscriptionLockDeliveryTarget with p in the unit
// of work of ctx; false when there is no such subscription.
func (s *DeliveryStore) lockTarget(ctx context.Context, p db.WebhookSubscriptionLockDeliveryTargetParams) (lockedTarget, bool, error) {
	q, err := s.locked(ctx)
	if err != nil {
		return lockedTarget{}, false, err
	}
	r, err := q.WebhookSubscriptionLockDeliveryTarget(ctx, p)
	if errors.Is(err, pgx.ErrNoRows) {
		return lockedTarget{}, false, nil
	}
	if err != nil {
		return lockedTarget{}, false, errs.Wrap(err, "apps: locking the webhook subscription failed")
	}
	return lockedTarget(r), true, nil
}

// lockedTarget is a row of WebhookSubscriptionLockDeliveryTarget.
type lockedTarget db.WebhookSubscriptionLockDeliveryTargetRow

// target maps the row to the delivery target it locked.
func (r lockedTarget) target() app.DeliveryTarget {
	return app.DeliveryTarget{
		SubscriptionID:      r.ID,
		State:               apps.SubscriptionState(r.State),
		URL:                 r.Url,
		EventTypes:          nonNil(r.EventTypes),
		HMACEnabled:         r.HmacEnabled,
		HMACGeneration:      int(r.HmacGeneration),
		HMACRotatedAt:       utc(r.HmacRotatedAt),
		ConsecutiveFailures: int(r.ConsecutiveFailures),
		DisabledAt:          utc(r.DisabledAt),
		Lease:               app.Lease{DeliveryID: r.LeaseDeliveryID, Until: utc(r.LeaseUntil)},
		MaxPerSecond:        intOf(r.MaxPerSecond),
		RateWindow:          rateWindowOf(r.RateWindow),
		WakeUpAt:            utc(r.WakeUpAt),
		Installation: apps.Installation{
			ID:                 r.InstallationID,
			AppID:              r.AppID,
			PrincipalID:        r.PrincipalID,
			State:              apps.InstallationState(r.InstallationState),
			GrantedScopes:      nonNil(r.GrantedScopes),
			EventSubscriptions: nonNil(r.EventSubscriptions),
		},
	}
}

// LockLiveSubscriptions implements app.DeliveryStore.
func (s *DeliveryStore) LockLiveSubscriptions(ctx context.Context) ([]app.SubscriptionRef, error) {
	q, err := s.locked(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := q.WebhookSubscriptionLockLive(ctx)
	if err != nil {
		return nil, errs.Wrap(err, "apps: locking the live webhook subscriptions failed")
	}
	out := make([]app.SubscriptionRef, 0, len(rows))
	for _, r := range rows {
		out = append(out, app.SubscriptionRef{ID: r.ID, State: apps.SubscriptionState(r.State), AppID: r.AppID})
	}
	return out, nil
}

// SetSubscriptionState implements app.DeliveryStore.
func (s *DeliveryStore) SetSubscriptionState(ctx context.Context, id ids.ID, state apps.SubscriptionState, disabledAt, now time.Time) error {
	n, err := s.q(ctx).WebhookSubscriptionSetSystemState(ctx, db.WebhookSubscriptionSetSystemStateParams{
		State: string(state), DisabledAt: pg.NullTime(disabledAt), Now: now, ID: id,
	})
	if err != nil {
		return errs.Wrap(err, "apps: changing the webhook subscription state failed")
	}
	if n != 1 {
		return errs.Internalf("apps: the webhook subscription to change does not exist")
	}
	return nil
}

// ClaimHead implements app.DeliveryStore.
func (s *DeliveryStore) ClaimHead(ctx context.Context, c app.HeadClaimRequest) (app.HeadClaim, error) {
	r, err := s.q(ctx).WebhookDeliveryClaimHead(ctx, db.WebhookDeliveryClaimHeadParams{
		LeaseUntil: c.LeaseUntil, Now: c.Now, SubscriptionID: c.SubscriptionID,
		RateOpensAt: c.RateOpensAt, RateWindow: rateWindowColumn(c.RateWindow), WakeUpAt: pg.NullTime(c.WakeUpAt),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return app.HeadClaim{}, nil
	}
	if err != nil {
		return app.HeadClaim{}, errs.Wrap(err, "apps: claiming the webhook head failed")
	}
	if !r.Claimed {
		return app.HeadClaim{DueAt: r.DueAt.UTC()}, nil
	}
	if r.Leased != 1 {
		return app.HeadClaim{}, errs.Internalf("apps: the claimed head's subscription took no lease")
	}
	return app.HeadClaim{Claimed: true, Head: app.ClaimedHead{ID: r.HeadID, EventSeq: r.EventSeq, EventID: r.EventID,
		EventOccurredAt: r.EventOccurredAt.UTC(), Attempt: int(r.Attempt), CreatedAt: r.CreatedAt.UTC(),
		LeaseUntil: c.LeaseUntil}}, nil
}

// MarkHeadStalled implements app.DeliveryStore.
func (s *DeliveryStore) MarkHeadStalled(ctx context.Context, subscriptionID ids.ID, nextAttemptAt, now time.Time) (int64, bool, error) {
	seq, err := s.q(ctx).WebhookDeliveryMarkHeadStalled(ctx, db.WebhookDeliveryMarkHeadStalledParams{
		NextAttemptAt: nextAttemptAt, Now: now, SubscriptionID: subscriptionID,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, errs.Wrap(err, "apps: marking the stalled webhook head failed")
	}
	return seq, true, nil
}

// FinishUnsent implements app.DeliveryStore.
func (s *DeliveryStore) FinishUnsent(ctx context.Context, deliveryID ids.ID, attempt int, code apps.LastError, now time.Time) error {
	n, err := s.q(ctx).WebhookDeliveryFinishUnsent(ctx, db.WebhookDeliveryFinishUnsentParams{
		Attempt: int32(attempt), LastError: nullString(string(code)), Now: now, ID: deliveryID,
	})
	if err != nil {
		return errs.Wrap(err, "apps: ending the webhook delivery failed")
	}
	if n != 1 {
		return errs.Internalf("apps: the webhook delivery to end is not pending")
	}
	return nil
}

// ExpirePending implements app.DeliveryStore.
func (s *DeliveryStore) ExpirePending(ctx context.Context, subscriptionID ids.ID, belowSeq int64, now time.Time) (app.Expired, error) {
	r, err := s.q(ctx).WebhookDeliveryExpirePending(ctx, db.WebhookDeliveryExpirePendingParams{
		Now: now, SubscriptionID: subscriptionID, BelowSeq: belowSeq,
	})
	if err != nil {
		return app.Expired{}, errs.Wrap(err, "apps: expiring webhook deliveries failed")
	}
	return app.Expired{Count: int(r.Expired), FirstSeq: r.FirstSeq, LastSeq: r.LastSeq}, nil
}

// RecordAttempt implements app.DeliveryStore: the lock and the record are
// one statement (D-M2-26-68).
func (s *DeliveryStore) RecordAttempt(ctx context.Context, r app.AttemptRecord) (app.Recorded, error) {
	e := r.Expected
	p := db.WebhookSubscriptionLockDeliveryTargetParams{
		ID:                        r.SubscriptionID,
		Record:                    true,
		ExpectState:               string(e.Standing.State),
		ExpectConsecutiveFailures: int32(e.Standing.ConsecutiveFailures),
		ExpectDisabledAt:          pg.NullTime(e.Standing.DisabledAt),
		ExpectMaxPerSecond:        int32(e.MaxPerSecond),
		ExpectRateWindow:          rateWindowColumn(e.RateWindow),
		Status:                    string(r.Status),
		NextAttemptAt:             pg.NullTime(r.NextAttemptAt),
		LastError:                 nullString(string(r.LastError)),
		ResponseCode:              nullInt32(r.ResponseCode),
		DeliveredAt:               pg.NullTime(r.DeliveredAt),
		Now:                       r.Now,
		DeliveryID:                r.DeliveryID,
		Attempt:                   int32(r.Attempt),
		StoredAttempt:             int32(r.StoredAttempt),
		RateWindow:                rateWindowColumn(r.RateWindow),
	}
	if c := r.Subscription; c != nil {
		p.ChangeSubscription = true
		p.State, p.DisabledAt = string(c.State), pg.NullTime(c.DisabledAt)
		p.ConsecutiveFailures, p.Delivered = int32(c.ConsecutiveFailures), c.Delivered
		p.SigningKeyKid = nullString(c.SigningKeyKID)
	}
	row, found, err := s.lockTarget(ctx, p)
	if err != nil || !found {
		return app.Recorded{}, err
	}
	out := app.Recorded{Found: true, Target: row.target(), AsExpected: row.AsExpected, Written: row.Recorded == 1}
	if row.OthersPending {
		out.Next = eventsync.EventKey{Seq: row.NextEventSeq, OccurredAt: row.NextEventOccurredAt.UTC()}
	}
	return out, nil
}

// rateWindowOf maps the column rate_window to the domain's window, in UTC;
// nil when it is empty.
func rateWindowOf(ends []time.Time) webhook.RateWindow {
	if len(ends) == 0 {
		return nil
	}
	w := make(webhook.RateWindow, len(ends))
	for i, t := range ends {
		w[i] = t.UTC()
	}
	return w
}

// rateWindowColumn is the value of the column rate_window for w: never
// NULL (the column is NOT NULL), empty for a subscription without a limit.
func rateWindowColumn(w webhook.RateWindow) []time.Time {
	if w == nil {
		return []time.Time{}
	}
	return w
}
