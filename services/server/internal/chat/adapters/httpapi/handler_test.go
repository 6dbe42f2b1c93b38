package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/api"
	"bothy/server/internal/authz/authztest"
	"bothy/server/internal/authz/domain"
	"bothy/server/internal/chat/adapters/httpapi"
	chatpg "bothy/server/internal/chat/adapters/postgres"
	"bothy/server/internal/chat/app"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/auditpg"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/internal/platform/pg/pgtest"
	syncpg "bothy/server/internal/sync/adapters/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// chatOperations are the operations this package serves.
var chatOperations = []string{"addSpaceMember", "createChannel", "createSpace", "deleteMessage", "listChannels",
	"listMessages", "listSpaces", "postMessage", "updateMessage"}

type testBundle struct {
	env   *httpservertest.Env
	world authztest.World
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	db := pgtest.New(t)
	env := httpservertest.New(t, db, httpservertest.Options())
	maint, err := syncpg.NewMaintainer(db.App, syncpg.MaintainerOptions{
		PartitionInterval: time.Hour, PartitionAhead: 48 * time.Hour, EventRetention: 7 * 24 * time.Hour})
	require.NoError(t, err)
	_, err = maint.Run(context.Background(), env.Clock.Now())
	require.NoError(t, err)
	appender, err := syncpg.NewAppender(env.Clock, syncpg.NewWaker(db.App, slog.New(slog.DiscardHandler), time.Second), syncpg.AppenderOptions{PayloadTextMaxBytes: 1024})
	require.NoError(t, err)
	svc, err := app.NewService(app.Deps{
		Store:      chatpg.NewStore(db.App),
		UnitOfWork: env.UnitOfWork,
		Authorizer: authztest.NewAuthorizer(t, db, env.Clock, nil),
		Events:     appender,
		Audit:      auditpg.New(db.App, env.Clock),
		Clock:      env.Clock,
	}, app.Options{MessageMaxBytes: 32, NameMaxChars: 20, PageSizeDefault: 2, PageSizeMax: 3, PostGatherMax: 16, PostGatherGroups: 2})
	require.NoError(t, err)
	cursors, err := httpserver.NewCursors([]byte(strings.Repeat("k", httpserver.MinCursorKeyLen)))
	require.NoError(t, err)
	h, err := httpapi.NewHandler(svc, cursors)
	require.NoError(t, err)
	mount(t, env, h)
	return &testBundle{env: env, world: authztest.BuildWorld(t, db, env.Clock)}
}

// others gives a server the methods of the operations of other modules,
// through a nil interface one level deeper than Handler's, so Handler's
// methods win and the others are never called here.
type others struct{ api.StrictServerInterface }

// server is the strict server of these tests: Handler plus others.
type server struct {
	*httpapi.Handler
	others
}

// mount serves the generated API on the test server the way the role
// assembly does: routes declared from the operation table, the validator
// after the chain, problems written by the server.
func mount(t *testing.T, env *httpservertest.Env, handler *httpapi.Handler) {
	t.Helper()
	var mine []api.Operation
	for _, op := range api.Operations() {
		if slices.Contains(chatOperations, op.ID) {
			mine = append(mine, op)
		}
	}
	require.Len(t, mine, len(chatOperations), "every chat operation is enabled")
	// api.VerifyRegistrations checks the server the role assembly composes;
	// here the other modules' methods come from a nil interface, which it
	// rightly refuses, so the chat operations are checked one by one.
	for _, op := range mine {
		require.True(t, reflect.ValueOf(handler).MethodByName(op.Handler).IsValid(), "%s: Handler has no method %s", op.ID, op.Handler)
		require.Contains(t, domain.IDs(), op.Action, op.ID)
		require.NotContains(t, domain.DeferredIDs(), op.Action, op.ID)
	}
	require.NoError(t, api.Mount(env.Server, server{Handler: handler}))
}

// do sends method target with body as p (anonymous for the zero principal).
func (b *testBundle) do(t *testing.T, p actor.Principal, method, target string, body any, header ...string) *http.Response {
	t.Helper()
	r := httpservertest.NewRequest(t, method, api.BasePath+target, body)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	if !p.Anonymous() {
		b.env.Auth.As(r, p)
	}
	return b.env.Do(r)
}

// decode reads a JSON body with status want into a map.
func decode(t *testing.T, resp *http.Response, want int) map[string]any {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, want, resp.StatusCode, "%s", body)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	require.NotContains(t, string(body), "null", "no JSON null (ADR 0053)")
	var m map[string]any
	require.NoError(t, json.Unmarshal(body, &m))
	return m
}

