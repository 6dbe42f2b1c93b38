package wire_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	idpg "bothy/server/internal/identity/adapters/postgres"
	idapp "bothy/server/internal/identity/app"
	iddomain "bothy/server/internal/identity/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/wire"
)

// TestAPIProcessesHearEachOthersSignOuts: two API processes on one
// database, as an operator runs them behind a load balancer (ADR 0102).
// The process that did not sign the session out answers it from memory
// while the trigger is off (so its cache and watch are wired), and stops
// accepting it once the trigger reports a change; the process that signed
// it out refuses it at once.
func TestAPIProcessesHearEachOthersSignOuts(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a, b := startTwoAPIProcesses(t, w)
	ctx := context.Background()

	token := signInRobin(t, w, a.api)

	code, body := call(t, b.api, http.MethodGet, "/api/v1/me", token, "")
	require.Equal(t, http.StatusOK, code, body)

	withoutReports(t, w, "sessions", "sessions_credentials_changed", func() {
		code, body = call(t, a.api, http.MethodDelete, "/api/v1/sessions/current", token, "")
		require.Equal(t, http.StatusNoContent, code, body)
		code, _ = call(t, a.api, http.MethodGet, "/api/v1/me", token, "")
		require.Equal(t, http.StatusUnauthorized, code, "the process that signed out forgets at once")
		code, _ = call(t, b.api, http.MethodGet, "/api/v1/me", token, "")
		require.Equal(t, http.StatusOK, code, "the other process answers from memory: no change was reported")
	})
	_, err := w.db.Owner.Exec(ctx, `UPDATE sessions SET revoked_at = revoked_at`)
	require.NoError(t, err)
	eventuallyAnswers(t, b.api, "/api/v1/me", token, http.StatusUnauthorized)
}

// withoutReports runs fn while the trigger of table that reports its
// changes is off, as if its notifications were lost, and turns it on
// again after.
func withoutReports(t *testing.T, w world, table, trigger string, fn func()) {
	t.Helper()
	_, err := w.db.Owner.Exec(context.Background(), `ALTER TABLE `+table+` DISABLE TRIGGER `+trigger)
	require.NoError(t, err)
	fn()
	_, err = w.db.Owner.Exec(context.Background(), `ALTER TABLE `+table+` ENABLE TRIGGER `+trigger)
	require.NoError(t, err)
}

// eventuallyAnswers waits until a GET of path with token at the API
// listener addr answers code: a reported change has reached that process.
func eventuallyAnswers(t *testing.T, addr, path, token string, code int) {
	t.Helper()
	require.Eventually(t, func() bool {
		got, _ := call(t, addr, http.MethodGet, path, token, "")
		return got == code
	}, 30*time.Second, 5*time.Millisecond, "the reported change reaches the process at %s", addr)
}

// startTwoAPIProcesses starts two API processes on w's database, as an
// operator runs them behind a load balancer, and returns once both are
// ready and listen for changes.
func startTwoAPIProcesses(t *testing.T, w world) (*runBundle, *runBundle) {
	t.Helper()
	a := startProcessIn(t, w, wire.RoleAPI, wire.Deps{})
	b := startProcessIn(t, w, wire.RoleAPI, wire.Deps{})
	waitReady(t, a.operator)
	waitReady(t, b.operator)
	waitWatching(t, w, 2)
	return a, b
}

// waitWatching waits until n processes listen for changes in w's
// database (the watch's LISTEN done, ADR 0103): a process that serves
// before its watch listens reads everything from the database, which a
// test of what is answered from memory must not meet. Readiness does not
// wait for the watch: such a process is correct, only slower.
func waitWatching(t *testing.T, w world, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		var listening int
		require.NoError(t, w.db.App.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND query = 'LISTEN bothy_changes' AND state = 'idle'`).Scan(&listening))
		return listening == n
	}, 30*time.Second, 5*time.Millisecond, "%d processes listen for changes", n)
}

// signInRobin stores the owner Robin in w's database and signs Robin in
// through the API listener at addr; it returns the session token.
func signInRobin(t *testing.T, w world, addr string) string {
	t.Helper()
	token, _ := signInPerson(t, w, addr, "robin@example.com", "Robin", actor.RoleOwner)
	return token
}

// signInPerson stores a person with email, name and role in w's database
// and signs them in through the API listener at addr; it returns the
// session token and the person's ID.
func signInPerson(t *testing.T, w world, addr, email, name string, role actor.Role) (string, ids.ID) {
	t.Helper()
	// The process's own parameters: a hash made with others is renewed at
	// the sign-in, an update of people whose notification would reach the
	// other process at a moment the test does not know.
	opts, err := wire.IdentityOptions(w.config(t))
	require.NoError(t, err)
	hash, err := iddomain.HashPassword("correct horse battery staple", opts.PasswordParams, rand.Reader)
	require.NoError(t, err)
	id := ids.New()
	require.NoError(t, idpg.New(w.db.App).CreatePerson(context.Background(), idapp.Person{ID: id, Email: email,
		DisplayName: name, Role: role, CreatedAt: time.Now()}, hash))
	code, body := call(t, addr, http.MethodPost, "/api/v1/sessions", "",
		`{"email":"`+email+`","password":"correct horse battery staple"}`)
	require.Equal(t, http.StatusCreated, code, body)
	var session struct {
		Token string `json:"token"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &session))
	return session.Token, id
}

