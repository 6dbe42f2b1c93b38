package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/identity"
	"bothy/server/internal/identity/app"
	"bothy/server/internal/identity/identitytest"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/idempotency"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/httpserver/httpservertest"
)

func TestPersonalTokenLifecycle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	robin := b.env.AddPerson(t, "robin@example.com", "Robin", actor.RoleOwner)
	_, session := b.env.SignIn(t, "robin@example.com")
	ctx := context.Background()

	watched, marked := idempotency.Watch(as(session))
	created, err := b.env.Service.CreatePersonalToken(watched, app.CreatePersonalToken{Name: " deploy script "})
	require.NoError(t, err)
	require.True(t, marked(), "the answer holds a one-time secret")
	require.True(t, strings.HasPrefix(created.Token, "btp_"))
	require.Equal(t, app.PersonalToken{ID: created.PersonalToken.ID, PersonID: robin.ID, Name: "deploy script", CreatedAt: t0}, created.PersonalToken)

	p, err := b.env.Service.Authenticate(ctx, created.Token)
	require.NoError(t, err)
	require.Equal(t, actor.Principal{ID: robin.ID, Kind: actor.KindPerson, Role: actor.RoleOwner,
		SessionID: created.PersonalToken.ID, ViaPersonalToken: true}, p)

	list, err := b.env.Service.ListPersonalTokens(as(p))
	require.NoError(t, err)
	require.Equal(t, []app.PersonalToken{created.PersonalToken}, list)

	b.clock.Advance(time.Second) // audit entries sort by time
	require.NoError(t, b.env.Service.RevokePersonalToken(as(session), created.PersonalToken.ID))
	_, err = b.env.Service.Authenticate(ctx, created.Token)
	requireCode(t, err, errs.CodeUnauthorized)
	list, err = b.env.Service.ListPersonalTokens(as(session))
	require.NoError(t, err)
	require.Empty(t, list)
	requireCode(t, b.env.Service.RevokePersonalToken(as(session), created.PersonalToken.ID), errs.CodeNotFound)

	var changes []string
	for _, e := range audittest.List(t, b.db.App, audittest.Filter{Action: "identity.token.manage", Outcome: "allow"}) {
		require.Equal(t, created.PersonalToken.ID, e.ResourceID)
		require.Equal(t, robin.ID.String(), e.Details["person_id"])
		require.Equal(t, false, e.Details["expires"])
		changes = append(changes, e.Details["change"].(string))
	}
	require.Equal(t, []string{"created", "revoked"}, changes)
}

// TestPersonalTokensNeverStepUp: a personal token carries no step-up, cannot
// step up and never reaches an owner-only action.
func TestPersonalTokensNeverStepUp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env.AddPerson(t, "robin@example.com", "Robin", actor.RoleOwner)
	_, session := b.env.SignIn(t, "robin@example.com")
	created, err := b.env.Service.CreatePersonalToken(as(session), app.CreatePersonalToken{Name: "scripts"})
	require.NoError(t, err)
	p, err := b.env.Service.Authenticate(context.Background(), created.Token)
	require.NoError(t, err)

	require.True(t, p.SteppedUpAt.IsZero())
	require.False(t, identitytest.StepUpFresh(p, b.clock.Now(), stepUpMaxAge))
	_, err = b.env.Service.StepUp(as(p), app.StepUp{Password: "correct horse battery staple"})
	requireCode(t, err, errs.CodeNotFound)
	requireCode(t, b.env.Service.SignOut(as(p)), errs.CodeNotFound)
	_, err = b.env.Service.CreatePerson(as(p), app.CreatePerson{Email: "sam@example.com", DisplayName: "Sam", Password: "correct horse battery staple"})
	requireCode(t, err, errs.CodeNotFound)
	me, err := b.env.Service.Me(as(p))
	require.NoError(t, err)
	require.True(t, me.ViaPersonalToken)
	require.True(t, me.SteppedUpAt.IsZero())
}

