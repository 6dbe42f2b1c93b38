package httpservertest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// failure records whether an assertion failed instead of failing the test.
type failure struct {
	testing.TB
	failed bool
}

type stop struct{}

func (f *failure) Errorf(string, ...any) { f.failed = true }
func (f *failure) FailNow()              { panic(stop{}) }
func (f *failure) Helper()               {}

func fails(t *testing.T, fn func(tb testing.TB)) bool {
	f := &failure{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(stop); !ok {
					panic(p)
				}
			}
		}()
		fn(f)
	}()
	return f.failed
}

func TestRequireSecretAbsentFindsPiecesInTextAndBytea(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	_, err := db.Owner.Exec(ctx, `
		CREATE TABLE leaky_text (v text); CREATE TABLE leaky_bytes (v bytea); CREATE TABLE clean (v text);
		GRANT SELECT, INSERT ON leaky_text, leaky_bytes, clean TO bothy_app`)
	require.NoError(t, err)
	secret := "whsec_EXAMPLEcQWxleCwgU2FtIGFuZCBSb2Jpbg=="
	for _, stmt := range []string{
		`INSERT INTO leaky_text VALUES ('prefix ' || substr($1, 5, 9) || ' suffix')`,
		`INSERT INTO leaky_bytes VALUES (convert_to(substr($1, 10, 8), 'UTF8'))`,
		`INSERT INTO clean VALUES ('Alex and Sam' || left($1, 0))`,
	} {
		_, err = db.App.Exec(ctx, stmt, secret)
		require.NoError(t, err)
	}

	require.False(t, fails(t, func(tb testing.TB) { httpservertest.RequireSecretAbsent(tb, db.App, secret, "clean") }))
	require.True(t, fails(t, func(tb testing.TB) { httpservertest.RequireSecretAbsent(tb, db.App, secret, "leaky_text") }))
	require.True(t, fails(t, func(tb testing.TB) { httpservertest.RequireSecretAbsent(tb, db.App, secret, "leaky_bytes") }))
}
