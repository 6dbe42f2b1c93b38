package domain_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/authz/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
)

// actionConstants parses kernel/authorize/actions.go and returns the values
// of every constant of type Action, except ReceiveSelf (a receive action,
// not an action of the catalogue). Parsing the source keeps the test honest
// when a constant is added there and forgotten here.
func actionConstants(t *testing.T) []authorize.Action {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../../kernel/authorize/actions.go", nil, 0)
	require.NoError(t, err)
	var out []authorize.Action
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Action" {
				continue
			}
			for i, name := range vs.Names {
				if name.Name == "ReceiveSelf" {
					continue
				}
				lit := vs.Values[i].(*ast.BasicLit)
				v, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				out = append(out, authorize.Action(v))
			}
		}
	}
	require.NotEmpty(t, out)
	return out
}

func TestEveryActionConstantHasAnEntryAndViceVersa(t *testing.T) {
	t.Parallel()
	constants := actionConstants(t)
	for _, a := range constants {
		_, ok := domain.Lookup(a)
		require.True(t, ok, "constant %s has no catalogue entry", a)
	}
	for _, e := range domain.Catalogue() {
		require.Contains(t, constants, e.Action, "entry %s has no constant in kernel/authorize", e.Action)
	}
	require.Len(t, domain.Catalogue(), len(constants))
	require.Len(t, domain.IDs(), len(constants))
	require.Equal(t, "instance.discovery.read", domain.IDs()[0])
}

func TestCatalogueEntriesAreConsistent(t *testing.T) {
	t.Parallel()
	seen := map[authorize.Action]bool{}
	for _, e := range domain.Catalogue() {
		require.False(t, seen[e.Action], "duplicate %s", e.Action)
		seen[e.Action] = true
		got, ok := domain.Lookup(e.Action)
		require.True(t, ok)
		require.Equal(t, e.Action, got.Action)
		require.NotEmpty(t, e.Subjects, e.Action)
		require.NotEmpty(t, e.Doc, e.Action)
		require.Contains(t, []domain.Effect{domain.EffectRead, domain.EffectWrite}, e.Effect, e.Action)
		require.Contains(t, []domain.AuthorRule{domain.AuthorNone, domain.AuthorOnly, domain.AuthorOrOwner}, e.Author, e.Action)
		if e.AppScope != domain.ScopeNone {
			require.Contains(t, domain.Scopes(), e.AppScope, e.Action)
			require.Contains(t, e.Subjects, actor.KindApp, "%s: a scope only matters for apps", e.Action)
		}
		if e.OwnerOnly {
			require.Equal(t, domain.RightAdmin, e.Right, "%s: owner-only actions need admin", e.Action)
			require.Equal(t, domain.ScopeNone, e.AppScope, e.Action)
		}
		if e.StepUp {
			require.True(t, e.OwnerOnly, "%s: step-up actions are owner-only here", e.Action)
		}
		if e.System() {
			require.Equal(t, []actor.Kind{actor.KindSystem}, e.Subjects, e.Action)
		} else {
			require.NotContains(t, e.Subjects, actor.KindSystem, e.Action)
		}
		require.Equal(t, e.Action == authorize.WebhookOutDeliver, e.DeliveryCheck, e.Action)
		require.Equal(t, e.ResourceKind == domain.KindOfEvent, e.DeliveryCheck, e.Action)
	}
}