func texts(t *testing.T, page map[string]any) []string {
	t.Helper()
	out := []string{}
	for _, it := range page["items"].([]any) {
		out = append(out, it.(map[string]any)["text"].(string))
	}
	return out
}

func TestPostAndPageMessages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	for i := range 4 {
		msg := decode(t, b.do(t, w.Alex, "POST", "/channels/"+w.Allgemein.String()+"/messages", map[string]any{"text": fmt.Sprintf("m%d", i)}), 201)
		require.Equal(t, w.Allgemein.String(), msg["channel_id"])
		require.Equal(t, w.Alex.ID.String(), msg["author_id"])
		require.NotContains(t, msg, "thread_id")
		require.NotContains(t, msg, "updated_at")
		b.env.Clock.Advance(time.Second)
	}
	first := decode(t, b.do(t, w.Sam, "GET", "/channels/"+w.Allgemein.String()+"/messages", nil), 200)
	require.Equal(t, []string{"m3", "m2"}, texts(t, first), "newest first, chat.page_size_default")
	cursor := first["next_cursor"].(string)
	second := decode(t, b.do(t, w.Sam, "GET", "/channels/"+w.Allgemein.String()+"/messages?limit=10&cursor="+cursor, nil), 200)
	require.Equal(t, []string{"m1", "m0"}, texts(t, second), "a limit above chat.page_size_max is lowered")
	require.NotContains(t, second, "next_cursor", "the last page has no cursor")

	resp := b.do(t, w.Alex, "GET", "/channels/"+w.Allgemein.String()+"/messages?cursor="+cursor, nil)
	httpservertest.RequireProblem(t, resp, errs.CodeCursorInvalid, "")
	resp = b.do(t, w.Sam, "GET", "/channels/"+w.Allgemein.String()+"/messages?cursor=garbage", nil)
	httpservertest.RequireProblem(t, resp, errs.CodeCursorInvalid, "")
}

// TestAppPostsThroughThePublicAPI (P-18): Tracker posts with its token
// where G-6 and messages:write allow it; elsewhere the answer is the one of
// an unknown channel.
func TestAppPostsThroughThePublicAPI(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	msg := decode(t, b.do(t, w.Tracker, "POST", "/channels/"+w.Eskalation.String()+"/messages", map[string]any{"text": "Ticket 42"}), 201)
	require.Equal(t, w.Tracker.ID.String(), msg["author_id"])

	invisible := b.do(t, w.Tracker, "POST", "/channels/"+w.Allgemein.String()+"/messages", map[string]any{"text": "Hello"})
	unknown := b.do(t, w.Tracker, "POST", "/channels/019ad3a0-7c00-7000-8000-000000000404/messages", map[string]any{"text": "Hello"})
	p1 := httpservertest.RequireProblem(t, invisible, errs.CodeNotFound, "")
	p2 := httpservertest.RequireProblem(t, unknown, errs.CodeNotFound, "")
	p1.RequestID, p2.RequestID = "", ""
	require.Equal(t, p2, p1, "an invisible channel answers exactly like an unknown one (AZ-P2)")

	noScope := w.Tracker
	noScope.GrantedScopes = []string{"messages:read"}
	resp := b.do(t, noScope, "POST", "/channels/"+w.Eskalation.String()+"/messages", map[string]any{"text": "Hello"})
	httpservertest.RequireProblem(t, resp, errs.CodeForbidden, "scope_missing")
}

func TestBadRequestsChangeNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	target := "/channels/" + w.Allgemein.String() + "/messages"
	resp := b.do(t, w.Alex, "POST", target, map[string]any{"text": strings.Repeat("a", 33)})
	httpservertest.RequireProblem(t, resp, errs.CodeValidationFailed, "", "/text")
	resp = b.do(t, w.Alex, "POST", target, map[string]any{"text": "Hi", "colour": "red"})
	httpservertest.RequireProblem(t, resp, errs.CodeValidationFailed, "", "/colour")
	resp = b.do(t, w.Alex, "POST", target, map[string]any{"text": "Hi", "start_thread": true, "thread_id": w.Allgemein.String()})
	httpservertest.RequireProblem(t, resp, errs.CodeValidationFailed, "", "/start_thread")
	resp = b.do(t, actor.Principal{}, "POST", target, map[string]any{"text": "Hi"})
	httpservertest.RequireProblem(t, resp, errs.CodeUnauthorized, "")

	page := decode(t, b.do(t, w.Alex, "GET", target, nil), 200)
	require.Empty(t, page["items"])
}

