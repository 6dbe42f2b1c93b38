package apps

import (
	"context"
	"time"

	"bothy/server/internal/kernel/ids"
)

// This file is the port of the bulk recovery of outgoing webhooks
// (recoverWebhookDeliveries, ADR 0079, D-M2-26-50 to D-M2-26-53): the
// failed and dead deliveries of a time window become pending again, each as
// a redelivery would leave it.

// RecoverDeliveries is the input of recoverWebhookDeliveries: the window
// [Since, Until) on the deliveries' created_at.
type RecoverDeliveries struct {
	// SubscriptionID names the subscription.
	SubscriptionID ids.ID
	// Since starts the window (included). It must not lie in the future,
	// nor before now minus sync.event_retention.
	Since time.Time
	// Until ends the window (excluded); zero, or a time after now, means
	// now. It must lie after Since.
	Until time.Time
}

// Recovery is the answer of recoverWebhookDeliveries.
type Recovery struct {
	// Recovered counts the deliveries that are pending again, at most
	// webhook.recover_max_deliveries.
	Recovered int
	// HasMore is true when more deliveries of the window could be
	// recovered: the same request again recovers the next ones, because a
	// recovered delivery's created_at moved to now and left the window.
	HasMore bool
	// Since and Until are the window as applied (Until cut to now).
	Since, Until time.Time
	// FirstSeq and LastSeq are the lowest and highest event_seq recovered;
	// zero when Recovered is zero.
	FirstSeq, LastSeq int64
}

// DeliveryRecovery is the port of the bulk recovery. The principal comes
// from ctx (kernel/actor).
type DeliveryRecovery interface {
	// RecoverDeliveries makes the failed and dead deliveries of the
	// subscription whose created_at lies in the window and whose event is
	// still in the log pending again, lowest event_seq first, at most
	// webhook.recover_max_deliveries of them (webhook_out.redeliver,
	// owner, audited).
	//
	// Errors (*errs.Error): not_found for an unknown subscription and for
	// anyone but an owner; validation_failed with reason invalid_window
	// (/since in_future, /until not_after_since); conflict event_expired
	// when the window begins before the log's retention; conflict
	// app_not_installed after an uninstall; internal.
	RecoverDeliveries(ctx context.Context, cmd RecoverDeliveries) (Recovery, error)
}