func TestCatalogueMatchesTheLeadsTable(t *testing.T) {
	t.Parallel()
	type row struct {
		kind     authorize.ResourceKind
		right    domain.Right
		owner    bool
		stepUp   bool
		audit    bool
		effect   domain.Effect
		appScope domain.Scope
	}
	y, n := true, false
	r, w := domain.EffectRead, domain.EffectWrite
	for a, want := range map[authorize.Action]row{
		authorize.InstanceDiscoveryRead: {authorize.KindInstance, domain.RightPublic, n, n, n, r, domain.ScopeNone},
		authorize.InstanceRead:          {authorize.KindInstance, domain.RightRead, n, n, n, r, domain.ScopeNone},
		authorize.SessionCreate:         {authorize.KindSession, domain.RightPublic, n, n, n, w, domain.ScopeNone},
		authorize.SessionDelete:         {authorize.KindSession, domain.RightSelf, n, n, n, w, domain.ScopeNone},
		authorize.SessionStepUp:         {authorize.KindSession, domain.RightSelf, n, n, n, w, domain.ScopeNone},
		authorize.MeRead:                {authorize.KindPerson, domain.RightSelf, n, n, n, r, domain.ScopeNone},
		authorize.PersonalTokenRead:     {authorize.KindPersonalToken, domain.RightSelf, n, n, n, r, domain.ScopeNone},
		authorize.PersonalTokenManage:   {authorize.KindPersonalToken, domain.RightSelf, n, n, y, w, domain.ScopeNone},
		authorize.PersonManage:          {authorize.KindPerson, domain.RightAdmin, y, y, y, w, domain.ScopeNone},
		authorize.SpaceRead:             {authorize.KindSpace, domain.RightRead, n, n, n, r, domain.ScopeNone},
		authorize.SpaceManage:           {authorize.KindSpace, domain.RightAdmin, y, n, y, w, domain.ScopeNone},
		authorize.ChannelRead:           {authorize.KindChannel, domain.RightRead, n, n, n, r, domain.ScopeChannelsRead},
		authorize.ChannelManage:         {authorize.KindChannel, domain.RightAdmin, y, n, y, w, domain.ScopeNone},
		authorize.MessageRead:           {authorize.KindChannel, domain.RightRead, n, n, n, r, domain.ScopeMessagesRead},
		authorize.MessagePost:           {authorize.KindChannel, domain.RightWrite, n, n, n, w, domain.ScopeMessagesWrite},
		authorize.MessageUpdate:         {authorize.KindMessage, domain.RightWrite, n, n, n, w, domain.ScopeMessagesWrite},
		authorize.MessageDelete:         {authorize.KindMessage, domain.RightWrite, n, n, n, w, domain.ScopeMessagesWrite},
		authorize.AppRegister:           {authorize.KindApp, domain.RightAdmin, y, y, y, w, domain.ScopeNone},
		authorize.AppRead:               {authorize.KindApp, domain.RightAdmin, y, n, n, r, domain.ScopeNone},
		authorize.AppInstall:            {authorize.KindApp, domain.RightAdmin, y, y, y, w, domain.ScopeNone},
		authorize.AppUninstall:          {authorize.KindApp, domain.RightAdmin, y, y, y, w, domain.ScopeNone},
		authorize.AppSuspend:            {authorize.KindApp, domain.RightAdmin, y, y, y, w, domain.ScopeNone},
		authorize.AppResume:             {authorize.KindApp, domain.RightAdmin, y, y, y, w, domain.ScopeNone},
		authorize.AppSetScopes:          {authorize.KindApp, domain.RightAdmin, y, y, y, w, domain.ScopeNone},
		authorize.AppGrantManage:        {authorize.KindApp, domain.RightAdmin, y, y, y, w, domain.ScopeNone},
		authorize.AppGrantRead:          {authorize.KindApp, domain.RightAdmin, y, n, n, r, domain.ScopeNone},
		authorize.WebhookOutRead:        {authorize.KindApp, domain.RightAdmin, y, n, n, r, domain.ScopeNone},
		authorize.WebhookOutManage:      {authorize.KindApp, domain.RightAdmin, y, y, y, w, domain.ScopeNone},
		authorize.WebhookOutRedeliver:   {authorize.KindWebhookDelivery, domain.RightAdmin, y, n, y, w, domain.ScopeNone},
		authorize.WebhookOutDeliver:     {domain.KindOfEvent, domain.RightRead, n, n, n, r, domain.ScopeEventsSubscribe},
		authorize.WebhookOutTransition:  {authorize.KindApp, domain.RightSystem, n, n, y, w, domain.ScopeNone},
	} {
		e, ok := domain.Lookup(a)
		require.True(t, ok, a)
		got := row{e.ResourceKind, e.Right, e.OwnerOnly, e.StepUp, e.Audit, e.Effect, e.AppScope}
		require.Equal(t, want, got, a)
	}
	upd, _ := domain.Lookup(authorize.MessageUpdate)
	require.Equal(t, domain.AuthorOnly, upd.Author)
	del, _ := domain.Lookup(authorize.MessageDelete)
	require.Equal(t, domain.AuthorOrOwner, del.Author)
	deliver, _ := domain.Lookup(authorize.WebhookOutDeliver)
	require.Equal(t, domain.EffectRead, deliver.Effect, "writes(webhook_out.deliver) is false")
	transition, _ := domain.Lookup(authorize.WebhookOutTransition)
	require.True(t, transition.System())
}

