package harness

import (
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/api"
	azdomain "bothy/server/internal/authz/domain"
	"bothy/server/internal/platform/httpserver"
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

// MountAPI serves the generated API on env's server the way the role
// assembly does: every enabled route declared from the operation table,
// the request validator after the chain, problems written by the server,
// and srv as the strict server.
//
// It first checks the module's operations ops with the rules of
// api.VerifyRegistrations, which itself needs the whole composed server of
// the role assembly (a nil embedded handler set is a trap it reports):
// each is enabled, authorised with an action of the catalogue that is not
// deferred, and served by a method of handlers.
func MountAPI(t testing.TB, env *httpservertest.Env, srv api.StrictServerInterface, handlers any, ops []string) {
	t.Helper()
	var mine []api.Operation
	for _, op := range api.Operations() {
		env.Server.Declare(httpserver.Route{Operation: op.ID, Method: op.Method, Pattern: api.BasePath + op.Path,
			RateClass: httpserver.RateClass(op.RateLimitClass), CORS: op.CORS})
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
	v, err := api.NewValidator(api.ValidatorOptions{OnError: env.Server.WriteError})
	require.NoError(t, err)
	strict := api.NewStrictHandlerWithOptions(srv, nil, api.StrictHTTPServerOptions{
		RequestErrorHandlerFunc: env.Server.WriteError, ResponseErrorHandlerFunc: env.Server.WriteError})
	api.HandlerWithOptions(strict, api.StdHTTPServerOptions{BaseURL: api.BasePath, BaseRouter: env.Server,
		Middlewares: []api.MiddlewareFunc{v.Middleware}, ErrorHandlerFunc: env.Server.WriteError})
}
