-- Messages (migration 00025). A deleted message keeps its row and loses
-- its text (messages_deleted_has_no_text); pages read the partial index
-- messages_channel_page_idx of the live rows, newest first.

-- name: MessageInsert :exec
-- The messages of one post or of a group of posts (ADR 0099): one
-- statement whatever their number, element i of each array being the
-- column of message i (set-returning functions of one select list run
-- in step; a NULL thread_id: not in a thread).
INSERT INTO messages (id, space_id, channel_id, thread_id, author_id, text, created_at)
SELECT unnest(@ids::uuid[]), unnest(@space_ids::uuid[]), unnest(@channel_ids::uuid[]), unnest(@thread_ids::uuid[]),
    unnest(@author_ids::uuid[]), unnest(@texts::text[]), unnest(@created_ats::timestamptz[]);

-- name: MessageLockLiveByID :one
SELECT * FROM messages WHERE id = @id AND deleted_at IS NULL FOR UPDATE;

-- name: MessageUpdateText :exec
UPDATE messages SET text = @text, updated_at = @updated_at::timestamptz WHERE id = @id;

-- name: MessageMarkDeleted :exec
UPDATE messages SET text = '', deleted_at = @deleted_at::timestamptz WHERE id = @id;

-- name: MessagePageLatest :many
-- The first page of a channel.
SELECT * FROM messages
WHERE channel_id = @channel_id AND deleted_at IS NULL
ORDER BY created_at DESC, id DESC
LIMIT @max_rows::bigint;

-- name: MessagePageBefore :many
-- The page after a position: the messages older than (created_at, id).
-- A query of its own rather than an optional condition, so the index scan
-- starts at the position.
SELECT * FROM messages
WHERE channel_id = @channel_id AND deleted_at IS NULL
  AND (created_at, id) < (@before_created_at::timestamptz, @before_id::uuid)
ORDER BY created_at DESC, id DESC
LIMIT @max_rows::bigint;
