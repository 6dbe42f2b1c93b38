package app_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/instance"
)

// TestDeliveryRunEndsWithoutAClaimThatFindsNothing (D-M2-26-67): the
// record of a run's last pending delivery tells that nothing else is
// pending, so the run ends without one more claim; a head a later round
// creates is delivered by the run of the job that round leaves.
func TestDeliveryRunEndsWithoutAClaimThatFindsNothing(t *testing.T) {
	t.Parallel()
	c := newQueryLog()
	b := deliveryWorld(t, options{tracer: c})
	b.post(t, b.w.Alex, b.w.Eskalation, "Sam, the printer is back")
	b.post(t, b.w.Alex, b.w.Eskalation, "Robin, so is the scanner")
	b.runRound(t)
	c.reset()
	b.deliver(t, b.sub)
	b.recv.wait(t, 2)
	require.Equal(t, 2, c.count("WebhookDeliveryRecordAttempt"))
	require.Equal(t, 2, c.count("WebhookDeliveryClaimHead"), "one claim per head, none after the last record")

	b.post(t, b.w.Alex, b.w.Eskalation, "Alex, and the coffee machine")
	b.runRound(t)
	b.deliver(t, b.sub)
	got := b.recv.wait(t, 3)
	require.Len(t, got, 3)
	for _, r := range b.deliveries(t, b.sub) {
		require.Equal(t, "succeeded", r.Status, "seq %d", r.EventSeq)
	}
}

// countingState counts the reads of the instance record.
type countingState struct {
	instance.State
	loads atomic.Int32
}

func (s *countingState) Load(ctx context.Context) (instance.Record, error) {
	s.loads.Add(1)
	return s.State.Load(ctx)
}

// TestDeliverySyncEpochIsReadOncePerWorker (D-M2-26-66): the delivery path
// reads instance.sync_epoch once, in the first run that signs, and every
// later run's body carries the same epoch.
func TestDeliverySyncEpochIsReadOncePerWorker(t *testing.T) {
	t.Parallel()
	counter := &countingState{}
	b := deliveryWorld(t, options{state: func(s instance.State) instance.State { counter.State = s; return counter }})
	b.post(t, b.w.Alex, b.w.Eskalation, "Sam, first")
	b.runRound(t)
	b.deliver(t, b.sub)
	b.post(t, b.w.Alex, b.w.Eskalation, "Sam, second")
	b.runRound(t)
	b.deliver(t, b.sub)
	got := b.recv.wait(t, 2)
	require.Len(t, got, 2)
	require.Equal(t, int32(1), counter.loads.Load(), "two runs, one read")
	rec, err := b.w.Services.Instance.Load(bg)
	require.NoError(t, err)
	for _, r := range got {
		var body struct {
			SyncEpoch string `json:"sync_epoch"`
		}
		require.NoError(t, json.Unmarshal(r.body, &body))
		require.Equal(t, rec.SyncEpoch.String(), body.SyncEpoch)
	}
}