func TestPersonalTokensExpireAndStayWithTheirHolder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env.AddPerson(t, "robin@example.com", "Robin", actor.RoleOwner)
	b.env.AddPerson(t, "sam@example.com", "Sam", actor.RoleMember)
	_, robin := b.env.SignIn(t, "robin@example.com")
	_, sam := b.env.SignIn(t, "sam@example.com")
	ctx := context.Background()

	_, err := b.env.Service.CreatePersonalToken(as(robin), app.CreatePersonalToken{Name: "old", ExpiresAt: t0})
	require.Equal(t, []errs.FieldError{{Pointer: "/expires_at", Code: "not_in_future"}}, fieldsOf(err))
	_, err = b.env.Service.CreatePersonalToken(as(robin), app.CreatePersonalToken{Name: ""})
	require.Equal(t, []errs.FieldError{{Pointer: "/name", Code: "required"}}, fieldsOf(err))

	created, err := b.env.Service.CreatePersonalToken(as(robin), app.CreatePersonalToken{Name: "day", ExpiresAt: t0.Add(24 * time.Hour)})
	require.NoError(t, err)
	require.Equal(t, t0.Add(24*time.Hour), created.PersonalToken.ExpiresAt)

	requireCode(t, b.env.Service.RevokePersonalToken(as(sam), created.PersonalToken.ID), errs.CodeNotFound)
	requireCode(t, b.env.Service.RevokePersonalToken(as(sam), ids.New()), errs.CodeNotFound)
	list, err := b.env.Service.ListPersonalTokens(as(sam))
	require.NoError(t, err)
	require.Empty(t, list, "Sam does not see Robin's tokens")

	b.clock.Advance(24*time.Hour - time.Microsecond)
	_, err = b.env.Service.Authenticate(ctx, created.Token)
	require.NoError(t, err)
	b.clock.Advance(time.Microsecond)
	_, err = b.env.Service.Authenticate(ctx, created.Token)
	requireCode(t, err, errs.CodeUnauthorized)
	list, err = b.env.Service.ListPersonalTokens(as(robin))
	require.NoError(t, err)
	require.Empty(t, list)
}

func TestAppTokensCarryTheInstallationFacts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	tracker, err := b.env.Service.CreateAppPrincipal(ctx, "Tracker")
	require.NoError(t, err)
	token, err := b.env.Service.IssueAppToken(ctx, tracker)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(token, "bta_"))

	_, err = b.env.Service.Authenticate(ctx, token)
	requireCode(t, err, errs.CodeUnauthorized) // no installation yet

	installation := ids.New()
	b.facts.set(tracker, identity.AppFacts{InstallationID: installation, Active: true,
		GrantedScopes: []string{"events:subscribe", "messages:read", "messages:write"}})
	p, err := b.env.Service.Authenticate(ctx, token)
	require.NoError(t, err)
	require.Equal(t, tracker, p.ID)
	require.Equal(t, actor.KindApp, p.Kind)
	require.Equal(t, installation, p.InstallationID)
	require.True(t, p.InstallationActive)
	require.True(t, p.HasScope("messages:read"))
	require.Empty(t, p.Role)

	b.facts.set(tracker, identity.AppFacts{InstallationID: installation, Active: false, GrantedScopes: []string{"events:subscribe"}})
	p, err = b.env.Service.Authenticate(ctx, token)
	require.NoError(t, err)
	require.False(t, p.InstallationActive, "facts are read on every request")
	require.False(t, p.HasScope("messages:read"))

	second, err := b.env.Service.IssueAppToken(ctx, tracker)
	require.NoError(t, err)
	require.NoError(t, b.env.Service.RevokeAppTokens(ctx, tracker))
	for _, tok := range []string{token, second} {
		_, err = b.env.Service.Authenticate(ctx, tok)
		requireCode(t, err, errs.CodeUnauthorized)
	}
	require.NoError(t, b.env.Service.RevokeAppTokens(ctx, tracker), "nothing left to revoke is fine")

	robin := b.env.AddPerson(t, "robin@example.com", "Robin", actor.RoleOwner)
	_, err = b.env.Service.IssueAppToken(ctx, robin.ID)
	requireCode(t, err, errs.CodeNotFound)
	_, err = b.env.Service.IssueAppToken(ctx, ids.New())
	requireCode(t, err, errs.CodeNotFound)
	_, err = b.env.Service.CreateAppPrincipal(ctx, "")
	requireCode(t, err, errs.CodeValidationFailed)
}

