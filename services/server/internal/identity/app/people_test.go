package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/identity/app"
	"bothy/server/internal/identity/domain"
	"bothy/server/internal/identity/identitytest"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/errs"
)

func TestCreatePersonByAnOwnerWithAFreshStepUp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env.AddPerson(t, "robin@example.com", "Robin", actor.RoleOwner)
	_, robin := b.env.SignIn(t, "robin@example.com")

	sam, err := b.env.Service.CreatePerson(as(robin), app.CreatePerson{
		Email: " Sam@Example.com ", DisplayName: "Sam", Password: identitytest.Password})
	require.NoError(t, err)
	require.Equal(t, "sam@example.com", sam.Email)
	require.Equal(t, actor.RoleMember, sam.Role, "members by default")
	require.Equal(t, t0, sam.CreatedAt)

	var hash string
	require.NoError(t, b.db.Owner.QueryRow(context.Background(), `SELECT password_hash FROM people WHERE principal_id = $1`, sam.ID).Scan(&hash))
	require.True(t, strings.HasPrefix(hash, "$argon2id$v=19$"), "only the argon2id hash is stored")
	ok, err := domain.VerifyPassword(hash, identitytest.Password)
	require.NoError(t, err)
	require.True(t, ok)

	entries := audittest.List(t, b.db.App, audittest.Filter{Action: "identity.person.manage", Outcome: "allow"})
	require.Len(t, entries, 1)
	require.Equal(t, robin.ID, entries[0].ActorID)
	require.Equal(t, "person", entries[0].ResourceKind)
	require.Equal(t, sam.ID, entries[0].ResourceID)
	require.Equal(t, map[string]any{"change": "created", "role": "member"}, entries[0].Details, "IDs and codes, never the email")

	_, sessionSam := b.env.SignIn(t, "sam@example.com")
	require.Equal(t, actor.RoleMember, sessionSam.Role)
}

func TestCreatePersonIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env.AddPerson(t, "robin@example.com", "Robin", actor.RoleOwner)
	b.env.AddPerson(t, "alex@example.com", "Alex", actor.RoleMember)
	_, robin := b.env.SignIn(t, "robin@example.com")
	_, alex := b.env.SignIn(t, "alex@example.com")
	token, err := b.env.Service.CreatePersonalToken(as(robin), app.CreatePersonalToken{Name: "scripts"})
	require.NoError(t, err)
	robinByToken, err := b.env.Service.Authenticate(context.Background(), token.Token)
	require.NoError(t, err)
	good := app.CreatePerson{Email: "sam@example.com", DisplayName: "Sam", Password: "a long enough password"}

	_, err = b.env.Service.CreatePerson(as(alex), good)
	requireCode(t, err, errs.CodeNotFound)
	_, err = b.env.Service.CreatePerson(as(robinByToken), good)
	requireCode(t, err, errs.CodeNotFound)
	_, err = b.env.Service.CreatePerson(context.Background(), good)
	requireCode(t, err, errs.CodeUnauthorized)

	b.clock.Advance(stepUpMaxAge + time.Second)
	_, err = b.env.Service.CreatePerson(as(robin), good)
	requireCode(t, err, errs.CodeStepUpRequired)
	require.Empty(t, audittest.List(t, b.db.App, audittest.Filter{Action: "identity.person.manage", Outcome: "allow"}))
	require.Len(t, audittest.List(t, b.db.App, audittest.Filter{Action: "identity.person.manage", Outcome: "deny"}), 4,
		"the authorizer records each denial")
}

func TestCreatePersonValidates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	_, err := b.env.Bootstrap.CreateOwner(ctx, app.CreatePerson{Email: "robin@example", DisplayName: " ", Password: "short"})
	e, ok := errs.As(err)
	require.True(t, ok)
	require.Equal(t, errs.CodeValidationFailed, e.Code)
	require.Equal(t, []errs.FieldError{
		{Pointer: "/email", Code: "invalid_email"},
		{Pointer: "/display_name", Code: "required"},
		{Pointer: "/password", Code: "too_short"},
	}, e.Fields)
	require.NotContains(t, err.Error(), "short")

	_, err = b.env.Bootstrap.CreateOwner(ctx, app.CreatePerson{Email: "robin@example.com", DisplayName: "Robin", Password: identitytest.Password})
	require.NoError(t, err)
	_, err = b.env.Bootstrap.CreateOwner(ctx, app.CreatePerson{Email: "ROBIN@example.com", DisplayName: "Robin again", Password: identitytest.Password})
	requireCode(t, err, errs.CodeConflict)
	require.Equal(t, app.ReasonEmailTaken, errs.ReasonOf(err))
	var principals int
	require.NoError(t, b.db.Owner.QueryRow(ctx, `SELECT count(*) FROM principals`).Scan(&principals))
	require.Equal(t, 1, principals, "the conflict left no principal behind")

	_, robin := b.env.SignIn(t, "robin@example.com")
	_, err = b.env.Service.CreatePerson(as(robin), app.CreatePerson{Email: "sam@example.com", DisplayName: "Sam",
		Password: identitytest.Password, Role: "admin"})
	require.Equal(t, []errs.FieldError{{Pointer: "/role", Code: "invalid_role"}}, func() []errs.FieldError { e, _ := errs.As(err); return e.Fields }())
}

func TestBootstrapCreatesAnOwnerAuditedAsTheSystem(t *testing.T) {
	t.Parallel()
	b := setup(t)
	robin, err := b.env.Bootstrap.CreateOwner(context.Background(), app.CreatePerson{
		Email: "robin@example.com", DisplayName: "Robin", Password: identitytest.Password, Role: actor.RoleMember})
	require.NoError(t, err)
	require.Equal(t, actor.RoleOwner, robin.Role, "the bootstrap always makes owners")
	entries := audittest.List(t, b.db.App, audittest.Filter{Action: "identity.person.manage", Outcome: "allow"})
	require.Len(t, entries, 1)
	require.Equal(t, "system", entries[0].ActorKind)
	require.Equal(t, "owner", entries[0].Details["role"])
	_, p := b.env.SignIn(t, "robin@example.com")
	require.True(t, p.IsOwner())
}