// call sends a request with an optional bearer token and JSON body to the
// API listener at addr and returns the status and body.
func call(t *testing.T, addr, method, path, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	require.NoError(t, err)
	defer func() { _ = res.Body.Close() }()
	out, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(out)
}

// TestAPIProcessWithoutCachesLooksEverythingUp: with
// identity.token_cache_ttl, authz.standing_cache_ttl and
// chat.channel_cache_ttl 0 the process keeps nothing in memory and opens
// no watch, so a revocation no notification reports applies at once.
func TestAPIProcessWithoutCachesLooksEverythingUp(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := startProcessIn(t, w, wire.RoleAPI, wire.Deps{}, "BOTHY_IDENTITY_TOKEN_CACHE_TTL=0s",
		"BOTHY_AUTHZ_STANDING_CACHE_TTL=0s", "BOTHY_CHAT_CHANNEL_CACHE_TTL=0s")
	waitReady(t, a.operator)
	ctx := context.Background()
	token := signInRobin(t, w, a.api)

	withoutReports(t, w, "sessions", "sessions_credentials_changed", func() {
		_, err := w.db.Owner.Exec(ctx, `UPDATE sessions SET revoked_at = now()`)
		require.NoError(t, err)
		code, _ := call(t, a.api, http.MethodGet, "/api/v1/me", token, "")
		require.Equal(t, http.StatusUnauthorized, code)
	})
	var listening int
	require.NoError(t, w.db.App.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN bothy_changes'`).Scan(&listening))
	require.Zero(t, listening, "no watch without a cache")
}

// TestAPIProcessesHearEachOthersNewMembers: two API processes on one
// database (ADR 0103). Both keep Sam's standing without a membership of
// Marketing; Robin adds Sam through one of them, which answers Sam's next
// request from the database at once, while the other answers from memory
// as long as the trigger is off, and lets Sam in once a change is
// reported.
func TestAPIProcessesHearEachOthersNewMembers(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a, b := startTwoAPIProcesses(t, w)
	ctx := context.Background()
	robin := signInRobin(t, w, a.api)
	sam, samID := signInPerson(t, w, b.api, "sam@example.com", "Sam", actor.RoleMember)

	code, body := call(t, a.api, http.MethodPost, "/api/v1/spaces", robin, `{"name":"Marketing"}`)
	require.Equal(t, http.StatusCreated, code, body)
	var space struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &space))
	channels := "/api/v1/spaces/" + space.ID + "/channels"
	for _, addr := range []string{a.api, b.api} {
		code, body = call(t, addr, http.MethodGet, channels, sam, "")
		require.Equal(t, http.StatusNotFound, code, body)
	}

	withoutReports(t, w, "space_members", "space_members_facts_changed", func() {
		code, body = call(t, a.api, http.MethodPost, "/api/v1/spaces/"+space.ID+"/members", robin,
			`{"person_id":"`+samID.String()+`","level":"read"}`)
		require.Equal(t, http.StatusCreated, code, body)
		code, body = call(t, a.api, http.MethodGet, channels, sam, "")
		require.Equal(t, http.StatusOK, code, "the process that added Sam forgets at once: %s", body)
		code, _ = call(t, b.api, http.MethodGet, channels, sam, "")
		require.Equal(t, http.StatusNotFound, code, "the other process answers from memory: no change was reported")
	})
	_, err := w.db.Owner.Exec(ctx, `UPDATE space_members SET level = level WHERE principal_id = $1`, samID)
	require.NoError(t, err)
	eventuallyAnswers(t, b.api, channels, sam, http.StatusOK)
}
