package app_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/adapters/deliveryjobs"
	"bothy/server/internal/apps/adapters/hmackey"
	appspg "bothy/server/internal/apps/adapters/postgres"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/platform/pg"
	syncpg "bothy/server/internal/sync/adapters/postgres"
	"bothy/server/internal/wire"
)

// eventLogReads counts the statements that read event_log.
type eventLogReads struct{ n atomic.Int64 }

func (r *eventLogReads) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "FROM event_log") {
		r.n.Add(1)
	}
	return ctx
}

func (r *eventLogReads) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// A page of deliveries names the type of each retained event with one read
// of the log, not one read per item (issue 6 item 4: no N+1 reads).
func TestListDeliveriesReadsEventTypesOnce(t *testing.T) {
	t.Parallel()
	b := deliveryWorld(t, options{})
	b.setState(t, b.sub, apps.SubscriptionPaused)
	const posted = 5
	b.appendEvents(t, posted)
	b.drain(t)

	reads := &eventLogReads{}
	pool := b.db.TracedApp(t, reads, 0)
	s := b.w.Services
	provider, err := wire.NewSecretsProvider(s.Config)
	require.NoError(t, err)
	svc, err := app.NewWebhookService(app.WebhookDeps{
		UnitOfWork: pg.NewUnitOfWork(pool, s.Config.Database.TxRetryMax, s.Config.Database.LockTimeout),
		Authorizer: s.Authorizer, Audit: s.Audit, Apps: appspg.New(pool), Subscriptions: appspg.NewSubscriptionStore(pool), Keys: s.Keys,
		Log: syncpg.NewLog(pool), MasterKey: hmackey.New(provider, s.Config.Webhook.HMACMasterKeyRef),
		Scheduler: deliveryjobs.NewScheduler(b.runtime.Inserter()), Clock: b.clock,
	}, app.WebhookOptions{AllowedHosts: s.Config.Webhook.AllowedHosts, PageSizeDefault: 50, PageSizeMax: 100, RateLimitMax: 100})
	require.NoError(t, err)

	page, err := svc.ListDeliveries(b.robin(t), apps.DeliveryQuery{SubscriptionID: b.sub})
	require.NoError(t, err)
	require.Len(t, page.Items, posted)
	for _, d := range page.Items {
		require.Equal(t, "message.created", d.EventType, "delivery of seq %d", d.EventSeq)
	}
	require.Equal(t, int64(1), reads.n.Load(), "one read of event_log for the whole page")
}
