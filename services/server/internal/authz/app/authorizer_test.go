package app_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	azpg "bothy/server/internal/authz/adapters/postgres"
	azapp "bothy/server/internal/authz/app"
	"bothy/server/internal/authz/authztest"
	"bothy/server/internal/authz/domain"
	chatpg "bothy/server/internal/chat/adapters/postgres"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/auditpg"
)

func channel(space, id ids.ID) authorize.Resource {
	return authorize.Resource{Kind: authorize.KindChannel, ID: id, SpaceID: space}
}

// TestAuthorizerMatrix runs the rows of docs/spec/07-permissions.md 11.1
// that concern persons and apps against the real authorizer and database.
func TestAuthorizerMatrix(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	inactive := w.Tracker
	inactive.InstallationActive = false
	readOnly := w.Tracker
	readOnly.GrantedScopes = []string{"events:subscribe", "messages:read"}
	for _, tc := range []struct {
		name    string
		p       actor.Principal
		action  authorize.Action
		r       authorize.Resource
		outcome authorize.Outcome
		reason  string
	}{
		{"AZ-M1 Tracker posts in Eskalation (G-6)", w.Tracker, authorize.MessagePost, channel(w.Support, w.Eskalation), authorize.Allow, ""},
		{"AZ-M2 Tracker cannot post in Allgemein", w.Tracker, authorize.MessagePost, channel(w.Support, w.Allgemein), authorize.NotFound, domain.ReasonNoGrant},
		{"AZ-M3 Alex cannot see Marketing", w.Alex, authorize.SpaceRead, authorize.Resource{Kind: authorize.KindSpace, ID: w.Marketing}, authorize.NotFound, domain.ReasonNoGrant},
		{"AZ-M4 Tracker without messages:write", readOnly, authorize.MessagePost, channel(w.Support, w.Eskalation), authorize.Forbidden, domain.ReasonScopeMissing},
		{"AZ-M5 Tracker with an inactive installation", inactive, authorize.MessagePost, channel(w.Support, w.Eskalation), authorize.Forbidden, domain.ReasonAppNotInstalled},
		{"AZ-M6 Alex posts in Allgemein", w.Alex, authorize.MessagePost, channel(w.Support, w.Allgemein), authorize.Allow, ""},
		{"AZ-M7 Sam reads Eskalation", w.Sam, authorize.MessageRead, channel(w.Support, w.Eskalation), authorize.Allow, ""},
		{"AZ-M8 Robin reads Marketing", w.Robin, authorize.SpaceRead, authorize.Resource{Kind: authorize.KindSpace, ID: w.Marketing}, authorize.Allow, ""},
		{"AZ-M9 Alex may not create a space", w.Alex, authorize.SpaceManage, authorize.Resource{Kind: authorize.KindSpace}, authorize.NotFound, domain.ReasonOwnerOnly},
		{"AZ-M10 Alex cannot see an app (AZ-P4)", w.Alex, authorize.AppRead, authorize.Resource{Kind: authorize.KindApp, ID: ids.New()}, authorize.NotFound, domain.ReasonOwnerOnly},
		{"AZ-M11 Tracker reads the instance without a scope for it", w.Tracker, authorize.InstanceRead, authorize.Resource{}, authorize.Allow, ""},
	} {
		// The rows run one after the other: each finds its audit entry as
		// the one row the decision added to the shared database.
		t.Run(tc.name, func(t *testing.T) {
			before := denials(t, b)
			d, err := b.az.Authorize(background, tc.p, tc.action, tc.r)
			require.NoError(t, err)
			require.Equal(t, authorize.Decision{Outcome: tc.outcome, Reason: tc.reason}, d)
			added := newRows(before, denials(t, b))
			if tc.outcome == authorize.Allow {
				require.Empty(t, added, "allows are audited by the use case, not the authorizer")
				return
			}
			require.Len(t, added, 1)
			row := added[0]
			require.Equal(t, string(tc.action), row.Action)
			require.Equal(t, tc.reason, row.Reason)
			require.Equal(t, tc.p.ID, row.ActorID)
			require.Equal(t, string(tc.p.Kind), row.ActorKind)
			kind := tc.r.Kind
			if kind == "" {
				e, _ := domain.Lookup(tc.action)
				kind = e.ResourceKind
			}
			require.Equal(t, string(kind), row.ResourceKind)
			require.Equal(t, tc.r.ID, row.ResourceID)
		})
	}
}

func denials(t *testing.T, b *testBundle) []audittest.Row {
	t.Helper()
	return audittest.List(t, b.db.App, audittest.Filter{Outcome: "deny"})
}

