// Package webhookstest adds what the tests of the owner side of outgoing
// webhooks need to the shared test world of services/server/test/harness
// (BuildMatrixWorld: Robin, Alex, Sam, Support with Allgemein and
// Eskalation, Marketing, Tracker installed with G-6). The world's modules
// are built by wire.BuildModules, so the webhook use cases are the apps
// module's installation hooks and Tracker's install has created its
// subscription; the helpers write and read the rows the delivery engine
// writes in a running server (deliveries, jobs, retention).
package webhookstest

import (
	"testing"
	"time"

	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/wire"
	"bothy/server/test/harness"

	"github.com/stretchr/testify/require"
)

// TrackerEventsURL is the events_url of Tracker's manifest.
const TrackerEventsURL = "https://hooks.example.com/bothy/events"

// World is the harness world with the webhook helpers.
type World struct {
	*harness.World
}

// Build builds the harness world in db with the test configuration of the
// webhook tests: webhook.allowed_hosts lists hooks.example.com and
// hooks.example.com:8443, and sessions (identity.session_ttl) outlive
// ExpireLog. change, when not nil, changes the configuration further.
func Build(t testing.TB, db *pgtest.DB, change func(*wire.Config)) *World {
	t.Helper()
	hosts, err := hostlist.Parse([]string{"hooks.example.com", "hooks.example.com:8443"})
	require.NoError(t, err)
	w := harness.BuildMatrixWorld(t, db, harness.WithConfig(func(cfg *wire.Config) {
		cfg.Webhook.AllowedHosts = hosts
		cfg.Identity.SessionTTL = 365 * 24 * time.Hour
		if change != nil {
			change(cfg)
		}
	}))
	require.Equal(t, TrackerEventsURL, harness.TrackerManifest().Delivery.EventsURL)
	return &World{World: w}
}
