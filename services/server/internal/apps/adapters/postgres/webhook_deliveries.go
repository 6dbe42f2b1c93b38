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
	"bothy/server/internal/kernel/txn"
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
func (s *DeliveryStore) DeliveryCandidates(ctx context.Context, t eventlog.Type, countLimit int) ([]app.Candidate, error) {
	rows, err := s.q(ctx).WebhookSubscriptionDeliveryCandidates(ctx, db.WebhookSubscriptionDeliveryCandidatesParams{
		EventType: string(t), CountLimit: int32(min(countLimit, maxInt32)),
	})
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
func (s *DeliveryStore) DeliveryCandidatesOf(ctx context.Context, t eventlog.Type, principals []ids.ID, countLimit int) ([]app.Candidate, error) {
	out := []app.Candidate{}
	if len(principals) == 0 {
		return out, nil
	}
	rows, err := s.q(ctx).WebhookSubscriptionDeliveryCandidatesOf(ctx, db.WebhookSubscriptionDeliveryCandidatesOfParams{
		PrincipalIds: principals, EventType: string(t), CountLimit: int32(min(countLimit, maxInt32)),
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
		Pending:           int(r.Pending),
		LastEventSeq:      r.LastEventSeq,
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

// LockLeased implements app.DeliveryStore with one statement (ADR 0106).
func (s *DeliveryStore) LockLeased(ctx context.Context, subs []ids.ID, now time.Time) ([]ids.ID, error) {
	q, err := s.locked(ctx)
	if err != nil {
		return nil, err
	}
	leased, err := q.WebhookSubscriptionLockLeased(ctx, db.WebhookSubscriptionLockLeasedParams{Ids: subs, Now: now})
	if err != nil {
		return nil, errs.Wrap(err, "apps: locking the leased webhook subscriptions failed")
	}
	if leased == nil {
		leased = []ids.ID{}
	}
	return leased, nil
}

const maxInt32 = 1<<31 - 1

// LockDeliveryTargets implements app.DeliveryStore with one statement for
// any number of subscriptions.
func (s *DeliveryStore) LockDeliveryTargets(ctx context.Context, subs []ids.ID, heads int) ([]app.LockedTarget, error) {
	q, err := s.locked(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := q.WebhookSubscriptionLockDeliveryTargets(ctx, db.WebhookSubscriptionLockDeliveryTargetsParams{
		Ids: subs, NextHeads: int32(min(heads, maxInt32)),
	})
	if err != nil {
		return nil, errs.Wrap(err, "apps: locking the webhook subscriptions failed")
	}
	out := make([]app.LockedTarget, len(rows))
	for i, r := range rows {
		out[i] = app.LockedTarget{Target: lockedTarget(r).target(), Heads: lockedTarget(r).nextHeads()}
	}
	return out, nil
}

// PendingHeads implements app.DeliveryStore.
func (s *DeliveryStore) PendingHeads(ctx context.Context, subscriptionID ids.ID, max int) ([]app.PendingHead, error) {
	rows, err := s.q(ctx).WebhookDeliveryPendingHeads(ctx, db.WebhookDeliveryPendingHeadsParams{
		SubscriptionID: subscriptionID, MaxHeads: int32(min(max, maxInt32)),
	})
	if err != nil {
		return nil, errs.Wrap(err, "apps: reading the webhook heads failed")
	}
	out := make([]app.PendingHead, 0, len(rows))
	for _, r := range rows {
		out = append(out, app.PendingHead{ID: r.ID, NextAttemptAt: r.NextAttemptAt.UTC(),
			Event: eventsync.EventKey{Seq: r.EventSeq, OccurredAt: r.EventOccurredAt.UTC()}})
	}
	return out, nil
}

// lockedTarget is a row of WebhookSubscriptionLockDeliveryTargets, or the
// part of a row of WebhookSubscriptionRecordAttemptsMany (or of
// WebhookSubscriptionRecordAttempt, whose columns are the same) that
// names the locked subscription and its next heads (recordedTarget).
type lockedTarget db.WebhookSubscriptionLockDeliveryTargetsRow

// recordedTarget is the locked subscription and the next heads of r.
func recordedTarget(r db.WebhookSubscriptionRecordAttemptsManyRow) lockedTarget {
	return lockedTarget{
		ID: r.ID, State: r.State, Url: r.Url, EventTypes: r.EventTypes,
		HmacEnabled: r.HmacEnabled, HmacGeneration: r.HmacGeneration, HmacRotatedAt: r.HmacRotatedAt,
		ConsecutiveFailures: r.ConsecutiveFailures, DisabledAt: r.DisabledAt,
		LeaseDeliveryID: r.LeaseDeliveryID, LeaseUntil: r.LeaseUntil,
		MaxPerSecond: r.MaxPerSecond, RateWindow: r.RateWindow, WakeUpAt: r.WakeUpAt,
		InstallationID: r.InstallationID, AppID: r.AppID, InstallationState: r.InstallationState,
		GrantedScopes: r.GrantedScopes, EventSubscriptions: r.EventSubscriptions, PrincipalID: r.PrincipalID,
		NextIds: r.NextIds, NextEventSeqs: r.NextEventSeqs, NextEventOccurredAts: r.NextEventOccurredAts,
		NextAttemptAts: r.NextAttemptAts,
	}
}

// nextHeads maps the row's next_* columns to the pending heads they name,
// never nil.
func (r lockedTarget) nextHeads() []app.PendingHead {
	out := make([]app.PendingHead, 0, len(r.NextIds))
	for i, id := range r.NextIds {
		out = append(out, app.PendingHead{ID: id, NextAttemptAt: r.NextAttemptAts[i].UTC(),
			Event: eventsync.EventKey{Seq: r.NextEventSeqs[i], OccurredAt: r.NextEventOccurredAts[i].UTC()}})
	}
	return out
}

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

// ClaimHeads implements app.DeliveryStore with one statement for any
// number of claims (D-M2-26-77): the claim of one subscription, a run of
// its own job, with the statement of one, whose plan is lighter.
func (s *DeliveryStore) ClaimHeads(ctx context.Context, cs ...app.HeadClaimRequest) ([][]app.ClaimedHead, error) {
	out := make([][]app.ClaimedHead, len(cs))
	for _, c := range cs {
		if len(c.Heads) == 0 {
			return nil, errs.Internalf("apps: a claim of no webhook heads")
		}
	}
	switch len(cs) {
	case 0:
		return out, nil
	case 1:
		claimed, err := s.claimOne(ctx, cs[0])
		return [][]app.ClaimedHead{claimed}, err
	}
	var p db.WebhookDeliveryClaimHeadsManyParams
	for i, c := range cs {
		ord := int32(i + 1) // generate_subscripts counts from 1
		p.SubscriptionIds = append(p.SubscriptionIds, c.SubscriptionID)
		p.Nows = append(p.Nows, c.Now)
		p.LeaseDeliveryIds = append(p.LeaseDeliveryIds, c.Heads[0])
		p.LeaseUntils = append(p.LeaseUntils, c.LeaseUntil)
		p.HasWakeUps = append(p.HasWakeUps, !c.WakeUpAt.IsZero())
		p.WakeUpAts = append(p.WakeUpAts, c.WakeUpAt)
		for _, h := range c.Heads {
			p.HeadIds, p.HeadOrds = append(p.HeadIds, h), append(p.HeadOrds, ord)
		}
		for _, end := range c.RateWindow {
			p.RateWindowEnds, p.RateWindowOrds = append(p.RateWindowEnds, end), append(p.RateWindowOrds, ord)
		}
	}
	p.HeadIds, p.HeadOrds = nonNil(p.HeadIds), nonNil(p.HeadOrds)
	p.RateWindowEnds, p.RateWindowOrds = nonNil(p.RateWindowEnds), nonNil(p.RateWindowOrds)
	rows, err := s.q(ctx).WebhookDeliveryClaimHeadsMany(ctx, p)
	if err != nil {
		return nil, errs.Wrap(err, "apps: claiming the webhook heads failed")
	}
	for _, r := range rows {
		i := int(r.Ord) - 1
		if i < 0 || i >= len(cs) || r.Leased != 1 {
			return nil, errs.Internalf("apps: the webhook heads changed under the subscription's row lock")
		}
		out[i] = append(out[i], app.ClaimedHead{ID: r.ID, EventSeq: r.EventSeq, EventID: r.EventID,
			EventOccurredAt: r.EventOccurredAt.UTC(), Attempt: int(r.Attempt), CreatedAt: r.CreatedAt.UTC(),
			LeaseUntil: cs[i].LeaseUntil})
	}
	for i, claimed := range out {
		// No row: the heads were read before the lock waited and are no
		// longer the due ones at the subscription's head.
		if len(claimed) > 0 && (len(claimed) != len(cs[i].Heads) || claimed[0].ID != cs[i].Heads[0]) {
			return nil, errs.Internalf("apps: the webhook heads changed under the subscription's row lock")
		}
	}
	return out, nil
}

// claimOne claims the batch of c alone (WebhookDeliveryClaimHeads).
func (s *DeliveryStore) claimOne(ctx context.Context, c app.HeadClaimRequest) ([]app.ClaimedHead, error) {
	rows, err := s.q(ctx).WebhookDeliveryClaimHeads(ctx, db.WebhookDeliveryClaimHeadsParams{
		Now: c.Now, Ids: c.Heads, SubscriptionID: c.SubscriptionID, LeaseDeliveryID: c.Heads[0],
		LeaseUntil: c.LeaseUntil, RateWindow: nonNil(c.RateWindow), WakeUpAt: pg.NullTime(c.WakeUpAt),
	})
	if err != nil {
		return nil, errs.Wrap(err, "apps: claiming the webhook heads failed")
	}
	if len(rows) == 0 {
		// The heads were read before the lock waited and are no longer
		// the due ones at the subscription's head.
		return nil, nil
	}
	if len(rows) != len(c.Heads) || rows[0].ID != c.Heads[0] || rows[0].Leased != 1 {
		return nil, errs.Internalf("apps: the webhook heads changed under the subscription's row lock")
	}
	out := make([]app.ClaimedHead, len(rows))
	for i, r := range rows {
		out[i] = app.ClaimedHead{ID: r.ID, EventSeq: r.EventSeq, EventID: r.EventID,
			EventOccurredAt: r.EventOccurredAt.UTC(), Attempt: int(r.Attempt), CreatedAt: r.CreatedAt.UTC(),
			LeaseUntil: c.LeaseUntil}
	}
	return out, nil
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
func (s *DeliveryStore) FinishUnsent(ctx context.Context, deliveryID ids.ID, code apps.LastError, now time.Time) (bool, error) {
	n, err := s.q(ctx).WebhookDeliveryFinishUnsent(ctx, db.WebhookDeliveryFinishUnsentParams{
		LastError: nullString(string(code)), Now: now, ID: deliveryID,
	})
	if err != nil {
		return false, errs.Wrap(err, "apps: ending the webhook delivery failed")
	}
	return n == 1, nil
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

// RecordAttempts implements app.DeliveryStore: the locks of any number of
// subscriptions are one statement and their records another, sent
// together (D-M2-26-83), whatever the batches' sizes (D-M2-26-68,
// D-M2-26-78, ADR 0088); the record of one subscription, a run of its
// own job, with the statement of one, whose plan is lighter.
func (s *DeliveryStore) RecordAttempts(ctx context.Context, rs ...app.AttemptRecord) ([]app.Recorded, error) {
	out := make([]app.Recorded, len(rs))
	if len(rs) == 0 {
		return out, nil
	}
	if _, err := s.locked(ctx); err != nil {
		return nil, err
	}
	subs := make([]ids.ID, len(rs))
	for i, r := range rs {
		subs[i] = r.SubscriptionID
	}
	var rows []db.WebhookSubscriptionRecordAttemptsManyRow
	// The lock first, then the record, in one round trip (txn.Together
	// sends them in order): the record's snapshot begins once the lock is
	// held (D-M2-26-83).
	err := txn.Together(ctx,
		func(ctx context.Context) error {
			q, err := s.locked(ctx)
			if err != nil {
				return err
			}
			return q.WebhookSubscriptionLockForRecord(ctx, subs)
		},
		func(ctx context.Context) error {
			q, err := s.locked(ctx)
			if err != nil {
				return err
			}
			if len(rs) > 1 {
				rows, err = q.WebhookSubscriptionRecordAttemptsMany(ctx, recordMany(rs))
				return err
			}
			row, err := q.WebhookSubscriptionRecordAttempt(ctx, recordOne(rs[0]))
			if err == nil {
				rows = append(rows, db.WebhookSubscriptionRecordAttemptsManyRow(row))
			}
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			return err
		})
	if err != nil {
		return nil, errs.Wrap(err, "apps: recording the webhook attempts failed")
	}
	for _, row := range rows {
		i := int(row.Ord) - 1
		if i < 0 || i >= len(rs) {
			return nil, errs.Internalf("apps: a webhook record answered for no record")
		}
		locked := recordedTarget(row)
		out[i] = app.Recorded{Found: true, Target: locked.target(), AsExpected: row.AsExpected,
			Written: len(rs[i].Outcomes) > 0 && int(row.Recorded) == len(rs[i].Outcomes), Next: locked.nextHeads()}
	}
	return out, nil
}

// recordOne is the parameters of WebhookSubscriptionRecordAttempt for r.
func recordOne(r app.AttemptRecord) db.WebhookSubscriptionRecordAttemptParams {
	e := r.Expected
	p := db.WebhookSubscriptionRecordAttemptParams{
		ID:                        r.SubscriptionID,
		ExpectState:               string(e.Standing.State),
		ExpectConsecutiveFailures: int32(e.Standing.ConsecutiveFailures),
		ExpectDisabledAt:          pg.NullTime(e.Standing.DisabledAt),
		ExpectMaxPerSecond:        int32(e.MaxPerSecond),
		ExpectRateWindow:          nonNil(e.RateWindow),
		Now:                       r.Now,
		LeaseDeliveryID:           r.LeaseDeliveryID,
		RateWindow:                nonNil(r.RateWindow),
		NextHeads:                 int32(min(r.NextHeads, maxInt32)),
		UnsentIds:                 make([]ids.ID, 0, len(r.Unsent)),
		UnsentAttempts:            make([]int32, 0, len(r.Unsent)),
	}
	var oc outcomeColumns
	oc.add(r.Outcomes)
	oc.nonNil()
	p.DeliveryIds, p.Attempts, p.StoredAttempts, p.Statuses = oc.ids, oc.attempts, oc.storedAttempts, oc.statuses
	p.NextAttemptAts, p.LastErrors, p.ResponseCodes, p.DeliveredAts = oc.nextAttemptAts, oc.lastErrors, oc.responseCodes, oc.deliveredAts
	for _, h := range r.Unsent {
		p.UnsentIds = append(p.UnsentIds, h.ID)
		p.UnsentAttempts = append(p.UnsentAttempts, int32(h.Attempt))
	}
	if c := r.Subscription; c != nil {
		p.ChangeSubscription = true
		p.State, p.DisabledAt = string(c.State), pg.NullTime(c.DisabledAt)
		p.ConsecutiveFailures, p.DeliveredSeq = int32(c.ConsecutiveFailures), c.DeliveredSeq
		p.SigningKeyKid = nullString(c.SigningKeyKID)
	}
	return p
}

// outcomeColumns are the per-delivery parameter arrays of a record's
// outcomes, in the order of the outcomes, which the statements of one
// record and of many take alike (one mapping of app.AttemptOutcome).
type outcomeColumns struct {
	ids                          []ids.ID
	attempts, storedAttempts     []int32
	statuses, lastErrors         []string
	nextAttemptAts, deliveredAts []time.Time
	responseCodes                []int32
}

// add appends the columns of outcomes.
func (c *outcomeColumns) add(outcomes []app.AttemptOutcome) {
	for _, o := range outcomes {
		c.ids = append(c.ids, o.DeliveryID)
		c.attempts = append(c.attempts, int32(o.Attempt))
		c.storedAttempts = append(c.storedAttempts, int32(o.StoredAttempt))
		c.statuses = append(c.statuses, string(o.Status))
		c.nextAttemptAts = append(c.nextAttemptAts, o.NextAttemptAt)
		c.lastErrors = append(c.lastErrors, string(o.LastError))
		c.responseCodes = append(c.responseCodes, int32(o.ResponseCode))
		c.deliveredAts = append(c.deliveredAts, o.DeliveredAt)
	}
}

// nonNil makes every column an empty array rather than NULL when there
// are no outcomes.
func (c *outcomeColumns) nonNil() {
	c.ids, c.attempts, c.storedAttempts = nonNil(c.ids), nonNil(c.attempts), nonNil(c.storedAttempts)
	c.statuses, c.lastErrors, c.responseCodes = nonNil(c.statuses), nonNil(c.lastErrors), nonNil(c.responseCodes)
	c.nextAttemptAts, c.deliveredAts = nonNil(c.nextAttemptAts), nonNil(c.deliveredAts)
}

// recordMany is the parameters of WebhookSubscriptionRecordAttemptsMany
// for rs: record i is element i+1 of the arrays of one element per record
// (generate_subscripts counts from 1).
func recordMany(rs []app.AttemptRecord) db.WebhookSubscriptionRecordAttemptsManyParams {
	var p db.WebhookSubscriptionRecordAttemptsManyParams
	var oc outcomeColumns
	for i, r := range rs {
		ord := int32(i + 1) // generate_subscripts counts from 1
		e := r.Expected
		p.NextHeads = max(p.NextHeads, int32(min(r.NextHeads, maxInt32)))
		p.Ids = append(p.Ids, r.SubscriptionID)
		p.ExpectStates = append(p.ExpectStates, string(e.Standing.State))
		p.ExpectConsecutiveFailures = append(p.ExpectConsecutiveFailures, int32(e.Standing.ConsecutiveFailures))
		p.ExpectHasDisabledAts = append(p.ExpectHasDisabledAts, !e.Standing.DisabledAt.IsZero())
		p.ExpectDisabledAts = append(p.ExpectDisabledAts, e.Standing.DisabledAt)
		p.ExpectMaxPerSeconds = append(p.ExpectMaxPerSeconds, int32(e.MaxPerSecond))
		for _, end := range e.RateWindow {
			p.ExpectRateWindowEnds, p.ExpectRateWindowOrds = append(p.ExpectRateWindowEnds, end), append(p.ExpectRateWindowOrds, ord)
		}
		p.Nows = append(p.Nows, r.Now)
		p.LeaseDeliveryIds = append(p.LeaseDeliveryIds, r.LeaseDeliveryID)
		for _, end := range r.RateWindow {
			p.RateWindowEnds, p.RateWindowOrds = append(p.RateWindowEnds, end), append(p.RateWindowOrds, ord)
		}
		oc.add(r.Outcomes)
		for range r.Outcomes {
			p.DeliveryOrds = append(p.DeliveryOrds, ord)
		}
		for _, h := range r.Unsent {
			p.UnsentIds, p.UnsentOrds = append(p.UnsentIds, h.ID), append(p.UnsentOrds, ord)
			p.UnsentAttempts = append(p.UnsentAttempts, int32(h.Attempt))
		}
		c := r.Subscription
		if c == nil {
			c = &app.SubscriptionChange{}
		}
		p.ChangeSubscriptions = append(p.ChangeSubscriptions, r.Subscription != nil)
		p.States = append(p.States, string(c.State))
		p.HasDisabledAts = append(p.HasDisabledAts, !c.DisabledAt.IsZero())
		p.DisabledAts = append(p.DisabledAts, c.DisabledAt)
		p.ConsecutiveFailures = append(p.ConsecutiveFailures, int32(c.ConsecutiveFailures))
		p.DeliveredSeqs = append(p.DeliveredSeqs, c.DeliveredSeq)
		p.SigningKeyKids = append(p.SigningKeyKids, c.SigningKeyKID)
	}
	p.ExpectRateWindowEnds, p.ExpectRateWindowOrds = nonNil(p.ExpectRateWindowEnds), nonNil(p.ExpectRateWindowOrds)
	p.RateWindowEnds, p.RateWindowOrds = nonNil(p.RateWindowEnds), nonNil(p.RateWindowOrds)
	oc.nonNil()
	p.DeliveryIds, p.Attempts, p.StoredAttempts, p.Statuses = oc.ids, oc.attempts, oc.storedAttempts, oc.statuses
	p.NextAttemptAts, p.LastErrors, p.ResponseCodes, p.DeliveredAts = oc.nextAttemptAts, oc.lastErrors, oc.responseCodes, oc.deliveredAts
	p.DeliveryOrds = nonNil(p.DeliveryOrds)
	p.UnsentIds, p.UnsentOrds, p.UnsentAttempts = nonNil(p.UnsentIds), nonNil(p.UnsentOrds), nonNil(p.UnsentAttempts)
	return p
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