func TestThreadsEditAndDelete(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	target := "/channels/" + w.Eskalation.String() + "/messages"
	root := decode(t, b.do(t, w.Alex, "POST", target, map[string]any{"text": "Printer on fire", "start_thread": true}), 201)
	thread := root["thread_id"].(string)
	reply := decode(t, b.do(t, w.Tracker, "POST", target, map[string]any{"text": "Ticket 42", "thread_id": thread}), 201)
	require.Equal(t, thread, reply["thread_id"])

	b.env.Clock.Advance(time.Minute)
	edited := decode(t, b.do(t, w.Alex, "PATCH", "/messages/"+root["id"].(string), map[string]any{"text": "Printer fine"}), 200)
	require.Equal(t, "Printer fine", edited["text"])
	require.Equal(t, "2026-11-30T09:01:00Z", edited["updated_at"])
	resp := b.do(t, w.Sam, "PATCH", "/messages/"+root["id"].(string), map[string]any{"text": "Mine now"})
	httpservertest.RequireProblem(t, resp, errs.CodeForbidden, "not_self")

	resp = b.do(t, w.Robin, "DELETE", "/messages/"+reply["id"].(string), nil)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	resp = b.do(t, w.Robin, "DELETE", "/messages/"+reply["id"].(string), nil)
	httpservertest.RequireProblem(t, resp, errs.CodeNotFound, "")
}

func TestSpacesChannelsAndMembers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	space := decode(t, b.do(t, w.Robin, "POST", "/spaces", map[string]any{"name": "Vertrieb"}), 201)
	require.Equal(t, "Vertrieb", space["name"])
	resp := b.do(t, w.Alex, "POST", "/spaces", map[string]any{"name": "Geheim"})
	httpservertest.RequireProblem(t, resp, errs.CodeNotFound, "")

	member := decode(t, b.do(t, w.Robin, "POST", "/spaces/"+w.Marketing.String()+"/members",
		map[string]any{"person_id": w.Sam.ID.String(), "level": "read"}), 201)
	require.Equal(t, map[string]any{"space_id": w.Marketing.String(), "person_id": w.Sam.ID.String(), "level": "read",
		"created_at": "2026-11-30T09:00:00Z"}, member)
	resp = b.do(t, w.Robin, "POST", "/spaces/"+w.Marketing.String()+"/members",
		map[string]any{"person_id": w.Sam.ID.String(), "level": "write"})
	httpservertest.RequireProblem(t, resp, errs.CodeConflict, "already_member")

	spaces := decode(t, b.do(t, w.Sam, "GET", "/spaces", nil), 200)
	var names []string
	for _, it := range spaces["items"].([]any) {
		names = append(names, it.(map[string]any)["name"].(string))
	}
	require.Equal(t, []string{"Marketing", "Support"}, names)

	channel := decode(t, b.do(t, w.Robin, "POST", "/spaces/"+w.Marketing.String()+"/channels", map[string]any{"name": "Kampagnen"}), 201)
	require.Equal(t, w.Marketing.String(), channel["space_id"])
	resp = b.do(t, w.Robin, "POST", "/spaces/"+w.Marketing.String()+"/channels", map[string]any{"name": "Kampagnen"})
	httpservertest.RequireProblem(t, resp, errs.CodeConflict, "name_taken")
	channels := decode(t, b.do(t, w.Sam, "GET", "/spaces/"+w.Marketing.String()+"/channels", nil), 200)
	require.Len(t, channels["items"], 1)
	resp = b.do(t, w.Alex, "GET", "/spaces/"+w.Marketing.String()+"/channels", nil)
	httpservertest.RequireProblem(t, resp, errs.CodeNotFound, "")
}

func TestPostIsIdempotentWithAKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	target := "/channels/" + w.Allgemein.String() + "/messages"
	first := b.do(t, w.Alex, "POST", target, map[string]any{"text": "Once"}, "Idempotency-Key", "post-1")
	again := b.do(t, w.Alex, "POST", target, map[string]any{"text": "Once"}, "Idempotency-Key", "post-1")
	require.Equal(t, "true", again.Header.Get("Idempotent-Replay"))
	require.Equal(t, decode(t, first, 201), decode(t, again, 201))
	page := decode(t, b.do(t, w.Alex, "GET", target, nil), 200)
	require.Equal(t, []string{"Once"}, texts(t, page))
}

func TestNewHandlerNeedsItsDependencies(t *testing.T) {
	t.Parallel()
	_, err := httpapi.NewHandler(nil, nil)
	require.Error(t, err)
}
