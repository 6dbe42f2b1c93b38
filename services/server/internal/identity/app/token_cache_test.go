package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/identity"
	"bothy/server/internal/identity/app"
	"bothy/server/internal/identity/identitytest"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/watched/watchedtest"
)

// setupWatched is setup with the watch reporting through a watchedtest.Reported.
func setupWatched(t *testing.T, dropChanges bool) (*testBundle, *watchedtest.Reported) {
	t.Helper()
	b := newBundle(t)
	r := watchedtest.NewReported(b.env.Changes, dropChanges)
	b.env.WatchChanges(t, r)
	return b, r
}

// ownerExec runs sql as the migration owner: the change another process or
// an operator makes, outside this process's use cases.
func ownerExec(t *testing.T, b *testBundle, sql string, args ...any) {
	t.Helper()
	_, err := b.db.Owner.Exec(context.Background(), sql, args...)
	require.NoError(t, err)
}

// TestTokenCacheAnswersFromMemory: once looked up, a session authenticates
// without the database: a revocation written while the trigger of
// migration 00062 is off does not reach the cache, so the token still
// works; the next change the trigger reports ends it.
func TestTokenCacheAnswersFromMemory(t *testing.T) {
	t.Parallel()
	b, r := setupWatched(t, false)
	b.env.AddPerson(t, "robin@example.com", "Robin", actor.RoleOwner)
	token, robin := b.env.SignIn(t, "robin@example.com")
	ctx := context.Background()

	ownerExec(t, b, `ALTER TABLE sessions DISABLE TRIGGER sessions_credentials_changed`)
	ownerExec(t, b, `UPDATE sessions SET revoked_at = $1 WHERE id = $2`, t0, robin.SessionID)
	p, err := b.env.Service.Authenticate(ctx, token)
	require.NoError(t, err, "served from memory")
	require.Equal(t, robin, p)

	ownerExec(t, b, `ALTER TABLE sessions ENABLE TRIGGER sessions_credentials_changed`)
	ownerExec(t, b, `UPDATE sessions SET revoked_at = $1 WHERE id = $2`, t0, robin.SessionID)
	r.AwaitChange(t, robin.ID)
	_, err = b.env.Service.Authenticate(ctx, token)
	requireCode(t, err, errs.CodeUnauthorized)

	// An app token's owner too; its installation's facts are read on
	// every request all the same.
	tracker, appToken := addApp(t, b)
	_, err = b.env.Service.Authenticate(ctx, appToken)
	require.NoError(t, err)
	ownerExec(t, b, `ALTER TABLE app_tokens DISABLE TRIGGER app_tokens_credentials_changed`)
	ownerExec(t, b, `UPDATE app_tokens SET revoked_at = $1 WHERE principal_id = $2`, t0, tracker)
	p, err = b.env.Service.Authenticate(ctx, appToken)
	require.NoError(t, err, "served from memory")
	require.True(t, p.InstallationActive)
	b.facts.set(tracker, identity.AppFacts{InstallationID: p.InstallationID, Active: false})
	p, err = b.env.Service.Authenticate(ctx, appToken)
	require.NoError(t, err)
	require.False(t, p.InstallationActive, "the facts are read on every request")
}

// addApp creates an app principal with an active installation and returns
// it and an app token of it.
func addApp(t *testing.T, b *testBundle) (ids.ID, string) {
	t.Helper()
	ctx := context.Background()
	tracker, err := b.env.Service.CreateAppPrincipal(ctx, "Tracker")
	require.NoError(t, err)
	token, err := b.env.Service.IssueAppToken(ctx, tracker)
	require.NoError(t, err)
	b.facts.set(tracker, identity.AppFacts{InstallationID: ids.New(), Active: true, GrantedScopes: []string{"messages:read"}})
	return tracker, token
}

// TestTokenCacheHearsChangesMadeElsewhere: every kind of change another
// process could commit reaches this process's cache through the trigger
// and its notification (ADR 0102), so the next request sees it.
func TestTokenCacheHearsChangesMadeElsewhere(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		change string
		// wantRole is the role the token authenticates with after the
		// change; empty when it must not authenticate at all.
		wantRole actor.Role
		// everyone: the change is reported for every person (a truncate).
		everyone bool
		// app: the token is an app token, the principal an app's.
		app bool
	}{
		"session revoked":        {change: `UPDATE sessions SET revoked_at = now() WHERE person_id = $1`},
		"session deleted":        {change: `DELETE FROM sessions WHERE person_id = $1`},
		"sessions truncated":     {change: `TRUNCATE sessions`, everyone: true},
		"personal token revoked": {change: `UPDATE personal_tokens SET revoked_at = now() WHERE person_id = $1`},
		"role changed":           {change: `UPDATE people SET role = 'member' WHERE principal_id = $1`, wantRole: actor.RoleMember},
		"person deleted":         {change: `DELETE FROM principals WHERE id = $1`},
		"app token revoked":      {change: `UPDATE app_tokens SET revoked_at = now() WHERE principal_id = $1`, app: true},
		"app token deleted":      {change: `DELETE FROM app_tokens WHERE principal_id = $1`, app: true},
		"app tokens truncated":   {change: `TRUNCATE app_tokens`, everyone: true, app: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b, r := setupWatched(t, false)
			robin := b.env.AddPerson(t, "robin@example.com", "Robin", actor.RoleOwner)
			session, p := b.env.SignIn(t, "robin@example.com")
			created, err := b.env.Service.CreatePersonalToken(as(p), app.CreatePersonalToken{Name: "deploy"})
			require.NoError(t, err)
			token, principal := session, robin.ID
			if name == "personal token revoked" {
				token = created.Token
			}
			if tc.app {
				principal, token = addApp(t, b)
			}
			_, err = b.env.Service.Authenticate(context.Background(), token)
			require.NoError(t, err)

			args := []any{principal}
			if tc.everyone {
				args = nil
			}
			ownerExec(t, b, tc.change, args...)
			if tc.everyone {
				r.AwaitChange(t, ids.Zero)
			} else {
				r.AwaitChange(t, principal)
			}
			got, err := b.env.Service.Authenticate(context.Background(), token)
			if tc.wantRole == "" {
				requireCode(t, err, errs.CodeUnauthorized)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantRole, got.Role)
		})
	}
}

