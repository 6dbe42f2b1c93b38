package wire_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/adapters/deliveryjobs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/jobs"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/platform/secrets/stack"
	eventsync "bothy/server/internal/sync"
	"bothy/server/internal/wire"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// newProcess assembles a process of role over a fresh test database, with
// generated secrets in a temporary folder, exactly as `bothy serve` does.
func newProcess(t *testing.T, role wire.Role) *wire.Process {
	t.Helper()
	p, err := wire.NewProcess(context.Background(), testConfig(t, nil), role, wire.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	return p
}

// world is a fresh test database and a folder of generated secrets that
// one or more processes share.
type world struct {
	url, dir string
	db       *pgtest.DB
}

func newWorld(t *testing.T) world {
	t.Helper()
	db := pgtest.New(t)
	dir := filepath.Join(t.TempDir(), "secrets")
	require.NoError(t, os.Mkdir(dir, 0o700))
	_, err := stack.Init(dir, nil)
	require.NoError(t, err)
	return world{url: db.AppURL, dir: dir, db: db}
}

// config loads the configuration of a process in w; env adds BOTHY_
// variables.
func (w world) config(t *testing.T, env ...string) *wire.Config {
	t.Helper()
	cfg, err := wire.Load("", append([]string{"BOTHY_DATABASE_URL=" + w.url, "BOTHY_SECRETS_DIR=" + w.dir}, env...))
	require.NoError(t, err)
	return cfg
}

// testConfig loads the configuration of a process over a fresh test
// database with generated secrets in a temporary folder; dbURL rewrites the
// database URL (nil keeps it) and env adds BOTHY_ variables.
func testConfig(t *testing.T, dbURL func(string) string, env ...string) *wire.Config {
	t.Helper()
	w := newWorld(t)
	if dbURL != nil {
		w.url = dbURL(w.url)
	}
	return w.config(t, env...)
}

func TestProcessServesReadinessAndTheAPI(t *testing.T) {
	t.Parallel()
	p := newProcess(t, wire.RoleAPI)
	require.NoError(t, p.Modules().Instance.Ensure(context.Background()))
	for path, want := range map[string]int{
		"/readyz":                       http.StatusOK,
		"/livez":                        http.StatusOK,
		"/api/v1/instance/webhook-keys": http.StatusOK,
		"/api/v1/me":                    http.StatusUnauthorized,
	} {
		rec := httptest.NewRecorder()
		p.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		require.Equal(t, want, rec.Code, path)
	}
}

func TestWorkerRoleHasConsumersAndAPIRoleHasNone(t *testing.T) {
	t.Parallel()
	require.NotNil(t, newProcess(t, wire.RoleWorker).Consumers())
	require.Nil(t, newProcess(t, wire.RoleAPI).Consumers())
}

func TestWebhookConsumerRegisteredInWorkerRoles(t *testing.T) {
	t.Parallel()
	for role, runs := range map[wire.Role]bool{wire.RoleWorker: true, wire.RoleAll: true, wire.RoleAPI: false} {
		require.Equal(t, runs, newProcess(t, role).Runs(eventsync.ConsumerWebhooks), role)
	}
}

func TestWebhookJobRegistration(t *testing.T) {
	t.Parallel()
	require.NoError(t, jobs.ValidateArgsType(deliveryjobs.WebhookDeliver{SubscriptionID: ids.New()}))
	for _, role := range []wire.Role{wire.RoleAPI, wire.RoleWorker, wire.RoleAll} {
		opts, ok := newProcess(t, role).Jobs().Registered(deliveryjobs.KindWebhookDeliver)
		require.True(t, ok, "%s registers %s", role, deliveryjobs.KindWebhookDeliver)
		require.Equal(t, jobs.QueueDelivery, opts.Queue, role)
	}
}