// newRows returns the rows of after that are not in before.
func newRows(before, after []audittest.Row) []audittest.Row {
	seen := map[ids.ID]bool{}
	for _, r := range before {
		seen[r.ID] = true
	}
	var out []audittest.Row
	for _, r := range after {
		if !seen[r.ID] {
			out = append(out, r)
		}
	}
	return out
}

// TestInvisibleAnswersLikeUnknown (AZ-P2): the error of a denial for an
// invisible resource equals the error for an unknown ID.
func TestInvisibleAnswersLikeUnknown(t *testing.T) {
	t.Parallel()
	b := setup(t)
	err := authorize.Check(background, b.az, b.world.Tracker, authorize.MessagePost, channel(b.world.Support, b.world.Allgemein))
	require.Equal(t, errs.NotFound(), err)
	require.Empty(t, errs.ReasonOf(err))
}

// TestDenialSurvivesTheRollback (R-AZ-04): the use case returns the denial
// and its unit of work rolls back; the audit entry stays.
func TestDenialSurvivesTheRollback(t *testing.T) {
	t.Parallel()
	b := setup(t)
	err := b.uow.Do(background, func(ctx context.Context) error {
		return authorize.Check(ctx, b.az, b.world.Alex, authorize.SpaceManage, authorize.Resource{Kind: authorize.KindSpace})
	})
	require.Equal(t, errs.CodeNotFound, errs.CodeOf(err))
	rows := audittest.List(t, b.db.App, audittest.Filter{Action: "space.manage", Outcome: "deny"})
	require.Len(t, rows, 1)
	require.Equal(t, domain.ReasonOwnerOnly, rows[0].Reason)
}

// TestWebhookDeliverFilterWritesNoDenial (AZ-P13): the delivery check runs
// in filter mode from the delivery job, so a denial (Tracker has no grant
// on Allgemein) writes no audit entry and counts no decision, while the
// same denial in normal mode does both; an allow in filter mode is not
// counted either. The app's grants are loaded for the receive action.
func TestWebhookDeliverFilterWritesNoDenial(t *testing.T) {
	t.Parallel()
	b := setup(t)
	delivery := func(channelID ids.ID) authorize.Resource {
		return authorize.Resource{Kind: authorize.KindMessage, ID: ids.New(), SpaceID: b.world.Support, ChannelID: channelID,
			DeliveryOf: authorize.MessageRead}
	}
	filter := authorize.Filter(background)

	d, err := b.az.Authorize(filter, b.world.Tracker, authorize.WebhookOutDeliver, delivery(b.world.Allgemein))
	require.NoError(t, err)
	require.Equal(t, authorize.Decision{Outcome: authorize.NotFound, Reason: domain.ReasonNoGrant}, d)
	d, err = b.az.Authorize(filter, b.world.Tracker, authorize.WebhookOutDeliver, delivery(b.world.Eskalation))
	require.NoError(t, err)
	require.True(t, d.Allowed(), "G-6 lets Tracker receive Eskalation")
	require.Empty(t, audittest.List(t, b.db.App, audittest.Filter{Action: "webhook_out.deliver"}))
	require.Zero(t, b.decisions(t, "not_found", domain.ReasonNoGrant))
	require.Zero(t, b.decisions(t, "allow", ""))

	d, err = b.az.Authorize(background, b.world.Tracker, authorize.WebhookOutDeliver, delivery(b.world.Allgemein))
	require.NoError(t, err)
	require.Equal(t, authorize.NotFound, d.Outcome)
	require.Len(t, audittest.List(t, b.db.App, audittest.Filter{Action: "webhook_out.deliver"}), 1,
		"outside filter mode the same denial is audited")
	require.Equal(t, int64(1), b.decisions(t, "not_found", domain.ReasonNoGrant))
}

// TestStandingIsMemoisedPerUnitOfWork: a grant revoked by another
// transaction is still seen by later decisions of the same unit of work
// (one load per unit of work and principal) and no longer by the next one.
func TestStandingIsMemoisedPerUnitOfWork(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := channel(b.world.Support, b.world.Eskalation)
	require.NoError(t, b.uow.Do(background, func(ctx context.Context) error {
		require.NoError(t, authorize.Check(ctx, b.az, b.world.Tracker, authorize.MessagePost, r))
		_, err := b.db.Owner.Exec(background, `DELETE FROM grants WHERE id = $1`, b.world.G6.ID)
		require.NoError(t, err)
		require.NoError(t, authorize.Check(ctx, b.az, b.world.Tracker, authorize.MessagePost, r), "memoised for the unit of work")
		return nil
	}))
	err := b.uow.Do(background, func(ctx context.Context) error {
		return authorize.Check(ctx, b.az, b.world.Tracker, authorize.MessagePost, r)
	})
	require.Equal(t, errs.CodeNotFound, errs.CodeOf(err), "a new unit of work loads the grants again")
}

