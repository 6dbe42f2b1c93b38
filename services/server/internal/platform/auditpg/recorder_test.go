package auditpg_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/correlation"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/auditpg"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var (
	robin = actor.Principal{ID: ids.MustParse("0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a01"), Kind: actor.KindPerson, Role: actor.RoleOwner}
	appID = ids.MustParse("0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a02")
	subID = ids.MustParse("0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a03")
	start = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
)

type bundle struct {
	db  *pgtest.DB
	rec *auditpg.Recorder
	uow *pg.UnitOfWork
	clk *clock.Fake
}

func setup(t *testing.T) bundle {
	t.Helper()
	db := pgtest.New(t)
	clk := clock.NewFake(start)
	return bundle{db: db, rec: auditpg.New(db.App, clk), uow: pg.NewUnitOfWork(db.App, 3, time.Second), clk: clk}
}

func manage() auditing.Entry {
	return auditing.Entry{
		Action:       "webhook_out.manage",
		Actor:        robin,
		ResourceKind: "app",
		ResourceID:   appID,
		Outcome:      auditing.Allow,
		Details: []auditing.Detail{
			auditing.ID("subscription_id", subID),
			auditing.Code("change", "created"),
			auditing.Code("host", "hooks.example.com:8443"),
			auditing.List("event_types", "message.created"),
			auditing.Bool("hmac_enabled", true),
			auditing.Int("hmac_generation", 2),
		},
	}
}

func TestRecordWritesTypedDetailsAndTheCorrelationID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := correlation.With(context.Background(), "0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8aff")
	require.NoError(t, b.uow.Do(ctx, func(ctx context.Context) error { return b.rec.Record(ctx, manage()) }))

	rows := audittest.List(t, b.db.App, audittest.Filter{Action: "webhook_out.manage"})
	require.Len(t, rows, 1)
	r := rows[0]
	require.Equal(t, start, r.CreatedAt.UTC())
	require.Equal(t, start.Truncate(time.Millisecond), r.ID.Time(), "the entry ID carries the clock's time")
	require.Equal(t, robin.ID, r.ActorID)
	require.Equal(t, "person", r.ActorKind)
	require.Equal(t, "app", r.ResourceKind)
	require.Equal(t, appID, r.ResourceID)
	require.Equal(t, "allow", r.Outcome)
	require.Empty(t, r.Reason)
	require.Equal(t, "0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8aff", r.CorrelationID)
	require.Equal(t, map[string]any{
		"subscription_id": subID.String(),
		"change":          "created",
		"host":            "hooks.example.com:8443",
		"event_types":     []any{"message.created"},
		"hmac_enabled":    true,
		"hmac_generation": int64(2),
	}, r.Details)

	var types map[string]string
	require.NoError(t, b.db.App.QueryRow(context.Background(), `
		SELECT jsonb_build_object(
			'subscription_id', jsonb_typeof(details->'subscription_id'),
			'event_types', jsonb_typeof(details->'event_types'),
			'hmac_enabled', jsonb_typeof(details->'hmac_enabled'),
			'hmac_generation', jsonb_typeof(details->'hmac_generation'))
		FROM audit_events`).Scan(&types))
	require.Equal(t, map[string]string{
		"subscription_id": "string", "event_types": "array", "hmac_enabled": "boolean", "hmac_generation": "number",
	}, types)
}

func TestRecordInsideARolledBackUnitOfWorkLeavesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	boom := errors.New("boom")
	err := b.uow.Do(context.Background(), func(ctx context.Context) error {
		require.NoError(t, b.rec.Record(ctx, manage()))
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.Empty(t, audittest.List(t, b.db.App, audittest.Filter{}))
}

func TestRecordDetachedSurvivesTheRollback(t *testing.T) {
	t.Parallel()
	b := setup(t)
	deny := auditing.Entry{
		Action: "webhook_out.manage", Actor: actor.Principal{ID: ids.New(), Kind: actor.KindPerson, Role: actor.RoleMember},
		ResourceKind: "app", ResourceID: appID, Outcome: auditing.Deny, Reason: "owner_only",
	}
	boom := errors.New("boom")
	err := b.uow.Do(context.Background(), func(ctx context.Context) error {
		require.NoError(t, b.rec.Record(ctx, manage()))
		require.NoError(t, b.rec.RecordDetached(ctx, deny))
		return boom
	})
	require.ErrorIs(t, err, boom)
	rows := audittest.List(t, b.db.App, audittest.Filter{})
	require.Len(t, rows, 1, "only the detached denial stays")
	require.Equal(t, "deny", rows[0].Outcome)
	require.Equal(t, "owner_only", rows[0].Reason)
	require.Equal(t, map[string]any{}, rows[0].Details)
}

func TestRecordRejectsMalformedEntriesAndWritesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tc := range []struct {
		name   string
		detail auditing.Detail
	}{
		{"a code with spaces", auditing.Code("note", "Alex wrote this")},
		{"a code with slashes", auditing.Code("host", "hooks.example.com/secret/path")},
		{"a list with a URL", auditing.List("event_types", "message.created", "https://hooks.example.com/x")},
	} {
		e := manage()
		e.Details = append(e.Details, tc.detail)
		err := b.uow.Do(context.Background(), func(ctx context.Context) error { return b.rec.Record(ctx, e) })
		require.ErrorIs(t, err, auditing.ErrInvalid, tc.name)
		require.ErrorIs(t, b.rec.RecordDetached(context.Background(), e), auditing.ErrInvalid, tc.name)
	}
	var n int
	require.NoError(t, b.db.App.QueryRow(context.Background(), `SELECT count(*) FROM audit_events`).Scan(&n))
	require.Zero(t, n)
}

func TestRecordStoresSystemAndAnonymousActorsWithoutID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	transition := auditing.Entry{
		Action: "webhook_out.transition", Actor: actor.System, ResourceKind: "app", ResourceID: appID,
		Outcome: auditing.Allow,
		Details: []auditing.Detail{
			auditing.ID("subscription_id", subID), auditing.Code("from_state", "active"), auditing.Code("to_state", "disabled"),
			auditing.Code("cause", "gap"), auditing.Int("from_seq", 17), auditing.Int("to_seq", 42),
		},
	}
	require.NoError(t, b.rec.Record(ctx, transition), "without a unit of work the entry commits on its own")
	b.clk.Advance(time.Second)
	require.NoError(t, b.rec.Record(ctx, auditing.Entry{
		Action: "identity.person.manage", ResourceKind: "person", Outcome: auditing.Deny, Reason: "unauthorized",
	}))

	rows := audittest.List(t, b.db.App, audittest.Filter{})
	require.Len(t, rows, 2)
	require.Equal(t, "system", rows[0].ActorKind)
	require.True(t, rows[0].ActorID.IsZero())
	require.Equal(t, int64(42), rows[0].Details["to_seq"])
	require.Empty(t, rows[0].CorrelationID)
	require.Equal(t, "anonymous", rows[1].ActorKind)
	require.True(t, rows[1].ResourceID.IsZero())
	require.Len(t, audittest.List(t, b.db.App, audittest.Filter{Outcome: "deny"}), 1)
	require.Len(t, audittest.List(t, b.db.App, audittest.Filter{ResourceKind: "app", ResourceID: appID}), 1)
}

func TestRecordFailsOnADatabaseError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.db.App.Close()
	err := b.rec.Record(context.Background(), manage())
	require.Error(t, err)
	require.NotErrorIs(t, err, auditing.ErrInvalid)
}
