package sync_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
	eventsync "bothy/server/internal/sync"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fullEvent has every member of the envelope set; the IDs are fixed so the
// golden file is stable.
func fullEvent() eventsync.Event {
	return eventsync.Event{
		Seq:                 42,
		ID:                  ids.MustParse("019ad3a0-7c00-7000-8000-000000000001"),
		Type:                eventlog.AppInstallationUpdated,
		ResourceKind:        authorize.KindAppInstallation,
		ResourceID:          ids.MustParse("019ad3a0-7c00-7000-8000-000000000002"),
		SpaceID:             ids.MustParse("019ad3a0-7c00-7000-8000-000000000003"),
		ChannelID:           ids.MustParse("019ad3a0-7c00-7000-8000-000000000004"),
		ThreadID:            ids.MustParse("019ad3a0-7c00-7000-8000-000000000005"),
		AudiencePrincipalID: ids.MustParse("019ad3a0-7c00-7000-8000-000000000006"),
		ReceiveAction:       authorize.ReceiveSelf,
		ActorID:             ids.MustParse("019ad3a0-7c00-7000-8000-000000000007"),
		Payload:             json.RawMessage(`{"state": "active", "note": "Alex & Sam <ok>"}`),
		Truncated:           true,
		OccurredAt:          time.Date(2026, 11, 30, 9, 15, 2, 123456789, time.FixedZone("CET", 3600)),
	}
}

func TestEnvelopeMatchesGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file string
		ev         eventsync.Event
		fields     eventsync.DeliveryFields
	}{
		{"an event with every member and a sync epoch", "envelope_full.golden.json", fullEvent(),
			eventsync.DeliveryFields{SyncEpoch: ids.MustParse("019ad3a0-7c00-7000-8000-000000000008")}},
		{"a channel event without optional members", "envelope_minimal.golden.json", eventsync.Event{
			Seq:           7,
			ID:            ids.MustParse("019ad3a0-7c00-7000-8000-000000000011"),
			Type:          eventlog.ChannelCreated,
			ResourceKind:  authorize.KindChannel,
			ResourceID:    ids.MustParse("019ad3a0-7c00-7000-8000-000000000012"),
			ReceiveAction: authorize.ChannelRead,
			OccurredAt:    time.Date(2026, 11, 30, 9, 15, 2, 0, time.UTC),
		}, eventsync.DeliveryFields{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := json.MarshalIndent(tc.ev.Envelope(tc.fields), "", "  ")
			require.NoError(t, err)
			got = append(got, '\n')
			path := filepath.Join("testdata", tc.file)
			if *update {
				require.NoError(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
		})
	}
}

func TestEnvelopeDeliveryFieldsOnlyWhenGiven(t *testing.T) {
	t.Parallel()
	ev := fullEvent()
	without, err := json.Marshal(ev.Envelope(eventsync.DeliveryFields{}))
	require.NoError(t, err)
	require.NotContains(t, decode(t, without), "sync_epoch")

	epoch := ids.MustParse("019ad3a0-7c00-7000-8000-000000000008")
	with, err := json.Marshal(ev.Envelope(eventsync.DeliveryFields{SyncEpoch: epoch}))
	require.NoError(t, err)
	require.Equal(t, epoch.String(), decode(t, with)["sync_epoch"])
}

func TestEnvelopeOccurredAtIsUTCWithMicroseconds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		at   time.Time
		want string
	}{
		{"nanoseconds are cut to microseconds", time.Date(2026, 11, 30, 9, 15, 2, 123456789, time.UTC), "2026-11-30T09:15:02.123456Z"},
		{"a whole second keeps six digits", time.Date(2026, 11, 30, 9, 15, 2, 0, time.UTC), "2026-11-30T09:15:02.000000Z"},
		{"another zone is rendered in UTC", time.Date(2026, 11, 30, 10, 15, 2, 5000, time.FixedZone("CET", 3600)), "2026-11-30T09:15:02.000005Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, eventsync.Event{OccurredAt: tc.at}.Envelope(eventsync.DeliveryFields{}).OccurredAt)
		})
	}
}

// TestEnvelopeNeverContainsNull is a property test over every combination of
// empty and set optional fields (2^10 cases, all of them): the rendered
// envelope never contains a JSON null, always has the required members, and
// has an optional member exactly when its field is set.
func TestEnvelopeNeverContainsNull(t *testing.T) {
	t.Parallel()
	full := fullEvent()
	epoch := ids.MustParse("019ad3a0-7c00-7000-8000-000000000008")
	const fields = 10
	for mask := 0; mask < 1<<fields; mask++ {
		set := func(i int) bool { return mask&(1<<i) != 0 }
		var ev eventsync.Event
		var df eventsync.DeliveryFields
		ev.Seq, ev.Type, ev.ResourceKind = full.Seq, full.Type, full.ResourceKind
		if set(0) {
			ev.ID = full.ID
		}
		if set(1) {
			ev.ResourceID = full.ResourceID
		}
		if set(2) {
			ev.SpaceID = full.SpaceID
		}
		if set(3) {
			ev.ChannelID = full.ChannelID
		}
		if set(4) {
			ev.ThreadID = full.ThreadID
		}
		if set(5) {
			ev.AudiencePrincipalID = full.AudiencePrincipalID
		}
		if set(6) {
			ev.ActorID = full.ActorID
		}
		if set(7) {
			ev.Payload = full.Payload
		}
		if set(8) {
			ev.Truncated = true
		}
		if set(9) {
			df.SyncEpoch = epoch
		}
		b, err := json.Marshal(ev.Envelope(df))
		require.NoError(t, err)
		require.False(t, containsNull(t, b), "mask %b: %s", mask, b)
		m := decode(t, b)
		for _, k := range []string{"id", "seq", "type", "occurred_at", "resource", "payload"} {
			require.Contains(t, m, k, "mask %b", mask)
		}
		res := m["resource"].(map[string]any)
		require.Equal(t, string(full.ResourceKind), res["kind"])
		for i, k := range map[int]string{2: "space_id", 3: "channel_id", 4: "thread_id"} {
			_, ok := res[k]
			require.Equal(t, set(i), ok, "mask %b: resource.%s", mask, k)
		}
		for i, k := range map[int]string{5: "audience", 6: "actor", 8: "truncated", 9: "sync_epoch"} {
			_, ok := m[k]
			require.Equal(t, set(i), ok, "mask %b: %s", mask, k)
		}
		require.IsType(t, map[string]any{}, m["payload"], "mask %b: payload is an object", mask)
	}
}

func TestEnvelopePayloadNullBecomesEmptyObject(t *testing.T) {
	t.Parallel()
	for _, raw := range []json.RawMessage{nil, json.RawMessage(""), json.RawMessage("null"), json.RawMessage(" null ")} {
		b, err := json.Marshal(eventsync.Event{Payload: raw}.Envelope(eventsync.DeliveryFields{}))
		require.NoError(t, err)
		require.Equal(t, map[string]any{}, decode(t, b)["payload"])
	}
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// containsNull walks the decoded JSON; a textual search could be fooled by a
// string value "null".
func containsNull(t *testing.T, b []byte) bool {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	var walk func(any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case nil:
			return true
		case map[string]any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		case []any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}
