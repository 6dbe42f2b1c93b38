package wire

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.yaml.in/yaml/v3"

	"bothy/server/api"
	azdomain "bothy/server/internal/authz/domain"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/jobs"
)

// composedServer returns the strict server the role assembly mounts
// (newAPIServer over BuildModules), built from the default configuration
// over a pool that never connects: composing opens nothing.
func composedServer(t *testing.T) *apiServer {
	t.Helper()
	cfg, err := Load("", []string{"BOTHY_DATABASE_URL=postgres://bothy_app@127.0.0.1:1/bothy", "BOTHY_SECRETS_DIR=" + t.TempDir()})
	require.NoError(t, err)
	pool, err := pgxpool.New(context.Background(), cfg.Database.URL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rt, err := jobs.New(jobs.Options{Role: string(RoleAPI), FetchPollInterval: cfg.Jobs.FetchPollInterval, FetchCooldown: cfg.Jobs.FetchCooldown},
		jobs.Deps{Pool: pool, Log: log})
	require.NoError(t, err)
	sp, err := NewSecretsProvider(cfg)
	require.NoError(t, err)
	m, err := BuildModules(cfg, ModuleDeps{Pool: pool, Secrets: sp, Clock: clock.Real{}, Meter: noop.NewMeterProvider(),
		Jobs: rt.Inserter(), Tracer: tracenoop.NewTracerProvider(), Logger: log})
	require.NoError(t, err)
	cursors, err := httpserver.NewCursors([]byte(strings.Repeat("k", httpserver.MinCursorKeyLen)))
	require.NoError(t, err)
	srv, err := newAPIServer(cfg, m, cursors)
	require.NoError(t, err)
	return srv
}

// operationsTable is api/operations.yaml: the enabled operations and the
// later ones with their milestone and, when known, their ticket.
type operationsTable struct {
	Enabled []string         `yaml:"enabled"`
	Later   []map[string]any `yaml:"later"`
}

// TestRegisterCheckWebhookOperations is the route registration check AZ-P1
// (M1-17, M1-25) over the real server, part of make register-check:
// api.VerifyRegistrations accepts the composed apiServer with the seven
// webhook operations enabled, each served by a handler set that is not nil
// and authorised with a catalogue action that is not deferred (the deferred
// list is empty since webhook_out.deliver got its requirement); the two
// agent subscription operations stay under later with milestone M2 and no
// ticket (out of scope of M2-26). A server without the webhook handler set
// is refused, naming each of its operations.
func TestRegisterCheckWebhookOperations(t *testing.T) {
	t.Parallel()
	srv := composedServer(t)
	require.Empty(t, azdomain.DeferredIDs(), "no action is deferred")
	require.NoError(t, api.VerifyRegistrations(api.Operations(), azdomain.IDs(), azdomain.DeferredIDs(), srv))

	webhookOps := []string{"createWebhookSubscription", "deleteWebhookSubscription", "getWebhookKeys", "listWebhookDeliveries",
		"listWebhookSubscriptions", "redeliverWebhook", "updateWebhookSubscription"}
	served := map[string]api.Operation{}
	for _, op := range api.Operations() {
		served[op.ID] = op
	}
	for _, id := range webhookOps {
		op, ok := served[id]
		require.True(t, ok, "%s is enabled", id)
		require.Contains(t, azdomain.IDs(), op.Action, id)
		require.NotContains(t, azdomain.DeferredIDs(), op.Action, id)
		require.True(t, reflect.ValueOf(srv).MethodByName(op.Handler).IsValid(), id)
	}

	raw, err := os.ReadFile(filepath.Join("..", "..", "api", "operations.yaml"))
	require.NoError(t, err)
	var table operationsTable
	require.NoError(t, yaml.Unmarshal(raw, &table))
	for _, id := range webhookOps {
		require.Contains(t, table.Enabled, id)
	}
	later := map[string]map[string]any{}
	for _, entry := range table.Later {
		id, _ := entry["operationId"].(string)
		later[id] = entry
	}
	for _, id := range []string{"createAgentWebhookSubscription", "listAgentWebhookSubscriptions"} {
		_, enabled := served[id]
		require.False(t, enabled, "%s is not served", id)
		require.Equal(t, map[string]any{"operationId": id, "milestone": "M2"}, later[id], "%s: later, milestone M2, no ticket", id)
	}

	// The check bites on the real server: without the webhook handler set
	// every operation it serves is refused.
	without := *srv
	without.webhookAPI = nil
	err = api.VerifyRegistrations(api.Operations(), azdomain.IDs(), azdomain.DeferredIDs(), &without)
	var re *api.RegistrationError
	require.ErrorAs(t, err, &re)
	var refused []string
	for _, p := range re.Problems {
		id, _, _ := strings.Cut(p, ":")
		refused = append(refused, id)
	}
	require.ElementsMatch(t, []string{"createWebhookSubscription", "deleteWebhookSubscription", "listWebhookDeliveries",
		"listWebhookSubscriptions", "redeliverWebhook", "updateWebhookSubscription"}, refused)
}
