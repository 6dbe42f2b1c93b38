package harness

import (
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/api"
	azdomain "bothy/server/internal/authz/domain"
	"bothy/server/internal/platform/httpserver/httpservertest"
)

// OtherModules stands for the handler sets of the other modules in a
// test's strict server. A module's handler test composes
//
//	type composed struct {
//		*httpapi.Handlers
//		harness.OtherModules
//	}
//
// The nil interface provides the other modules' methods one level deeper
// than the module's own, so the module's methods win; the others are never
// called by the test.
type OtherModules struct{ api.StrictServerInterface }

// MountAPI checks a module's operations ops with the rules of
// api.VerifyRegistrations and mounts srv with api.Mount on env's server,
// as the role assembly does. VerifyRegistrations itself needs the whole
// composed server (a nil embedded handler set is a trap it reports), so
// here each operation of ops is checked to be enabled, authorised with an
// action of the catalogue that is not deferred, and served by a method of
// handlers.
func MountAPI(t testing.TB, env *httpservertest.Env, srv api.StrictServerInterface, handlers any, ops []string) {
	t.Helper()
	var mine []api.Operation
	for _, op := range api.Operations() {
		if slices.Contains(ops, op.ID) {
			mine = append(mine, op)
		}
	}
	require.Len(t, mine, len(ops), "every operation of the module is enabled")
	for _, op := range mine {
		require.Contains(t, azdomain.IDs(), op.Action, op.ID)
		require.NotContains(t, azdomain.DeferredIDs(), op.Action, op.ID)
		require.True(t, reflect.ValueOf(handlers).MethodByName(op.Handler).IsValid(), op.ID)
	}
	require.NoError(t, api.Mount(env.Server, srv))
}