// TestTokenCacheForgetsAtOnceInItsOwnProcess: a sign-out, a step-up, a
// revoked personal token and revoked app tokens (an uninstall) apply to this process's next request without
// waiting for the notification (the watch here passes none on).
func TestTokenCacheForgetsAtOnceInItsOwnProcess(t *testing.T) {
	t.Parallel()
	b, _ := setupWatched(t, true)
	b.env.AddPerson(t, "robin@example.com", "Robin", actor.RoleOwner)
	ctx := context.Background()

	token, robin := b.env.SignIn(t, "robin@example.com")
	b.clock.Advance(time.Second)
	_, err := b.env.Service.StepUp(as(robin), app.StepUp{Password: identitytest.Password})
	require.NoError(t, err)
	p, err := b.env.Service.Authenticate(ctx, token)
	require.NoError(t, err)
	require.Equal(t, b.clock.Now(), p.SteppedUpAt, "the step-up, not the cached sign-in")

	created, err := b.env.Service.CreatePersonalToken(as(p), app.CreatePersonalToken{Name: "deploy"})
	require.NoError(t, err)
	_, err = b.env.Service.Authenticate(ctx, created.Token)
	require.NoError(t, err)
	require.NoError(t, b.env.Service.RevokePersonalToken(as(p), created.PersonalToken.ID))
	_, err = b.env.Service.Authenticate(ctx, created.Token)
	requireCode(t, err, errs.CodeUnauthorized)

	require.NoError(t, b.env.Service.SignOut(as(p)))
	_, err = b.env.Service.Authenticate(ctx, token)
	requireCode(t, err, errs.CodeUnauthorized)

	tracker, appToken := addApp(t, b)
	_, err = b.env.Service.Authenticate(ctx, appToken)
	require.NoError(t, err)
	require.NoError(t, b.env.Service.RevokeAppTokens(ctx, tracker))
	_, err = b.env.Service.Authenticate(ctx, appToken)
	requireCode(t, err, errs.CodeUnauthorized)
}

// TestTokenCacheServesNothingWithoutItsWatch: before the watch listens and
// after its connection ended, every token is looked up in the database,
// so a change no notification reports still applies at once.
func TestTokenCacheServesNothingWithoutItsWatch(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	b.env.AddPerson(t, "robin@example.com", "Robin", actor.RoleOwner)
	b.env.AddPerson(t, "sam@example.com", "Sam", actor.RoleMember)
	ctx := context.Background()
	ownerExec(t, b, `ALTER TABLE sessions DISABLE TRIGGER sessions_credentials_changed`)

	token, robin := b.env.SignIn(t, "robin@example.com")
	ownerExec(t, b, `UPDATE sessions SET revoked_at = $1 WHERE id = $2`, t0, robin.SessionID)
	_, err := b.env.Service.Authenticate(ctx, token)
	requireCode(t, err, errs.CodeUnauthorized)

	lost := watchedtest.NewReported(b.env.Changes, false)
	b.env.WatchChanges(t, lost)
	token, sam := b.env.SignIn(t, "sam@example.com")
	var terminated bool
	require.NoError(t, b.db.App.QueryRow(ctx, `SELECT bool_or(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN bothy_changes'`).Scan(&terminated))
	require.True(t, terminated, "the watch's connection was found")
	lost.AwaitLost(t)
	ownerExec(t, b, `UPDATE sessions SET revoked_at = $1 WHERE id = $2`, t0, sam.SessionID)
	_, err = b.env.Service.Authenticate(ctx, token)
	requireCode(t, err, errs.CodeUnauthorized)
}

// BenchmarkAuthenticate authenticates one session token over and over, in
// one process against its test database (shape: one person, one token):
// looked_up without the watch of credential changes, so every call reads
// the token's owner from PostgreSQL (the cost before ADR 0102); cached
// with the watch, so the owner comes from memory.
func BenchmarkAuthenticate(b *testing.B) {
	for _, cached := range []bool{false, true} {
		name := "looked_up"
		if cached {
			name = "cached"
		}
		b.Run(name, func(b *testing.B) {
			bundle := newBundle(b)
			if cached {
				bundle.env.WatchChanges(b, nil)
			}
			bundle.env.AddPerson(b, "robin@example.com", "Robin", actor.RoleOwner)
			token, _ := bundle.env.SignIn(b, "robin@example.com")
			ctx := context.Background()
			for b.Loop() {
				if _, err := bundle.env.Service.Authenticate(ctx, token); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
