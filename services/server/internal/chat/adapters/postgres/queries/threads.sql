-- Threads (migration 00025). A thread and its root message refer to each
-- other; the message's reference (messages_thread_fkey) is checked at
-- commit, so the use case inserts the message first.

-- name: ThreadInsert :exec
INSERT INTO threads (id, space_id, channel_id, root_message_id, created_by, created_at)
VALUES (@id, @space_id, @channel_id, @root_message_id, @created_by, @created_at);

-- name: ThreadGetByID :one
SELECT * FROM threads WHERE id = @id;