func TestCreateAgentPrincipal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id, err := b.env.Service.CreateAgentPrincipal(context.Background(), "Helper")
	require.NoError(t, err)
	var kind string
	var agents int
	require.NoError(t, b.db.Owner.QueryRow(context.Background(), `SELECT kind FROM principals WHERE id = $1`, id).Scan(&kind))
	require.NoError(t, b.db.Owner.QueryRow(context.Background(), `SELECT count(*) FROM agents WHERE principal_id = $1`, id).Scan(&agents))
	require.Equal(t, "agent", kind)
	require.Equal(t, 1, agents)
}

func TestAuthenticateRejectsMalformedTokens(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, token := range []string{"", "garbage", "bts_", "whsec_AAAA", strings.Repeat("A", 47)} {
		_, err := b.env.Service.Authenticate(context.Background(), token)
		requireCode(t, err, errs.CodeUnauthorized)
	}
}

// TestTokensAreNeverStored: no row of any table holds a token or any
// 8-character piece of it (as text or as the hex of bytea), and the audit
// trail holds no email.
func TestTokensAreNeverStored(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	robin, err := b.env.Bootstrap.CreateOwner(ctx, app.CreatePerson{Email: "robin@example.com", DisplayName: "Robin", Password: "correct horse battery staple"})
	require.NoError(t, err)
	session, err := b.env.Service.SignIn(ctx, app.SignIn{Email: "robin@example.com", Password: "correct horse battery staple"})
	require.NoError(t, err)
	p, err := b.env.Service.Authenticate(ctx, session.Token)
	require.NoError(t, err)
	personal, err := b.env.Service.CreatePersonalToken(as(p), app.CreatePersonalToken{Name: "scripts"})
	require.NoError(t, err)
	revoked, err := b.env.Service.CreatePersonalToken(as(p), app.CreatePersonalToken{Name: "old"})
	require.NoError(t, err)
	require.NoError(t, b.env.Service.RevokePersonalToken(as(p), revoked.PersonalToken.ID))
	tracker, err := b.env.Service.CreateAppPrincipal(ctx, "Tracker")
	require.NoError(t, err)
	appToken, err := b.env.Service.IssueAppToken(ctx, tracker)
	require.NoError(t, err)
	_, err = b.env.Service.CreatePerson(as(p), app.CreatePerson{Email: "sam@example.com", DisplayName: "Sam", Password: "correct horse battery staple"})
	require.NoError(t, err)

	rows, err := b.db.Owner.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`)
	require.NoError(t, err)
	var tables []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		tables = append(tables, name)
	}
	require.NoError(t, rows.Err())
	require.Subset(t, tables, []string{"sessions", "personal_tokens", "app_tokens", "people", "audit_events"})
	for _, token := range []string{session.Token, personal.Token, revoked.Token, appToken} {
		httpservertest.RequireSecretAbsent(t, b.db.Owner, token, tables...)
	}
	for _, e := range audittest.List(t, b.db.App, audittest.Filter{}) {
		for _, v := range e.Details {
			require.NotContains(t, fmt.Sprint(v), "example.com", "no email in an audit entry")
		}
	}
	require.NotEqual(t, robin.ID, ids.Zero)
}

func fieldsOf(err error) []errs.FieldError {
	e, _ := errs.As(err)
	if e == nil {
		return nil
	}
	return e.Fields
}
