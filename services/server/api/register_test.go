package api_test

import (
	"context"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/api"
)

// strict makes the fake servers satisfy StrictServerInterface whatever
// operations are enabled; its methods are never called (the nil interface
// it embeds provides none of the fake handlers).
type strict struct{ api.StrictServerInterface }

type thingServer struct{ strict }

func (thingServer) GetThing(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }

type thingHandler interface {
	GetThing(context.Context, struct{}) (struct{}, error)
}

// composedServer embeds the handlers of one module, as the role assembly
// composes the server from module adapters.
type composedServer struct {
	strict
	thingHandler
}

type deepServer struct {
	*composedServer
}

func TestVerifyRegistrations(t *testing.T) {
	t.Parallel()
	get := api.Operation{ID: "getThing", Handler: "GetThing", Method: "GET", Path: "/things/{thingId}", Action: "thing.read"}
	cases := []struct {
		name     string
		ops      []api.Operation
		known    []string
		deferred []string
		server   any
		problems []string
	}{
		{name: "an implemented operation with a known action passes", ops: []api.Operation{get}, known: []string{"thing.read"}, server: thingServer{}},
		{name: "a pointer to the server passes", ops: []api.Operation{get}, known: []string{"thing.read"}, server: &thingServer{}},
		{name: "a handler from a set embedded field passes", ops: []api.Operation{get}, known: []string{"thing.read"}, server: composedServer{thingHandler: thingServer{}}},
		{name: "no operations need nothing", server: thingServer{}},
		{
			name: "an unknown action fails", ops: []api.Operation{get}, known: []string{"thing.write"}, server: thingServer{},
			problems: []string{"getThing: x-authz-action thing.read is not in the action catalogue"},
		},
		{
			name: "a deferred action fails", ops: []api.Operation{get}, known: []string{"thing.read"}, deferred: []string{"thing.read"}, server: thingServer{},
			problems: []string{"getThing: x-authz-action thing.read is deferred"},
		},
		{
			name: "an operation without action fails", ops: []api.Operation{{ID: "getThing", Handler: "GetThing", Method: "GET", Path: "/things"}}, server: thingServer{},
			problems: []string{"getThing: x-authz-action is empty"},
		},
		{
			name: "a missing handler fails", ops: []api.Operation{get, {ID: "putThing", Handler: "PutThing", Method: "PUT", Path: "/things/{thingId}", Action: "thing.read"}},
			known: []string{"thing.read"}, server: thingServer{},
			problems: []string{"putThing: the server has no method PutThing"},
		},
		{
			name: "a handler promoted from a nil embedded field fails", ops: []api.Operation{get}, known: []string{"thing.read"}, server: composedServer{},
			problems: []string{"getThing: method GetThing comes from the nil embedded field thingHandler"},
		},
		{
			name: "a nil embedded field deeper down fails", ops: []api.Operation{get}, known: []string{"thing.read"}, server: deepServer{&composedServer{}},
			problems: []string{"getThing: method GetThing comes from the nil embedded field composedServer.thingHandler"},
		},
		{
			name: "a nil embedded pointer fails", ops: []api.Operation{get}, known: []string{"thing.read"}, server: deepServer{},
			problems: []string{"getThing: method GetThing comes from the nil embedded field composedServer"},
		},
		{
			name: "a nil server fails", ops: []api.Operation{get}, known: []string{"thing.read"}, server: nil,
			problems: []string{"the server is nil"},
		},
		{
			name: "a nil pointer server fails", ops: []api.Operation{get}, known: []string{"thing.read"}, server: (*thingServer)(nil),
			problems: []string{"the server is nil"},
		},
		{
			name: "an operation listed twice fails", ops: []api.Operation{get, get}, known: []string{"thing.read"}, server: thingServer{},
			problems: []string{"getThing: listed twice", "GET /api/v1/things/{thingId}: two operations share this pattern"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := api.VerifyRegistrations(tc.ops, tc.known, tc.deferred, tc.server)
			if tc.problems == nil {
				require.NoError(t, err)
				return
			}
			var re *api.RegistrationError
			require.ErrorAs(t, err, &re)
			require.Equal(t, tc.problems, re.Problems)
		})
	}
}

// TestRegisterCheckGeneratedTable is part of make register-check: the
// generated table agrees with the generated strict server interface and the
// embedded spec. The role assembly adds the check with the action catalogue
// and the real server (see README.md).
func TestRegisterCheckGeneratedTable(t *testing.T) {
	t.Parallel()
	iface := reflect.TypeFor[api.StrictServerInterface]()
	ops := api.Operations()
	require.Len(t, ops, iface.NumMethod(), "one strict handler per enabled operation")
	patterns := map[string]bool{}
	for _, op := range ops {
		_, ok := iface.MethodByName(op.Handler)
		require.True(t, ok, "%s: StrictServerInterface has no method %s", op.ID, op.Handler)
		require.NotEmpty(t, op.Action, op.ID)
		require.False(t, patterns[op.Pattern()], op.Pattern())
		patterns[op.Pattern()] = true
	}
	require.True(t, slices.IsSortedFunc(ops, func(a, b api.Operation) int { return strings.Compare(a.ID, b.ID) }), "sorted by ID")
	require.Len(t, slices.CompactFunc(slices.Clone(ops), func(a, b api.Operation) bool { return a.ID == b.ID }), len(ops), "one entry per operationId")
	_, err := api.NewValidator(api.ValidatorOptions{OnError: func(http.ResponseWriter, *http.Request, error) {}})
	require.NoError(t, err, "the embedded spec loads and validates")
}
