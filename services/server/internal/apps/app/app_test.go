package app_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/test/harness"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// testBundle is the world of 07 10 with the apps use cases under test.
type testBundle struct {
	*harness.World
	svc   *app.Service
	hooks *recordingHooks
}

func setup(t *testing.T, opts ...harness.Option) *testBundle {
	t.Helper()
	hooks := &recordingHooks{}
	opts = append(opts, harness.WithHooks(func(s *harness.Services) app.InstallationHooks {
		hooks.store = s.AppsStore
		return hooks
	}))
	w := harness.BuildMatrixWorld(t, pgtest.New(t), opts...)
	hooks.reset()
	return &testBundle{World: w, svc: w.Services.Apps, hooks: hooks}
}

// robin acts as Robin with the facts of now.
func (b *testBundle) robin(t *testing.T) context.Context { return b.As(t, b.Robin.Token) }

// helper registers the app Helper (no webhook delivery, every scope) as
// Robin and returns it, not installed.
func (b *testBundle) helper(t *testing.T) domain.App {
	t.Helper()
	a, err := b.svc.RegisterApp(b.robin(t), app.RegisterApp{Manifest: domain.Manifest{
		Name:     "Helper",
		Scopes:   []string{"events:subscribe", "messages:read", "messages:write", "channels:read"},
		Events:   []string{"message.created", "channel.created", "app.installation.updated"},
		Delivery: domain.Delivery{Mode: domain.DeliveryNone},
	}})
	require.NoError(t, err)
	return a
}

// staleStepUp moves the clock past identity.step_up_max_age.
func (b *testBundle) staleStepUp() {
	b.Clock.Advance(b.Services.Config.Identity.StepUpMaxAge + time.Second)
}

// allows returns the allow entries of action on the app appID.
func (b *testBundle) allows(t *testing.T, action string, appID ids.ID) []audittest.Row {
	t.Helper()
	return audittest.List(t, b.Services.DB.App, audittest.Filter{Action: action, ResourceKind: "app", ResourceID: appID, Outcome: "allow"})
}

// installationEvent is one app.installation.updated row of event_log.
type installationEvent struct {
	ResourceID, Audience, Actor ids.ID
	ReceiveAction               string
	Payload                     map[string]any
}

// installationEvents returns the app.installation.updated events of the
// installation, in seq order.
func (b *testBundle) installationEvents(t *testing.T, installationID ids.ID) []installationEvent {
	t.Helper()
	rows, err := b.Services.DB.App.Query(context.Background(), `
		SELECT resource_id, audience_principal_id, actor_id, receive_action, payload::text
		FROM event_log WHERE type = 'app.installation.updated' AND resource_id = $1 ORDER BY seq`, installationID)
	require.NoError(t, err)
	defer rows.Close()
	out := []installationEvent{}
	for rows.Next() {
		var (
			ev  installationEvent
			raw string
		)
		require.NoError(t, rows.Scan(&ev.ResourceID, &ev.Audience, &ev.Actor, &ev.ReceiveAction, &raw))
		require.NoError(t, json.Unmarshal([]byte(raw), &ev.Payload))
		out = append(out, ev)
	}
	require.NoError(t, rows.Err())
	return out
}

// current returns the app's current installation (false when none).
func (b *testBundle) current(t *testing.T, appID ids.ID) (apps.Installation, bool) {
	t.Helper()
	inst, ok, err := b.Services.AppsStore.CurrentInstallation(context.Background(), appID, apps.NoLock)
	require.NoError(t, err)
	return inst, ok
}

// recordingHooks stands in for the webhook work's hooks (the webhook use
// cases implement app.InstallationHooks): it records each call with what
// the unit of work shows of the installation at that moment, and fails
// when told to.
type recordingHooks struct {
	store interface {
		Installation(context.Context, ids.ID, apps.Lock) (apps.Installation, bool, error)
	}
	mu    sync.Mutex
	calls []hookCall
	fail  error
}

type hookCall struct {
	name  string
	inst  apps.Installation
	seen  apps.InstallationState // the row as the hook's ctx reads it
	actor actor.Principal
	mode  domain.DeliveryMode
}

func (h *recordingHooks) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls, h.fail = nil, nil
}

func (h *recordingHooks) record(ctx context.Context, name string, inst apps.Installation, mode domain.DeliveryMode) error {
	got, ok, err := h.store.Installation(ctx, inst.ID, apps.ForShare)
	if err != nil {
		return err
	}
	if !ok {
		got.State = "absent"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, hookCall{name: name, inst: inst, seen: got.State, actor: actor.From(ctx), mode: mode})
	return h.fail
}

func (h *recordingHooks) Installed(ctx context.Context, inst apps.Installation, m domain.Manifest) error {
	return h.record(ctx, "installed", inst, m.Delivery.Mode)
}

func (h *recordingHooks) Uninstalled(ctx context.Context, inst apps.Installation) error {
	return h.record(ctx, "uninstalled", inst, "")
}

func (h *recordingHooks) Resumed(ctx context.Context, inst apps.Installation) error {
	return h.record(ctx, "resumed", inst, "")
}