// TestPreloadOfSeveralPrincipalsKeepsEachOnesFacts (D-M2-26-76): one
// Preload of two apps and a person loads the facts of each into the unit
// of work (the apps' grants with one statement), so decisions later in it
// use them, even after another transaction revoked Tracker's grant, and an
// app without grants stays without.
func TestPreloadOfSeveralPrincipalsKeepsEachOnesFacts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	pager := authztest.InsertApp(t, b.db, "Pager", authztest.TrackerScopes...)
	r := channel(w.Support, w.Eskalation)
	require.NoError(t, b.uow.Do(background, func(ctx context.Context) error {
		require.NoError(t, b.az.Preload(ctx, authorize.MessagePost, w.Tracker, pager, w.Alex, w.Tracker))
		_, err := b.db.Owner.Exec(background, `DELETE FROM grants WHERE id = $1`, w.G6.ID)
		require.NoError(t, err)
		require.NoError(t, authorize.Check(ctx, b.az, w.Tracker, authorize.MessagePost, r), "Tracker's grants were loaded ahead")
		require.NoError(t, authorize.Check(ctx, b.az, w.Alex, authorize.MessagePost, r), "so were Alex's memberships")
		d, err := b.az.Authorize(authorize.Filter(ctx), pager, authorize.MessagePost, r)
		require.NoError(t, err)
		require.False(t, d.Allowed(), "Pager holds no grant")
		return nil
	}))
	err := b.uow.Do(background, func(ctx context.Context) error {
		return authorize.Check(ctx, b.az, w.Tracker, authorize.MessagePost, r)
	})
	require.Equal(t, errs.CodeNotFound, errs.CodeOf(err), "a new unit of work loads the grants again")
}

func TestStepUpAgesWithTheClock(t *testing.T) {
	t.Parallel()
	b := setup(t)
	robin := b.world.Robin
	robin.SteppedUpAt = b.clock.Now()
	app := authorize.Resource{Kind: authorize.KindApp, ID: ids.New()}
	d, err := b.az.Authorize(background, robin, authorize.AppInstall, app)
	require.NoError(t, err)
	require.True(t, d.Allowed())

	b.clock.Advance(10*time.Minute + time.Second)
	d, err = b.az.Authorize(background, robin, authorize.AppInstall, app)
	require.NoError(t, err)
	require.Equal(t, authorize.StepUpRequired, d.Outcome)
	require.Equal(t, errs.CodeStepUpRequired, errs.CodeOf(d.Err()))
}

func TestWiringBugsAreErrorsWithoutAudit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.az.Authorize(authorize.Filter(background), b.world.Tracker, authorize.WebhookOutDeliver,
		authorize.Resource{Kind: authorize.KindMessage, ID: ids.New(), SpaceID: b.world.Support, ChannelID: b.world.Eskalation})
	require.True(t, errors.Is(err, domain.ErrDeliveryOf))
	_, err = b.az.Authorize(background, b.world.Alex, "message.explode", channel(b.world.Support, b.world.Allgemein))
	require.True(t, errors.Is(err, domain.ErrUnknownAction))
	require.Empty(t, audittest.List(t, b.db.App, audittest.Filter{}))
}

func TestAnonymousDenialIsAudited(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d, err := b.az.Authorize(background, actor.Principal{}, authorize.MessageRead, channel(b.world.Support, b.world.Allgemein))
	require.NoError(t, err)
	require.Equal(t, authorize.Unauthorized, d.Outcome)
	rows := audittest.List(t, b.db.App, audittest.Filter{Action: "message.read"})
	require.Len(t, rows, 1)
	require.Equal(t, "anonymous", rows[0].ActorKind)
	require.Equal(t, domain.ReasonUnauthenticated, rows[0].Reason)
}

func TestNewAuthorizerRefusesBadWiring(t *testing.T) {
	t.Parallel()
	_, err := azapp.NewAuthorizer(azapp.Deps{}, azapp.Options{StepUpMaxAge: time.Minute})
	require.Error(t, err)
	b := setup(t)
	_, err = azapp.NewAuthorizer(azapp.Deps{Grants: azpg.NewGrants(b.db.App), Memberships: chatpg.NewStore(b.db.App),
		Recorder: auditpg.New(b.db.App, b.clock), Clock: b.clock}, azapp.Options{})
	require.Error(t, err, "identity.step_up_max_age must be positive")
}
