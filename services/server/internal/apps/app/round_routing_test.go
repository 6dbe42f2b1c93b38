package app_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/ids"
)

// byName counts the statements of each sqlc query.
type byName struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *byName) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if rest, ok := strings.CutPrefix(d.SQL, "-- name: "); ok {
		name, _, _ := strings.Cut(rest, " ")
		c.mu.Lock()
		c.calls[name]++
		c.mu.Unlock()
	}
	return ctx
}

func (c *byName) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *byName) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.calls)
}

func (c *byName) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[name]
}

// TestRoundRoutesAllItsEventsWithThreeStatements (D-M2-26-65): a round
// whose events lie in many places routes them together: one read of the
// apps that can see each place, one read of the candidates among those
// apps, one read of their grants, whatever the number of events and
// places; and each event still reaches exactly the apps granted on its
// channel (a fleet app its own channel, Tracker Eskalation, nobody
// Allgemein).
func TestRoundRoutesAllItsEventsWithThreeStatements(t *testing.T) {
	t.Parallel()
	c := &byName{calls: map[string]int{}}
	b := deliveryWorld(t, options{tracer: c})
	b.addFleet(t, 3)
	rows, err := b.db.App.Query(bg, `SELECT id FROM channels WHERE name LIKE 'fleet-%' ORDER BY id`)
	require.NoError(t, err)
	fleet, err := pgx.CollectRows(rows, pgx.RowTo[ids.ID])
	require.NoError(t, err)
	require.Len(t, fleet, 3)
	channels := append([]ids.ID{b.w.Eskalation, b.w.Allgemein}, fleet...)
	b.appendEventsIn(t, 2*len(channels), channels)

	c.reset()
	require.Equal(t, 2*len(channels), b.runRound(t))
	require.Equal(t, 1, c.count("GrantHoldersByPlaces"), "the apps that can see each of the five places, in one read")
	require.Equal(t, 1, c.count("WebhookSubscriptionDeliveryCandidatesOf"), "the candidates of every app reached, in one read")
	require.Equal(t, 1, c.count("GrantFactsBySubjects"), "the grants of every candidate's app, in one read")

	var made, matching int
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT count(*) FROM webhook_deliveries`).Scan(&made))
	require.NoError(t, b.db.App.QueryRow(bg, `
		SELECT count(*) FROM webhook_deliveries d
		JOIN event_log e ON e.seq = d.event_seq
		JOIN webhook_subscriptions s ON s.id = d.subscription_id
		JOIN app_installations i ON i.id = s.app_installation_id
		JOIN apps a ON a.id = i.app_id
		JOIN grants g ON g.subject_principal_id = a.principal_id AND g.channel_id = e.channel_id`).Scan(&matching))
	require.Equal(t, 8, made, "two events each in Eskalation and the three fleet channels; none for Allgemein")
	require.Equal(t, made, matching, "every row goes to an app granted on its event's channel")
	require.Len(t, b.deliveries(t, b.sub), 2, "Tracker gets the two Eskalation events")
}
