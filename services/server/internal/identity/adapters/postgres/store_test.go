package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/identity/adapters/postgres"
	"bothy/server/internal/identity/app"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg/pgtest"
)

// TestCreatePersonWritesPrincipalAndPersonTogether: CreatePerson stores the
// principal and the people row in one statement (query
// PersonInsertWithPrincipal, ADR 0078); a taken email gives email_taken
// and leaves no principal behind.
func TestCreatePersonWritesPrincipalAndPersonTogether(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := postgres.New(db.App)
	ctx := context.Background()

	alex := app.Person{ID: ids.New(), Email: "alex@example.com", DisplayName: "Alex", Role: actor.RoleMember, CreatedAt: t0}
	require.NoError(t, s.CreatePerson(ctx, alex, "hash-of-alex"))
	got, found, err := s.PersonByID(ctx, alex.ID)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, alex, got)
	kind, found, err := s.PrincipalKind(ctx, alex.ID)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, actor.KindPerson, kind)
	creds, found, err := s.CredentialsByEmail(ctx, alex.Email)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, app.Credentials{PersonID: alex.ID, PasswordHash: "hash-of-alex"}, creds)

	sam := app.Person{ID: ids.New(), Email: alex.Email, DisplayName: "Sam", Role: actor.RoleMember, CreatedAt: t0}
	err = s.CreatePerson(ctx, sam, "hash-of-sam")
	require.Equal(t, app.ReasonEmailTaken, errs.ReasonOf(err))
	_, found, err = s.PrincipalKind(ctx, sam.ID)
	require.NoError(t, err)
	require.False(t, found, "the principal of a refused person is not stored")
	var principals int
	require.NoError(t, db.App.QueryRow(ctx, `SELECT count(*) FROM principals`).Scan(&principals))
	require.Equal(t, 1, principals)
}
