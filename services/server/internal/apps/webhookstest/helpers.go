package webhookstest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/adapters/hmackey"
	chatapp "bothy/server/internal/chat/app"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/wire"
	"bothy/server/test/harness"
)

// Event is a durable event of the log: its seq and ID.
type Event struct {
	Seq        int64
	ID         ids.ID
	OccurredAt time.Time
}

// Post posts text in channel as the person or app of token and returns the
// message.created event the post appended.
func (w *World) Post(t testing.TB, token string, channel ids.ID, text string) Event {
	t.Helper()
	posted, err := w.Services.Chat.PostMessage(w.As(t, token), chatapp.PostMessage{ChannelID: channel, Text: text})
	require.NoError(t, err)
	var ev Event
	require.NoError(t, w.Services.DB.App.QueryRow(context.Background(),
		`SELECT seq, id, occurred_at FROM event_log WHERE type = 'message.created' AND resource_id = $1`, posted.Message.ID).
		Scan(&ev.Seq, &ev.ID, &ev.OccurredAt))
	return ev
}

// TrackerSubscription returns the subscription Tracker's install created.
func (w *World) TrackerSubscription(t testing.TB) apps.Subscription {
	t.Helper()
	subs, err := w.Services.Webhooks.ListSubscriptions(w.As(t, w.Robin.Token), w.Tracker.ID)
	require.NoError(t, err)
	require.Len(t, subs, 1)
	return subs[0]
}

// InsertDelivery inserts the delivery of ev to the subscription with
// status, the way the consumer round (pending, attempt 0) and the delivery
// job (the other statuses) leave rows: pending rows are due at
// nextAttemptAt, succeeded rows carry 204 and delivered_at, failed rows 410
// and gone, dead rows 500 and http_status after three attempts.
func (w *World) InsertDelivery(t testing.TB, subscription ids.ID, ev Event, status apps.DeliveryStatus, nextAttemptAt time.Time) apps.Delivery {
	t.Helper()
	now := clock.Stamp(w.Clock)
	d := apps.Delivery{ID: ids.New(), SubscriptionID: subscription, EventSeq: ev.Seq, EventID: ev.ID,
		EventOccurredAt: ev.OccurredAt.UTC(), Status: status, CreatedAt: now, UpdatedAt: now}
	switch status {
	case apps.DeliveryPending:
		d.NextAttemptAt = nextAttemptAt.UTC().Truncate(time.Microsecond)
	case apps.DeliverySucceeded:
		d.Attempt, d.ResponseCode, d.DeliveredAt = 1, 204, now
	case apps.DeliveryFailed:
		d.Attempt, d.ResponseCode, d.LastError = 1, 410, apps.LastErrorGone
	case apps.DeliveryDead:
		d.Attempt, d.ResponseCode, d.LastError = 3, 500, apps.LastErrorHTTPStatus
	}
	_, err := w.Services.DB.App.Exec(context.Background(), `
		INSERT INTO webhook_deliveries (id, subscription_id, event_seq, event_id, status, attempt, next_attempt_at,
			last_error, response_code, delivered_at, created_at, updated_at, event_occurred_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, NULLIF($8, ''), NULLIF($9, 0), $10, $11, $11, $12)`,
		d.ID, d.SubscriptionID, d.EventSeq, d.EventID, string(d.Status), d.Attempt, pg.NullTime(d.NextAttemptAt),
		string(d.LastError), d.ResponseCode, pg.NullTime(d.DeliveredAt), d.CreatedAt, d.EventOccurredAt)
	require.NoError(t, err)
	return d
}

// Delivery reads the delivery id as stored.
func (w *World) Delivery(t testing.TB, id ids.ID) apps.Delivery {
	t.Helper()
	var (
		d                 apps.Delivery
		status, lastError string
		next, delivered   *time.Time
		attempt, code     int
	)
	require.NoError(t, w.Services.DB.App.QueryRow(context.Background(), `
		SELECT id, subscription_id, event_seq, event_id, event_occurred_at, status, attempt, next_attempt_at,
		       coalesce(last_error, ''), coalesce(response_code, 0), delivered_at, created_at, updated_at
		FROM webhook_deliveries WHERE id = $1`, id).Scan(&d.ID, &d.SubscriptionID, &d.EventSeq, &d.EventID, &d.EventOccurredAt, &status,
		&attempt, &next, &lastError, &code, &delivered, &d.CreatedAt, &d.UpdatedAt))
	d.Status, d.LastError, d.Attempt, d.ResponseCode = apps.DeliveryStatus(status), apps.LastError(lastError), attempt, code
	if next != nil {
		d.NextAttemptAt = next.UTC()
	}
	if delivered != nil {
		d.DeliveredAt = delivered.UTC()
	}
	d.EventOccurredAt, d.CreatedAt, d.UpdatedAt = d.EventOccurredAt.UTC(), d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return d
}

// AtOnce stands in Scheduled's result for a job that is due at once: the job
// runtime inserts a job whose time is not in the future as available, with
// River's own insert time, so only its being due is meaningful.
var AtOnce = time.Time{}

// Scheduled returns, for every apps.webhook_deliver job of the subscription
// (its own or one it shares with others, DeliverTogether),
// its scheduled_at when it waits for a future time, or AtOnce when it was
// inserted due at once; jobs due at once come first, then the others oldest
// first.
func (w *World) Scheduled(t testing.TB, subscription ids.ID) []time.Time {
	t.Helper()
	rows, err := w.Services.DB.App.Query(context.Background(), `
		SELECT state = 'scheduled', scheduled_at FROM river_job
		WHERE kind = 'apps.webhook_deliver' AND (args->>'subscription_id' = $1 OR args->'subscription_ids' ? $1)
		ORDER BY state = 'scheduled', scheduled_at, id`, subscription.String())
	require.NoError(t, err)
	defer rows.Close()
	out := []time.Time{}
	for rows.Next() {
		var future bool
		var at time.Time
		require.NoError(t, rows.Scan(&future, &at))
		if !future {
			at = AtOnce
		}
		out = append(out, at.UTC())
	}
	require.NoError(t, rows.Err())
	return out
}

// ExpireLog moves the clock past sync.event_retention plus two partitions
// and runs the partition maintenance, so every event appended before the
// call leaves the log. Sessions outlive it (identity.session_ttl of the
// test configuration); step-ups do not.
func (w *World) ExpireLog(t testing.TB) {
	t.Helper()
	cfg := w.Services.Config
	w.Clock.Advance(cfg.Sync.EventRetention + 2*cfg.Sync.PartitionInterval)
	harness.CreatePartitions(t, w.Services.DB, cfg, w.Clock.Now())
}

// MasterKey returns the HMAC master key the webhook use cases derive the v1
// secrets from (webhook.hmac_master_key_ref), read the way the process
// reads it.
func (w *World) MasterKey(t testing.TB) []byte {
	t.Helper()
	p, err := wire.NewSecretsProvider(w.Services.Config)
	require.NoError(t, err)
	key, err := hmackey.New(p, w.Services.Config.Webhook.HMACMasterKeyRef).Key(context.Background())
	require.NoError(t, err)
	return key
}
