package domain_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/ids"
)

var (
	at        = time.Date(2026, 11, 30, 9, 15, 2, 123456000, time.UTC)
	space     = ids.MustParse("019ad3a0-7c00-7000-8000-00000000c001")
	channel   = ids.MustParse("019ad3a0-7c00-7000-8000-00000000c003")
	thread    = ids.MustParse("019ad3a0-7c00-7000-8000-00000000f001")
	messageID = ids.MustParse("019ad3a0-7c00-7000-8000-00000000d001")
	alex      = ids.MustParse("019ad3a0-7c00-7000-8000-0000000000a1")
)

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestPayloads(t *testing.T) {
	t.Parallel()
	m := domain.Message{ID: messageID, SpaceID: space, ChannelID: channel, AuthorID: alex, Text: "Hello Sam", CreatedAt: at}
	require.JSONEq(t, `{"message": {"id": "019ad3a0-7c00-7000-8000-00000000d001",
		"space_id": "019ad3a0-7c00-7000-8000-00000000c001", "channel_id": "019ad3a0-7c00-7000-8000-00000000c003",
		"author_id": "019ad3a0-7c00-7000-8000-0000000000a1", "text": "Hello Sam",
		"created_at": "2026-11-30T09:15:02.123456Z"}}`, encode(t, domain.MessageCreatedPayload(m)),
		"a message outside a thread has no thread_id member (never null)")

	m.ThreadID = thread
	m.UpdatedAt = at.Add(time.Minute)
	require.JSONEq(t, `{"message": {"id": "019ad3a0-7c00-7000-8000-00000000d001",
		"space_id": "019ad3a0-7c00-7000-8000-00000000c001", "channel_id": "019ad3a0-7c00-7000-8000-00000000c003",
		"thread_id": "019ad3a0-7c00-7000-8000-00000000f001",
		"author_id": "019ad3a0-7c00-7000-8000-0000000000a1", "text": "Hello Sam",
		"created_at": "2026-11-30T09:15:02.123456Z", "updated_at": "2026-11-30T09:16:02.123456Z"}}`,
		encode(t, domain.MessageUpdatedPayload(m)))

	m.Text = ""
	m.DeletedAt = at.Add(2 * time.Minute)
	require.JSONEq(t, `{"message": {"id": "019ad3a0-7c00-7000-8000-00000000d001",
		"space_id": "019ad3a0-7c00-7000-8000-00000000c001", "channel_id": "019ad3a0-7c00-7000-8000-00000000c003",
		"thread_id": "019ad3a0-7c00-7000-8000-00000000f001",
		"author_id": "019ad3a0-7c00-7000-8000-0000000000a1",
		"created_at": "2026-11-30T09:15:02.123456Z", "deleted_at": "2026-11-30T09:17:02.123456Z"}}`,
		encode(t, domain.MessageDeletedPayload(m)), "a deleted message carries no text")

	require.JSONEq(t, `{"thread": {"id": "019ad3a0-7c00-7000-8000-00000000f001",
		"space_id": "019ad3a0-7c00-7000-8000-00000000c001", "channel_id": "019ad3a0-7c00-7000-8000-00000000c003",
		"root_message_id": "019ad3a0-7c00-7000-8000-00000000d001", "created_at": "2026-11-30T09:15:02.123456Z"}}`,
		encode(t, domain.ThreadCreatedPayload(domain.Thread{ID: thread, SpaceID: space, ChannelID: channel,
			RootMessageID: messageID, CreatedBy: alex, CreatedAt: at})))

	require.JSONEq(t, `{"channel": {"id": "019ad3a0-7c00-7000-8000-00000000c003",
		"space_id": "019ad3a0-7c00-7000-8000-00000000c001", "name": "Eskalation", "created_at": "2026-11-30T09:15:02.123456Z"}}`,
		encode(t, domain.ChannelCreatedPayload(domain.Channel{ID: channel, SpaceID: space, Name: "Eskalation", CreatedBy: alex, CreatedAt: at})))
}

func TestPositionRoundTrip(t *testing.T) {
	t.Parallel()
	p := domain.PositionOf(domain.Message{ID: messageID, CreatedAt: at})
	b, err := json.Marshal(p)
	require.NoError(t, err)
	var back domain.Position
	require.NoError(t, json.Unmarshal(b, &back))
	require.True(t, p.CreatedAt.Equal(back.CreatedAt))
	require.Equal(t, p.ID, back.ID)
}