// TestDeferredActionsGolden pins the deferred list: empty since
// webhook_out.deliver got its requirement (docs/spec/07-permissions.md 8.1). A
// new entry must change this test on purpose.
func TestDeferredActionsGolden(t *testing.T) {
	t.Parallel()
	require.Empty(t, domain.Deferred())
	require.Empty(t, domain.DeferredIDs())
	for _, e := range domain.Catalogue() {
		require.False(t, domain.IsDeferred(e.Action), e.Action)
	}
	require.False(t, domain.IsDeferred(authorize.WebhookOutDeliver))
}

func TestScopes(t *testing.T) {
	t.Parallel()
	require.Equal(t, []domain.Scope{"events:subscribe", "messages:read", "messages:write", "channels:read"}, domain.Scopes())
	require.Contains(t, domain.Scopes(), domain.Scope("messages:read"))
	require.NotContains(t, domain.Scopes(), domain.ScopeNone, "none marks scope-free actions and is not grantable")
	require.NotContains(t, domain.Scopes(), domain.Scope("messages:admin"))
}

func TestRequirementsOrder(t *testing.T) {
	t.Parallel()
	for a, want := range map[authorize.Action][]domain.Atom{
		authorize.InstanceDiscoveryRead: nil,
		authorize.SessionDelete:         {domain.AtomAuthenticated, domain.AtomSubjectKind, domain.AtomSelf},
		authorize.MessagePost:           {domain.AtomAuthenticated, domain.AtomSubjectKind, domain.AtomLiveness, domain.AtomScope, domain.AtomLevel},
		authorize.MessageDelete:         {domain.AtomAuthenticated, domain.AtomSubjectKind, domain.AtomLiveness, domain.AtomScope, domain.AtomLevel, domain.AtomAuthor},
		authorize.AppInstall:            {domain.AtomAuthenticated, domain.AtomSubjectKind, domain.AtomLiveness, domain.AtomOwnerOnly, domain.AtomStepUp, domain.AtomLevel},
		authorize.WebhookOutTransition:  {domain.AtomAuthenticated, domain.AtomSubjectKind},
		authorize.WebhookOutDeliver:     {domain.AtomAuthenticated, domain.AtomSubjectKind, domain.AtomLiveness, domain.AtomScope, domain.AtomDelivery},
	} {
		e, _ := domain.Lookup(a)
		require.Equal(t, want, domain.Requirements(e), a)
	}
	for _, e := range domain.Catalogue() {
		atoms := domain.Requirements(e)
		require.True(t, slices.IsSortedFunc(atoms, func(x, y domain.Atom) int { return order(x) - order(y) }), e.Action)
	}
}

// order is the position of an atom in the evaluation order of 07 4.2.
func order(a domain.Atom) int {
	return slices.Index([]domain.Atom{domain.AtomAuthenticated, domain.AtomSubjectKind, domain.AtomLiveness,
		domain.AtomOwnerOnly, domain.AtomScope, domain.AtomStepUp, domain.AtomSelf, domain.AtomLevel, domain.AtomAuthor, domain.AtomDelivery}, a)
}
