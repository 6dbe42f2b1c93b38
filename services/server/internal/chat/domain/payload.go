package domain

import (
	"time"
)

// payloadTime is the form of times in event payloads: RFC 3339 in UTC with
// exactly six fractional digits, like occurred_at of the envelope.
const payloadTime = "2006-01-02T15:04:05.000000Z07:00"

func stamp(t time.Time) string { return t.UTC().Format(payloadTime) }

// The payloads of the durable events chat appends
// (docs/spec/04-sync-protocol.md 2.2): JSON objects without null members,
// absent values omitted. They carry only what a receiver allowed the
// receive action on the resource may see.

// messageObject is the "message" member shared by the message events.
func messageObject(m Message) map[string]any {
	o := map[string]any{
		"id":         m.ID,
		"space_id":   m.SpaceID,
		"channel_id": m.ChannelID,
		"author_id":  m.AuthorID,
		"created_at": stamp(m.CreatedAt),
	}
	if !m.ThreadID.IsZero() {
		o["thread_id"] = m.ThreadID
	}
	return o
}

// MessageCreatedPayload is the payload of message.created:
// {message: {id, space_id, channel_id, thread_id?, author_id, text,
// created_at}}.
func MessageCreatedPayload(m Message) map[string]any {
	o := messageObject(m)
	o["text"] = m.Text
	return map[string]any{"message": o}
}

// MessageUpdatedPayload is the payload of message.updated: the members of
// message.created plus updated_at.
func MessageUpdatedPayload(m Message) map[string]any {
	o := messageObject(m)
	o["text"] = m.Text
	o["updated_at"] = stamp(m.UpdatedAt)
	return map[string]any{"message": o}
}

// MessageDeletedPayload is the payload of message.deleted: {message: {id,
// space_id, channel_id, thread_id?, author_id, created_at, deleted_at}},
// without text.
func MessageDeletedPayload(m Message) map[string]any {
	o := messageObject(m)
	o["deleted_at"] = stamp(m.DeletedAt)
	return map[string]any{"message": o}
}

// ThreadCreatedPayload is the payload of thread.created: {thread: {id,
// space_id, channel_id, root_message_id, created_at}}.
func ThreadCreatedPayload(t Thread) map[string]any {
	return map[string]any{"thread": map[string]any{
		"id":              t.ID,
		"space_id":        t.SpaceID,
		"channel_id":      t.ChannelID,
		"root_message_id": t.RootMessageID,
		"created_at":      stamp(t.CreatedAt),
	}}
}

// ChannelCreatedPayload is the payload of channel.created: {channel: {id,
// space_id, name, created_at}}.
func ChannelCreatedPayload(c Channel) map[string]any {
	return map[string]any{"channel": map[string]any{
		"id":         c.ID,
		"space_id":   c.SpaceID,
		"name":       c.Name,
		"created_at": stamp(c.CreatedAt),
	}}
}
