-- +goose Up
-- Threads and messages (M1-54 to M1-56, internal/chat).
--
-- A thread is opened by its root message, which belongs to it
-- (messages.thread_id = the thread), so the message and the thread refer to
-- each other: the thread reference of messages is checked at commit
-- (DEFERRABLE INITIALLY DEFERRED) and the use case inserts the message
-- first. Composite foreign keys keep the tree consistent: a message lies in
-- a channel of its space, and its thread in its channel.
--
-- A deleted message keeps its row (ids stay stable for events and threads)
-- but loses its text: deleted_at is set and text emptied, enforced by a
-- check. Message text is limited by chat.message_max_bytes in the chat
-- domain, not here, so the limit stays a configuration value.
CREATE TABLE threads (
    id              uuid PRIMARY KEY,
    space_id        uuid NOT NULL,
    channel_id      uuid NOT NULL,
    root_message_id uuid NOT NULL,
    created_by      uuid NOT NULL,
    created_at      timestamptz NOT NULL,
    CONSTRAINT threads_channel_fkey FOREIGN KEY (space_id, channel_id)
        REFERENCES channels (space_id, id) ON DELETE CASCADE,
    CONSTRAINT threads_channel_id_id_key UNIQUE (channel_id, id),
    CONSTRAINT threads_root_message_id_key UNIQUE (root_message_id)
);
GRANT SELECT, INSERT, UPDATE, DELETE ON threads TO bothy_app;
COMMENT ON TABLE threads IS 'Threads of a channel, each opened by its root message. retention: config (kept while the channel exists)';

CREATE TABLE messages (
    id         uuid PRIMARY KEY,
    space_id   uuid NOT NULL,
    channel_id uuid NOT NULL,
    thread_id  uuid NULL,
    author_id  uuid NOT NULL REFERENCES principals (id),
    text       text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NULL,
    deleted_at timestamptz NULL,
    CONSTRAINT messages_channel_fkey FOREIGN KEY (space_id, channel_id)
        REFERENCES channels (space_id, id) ON DELETE CASCADE,
    CONSTRAINT messages_thread_fkey FOREIGN KEY (channel_id, thread_id)
        REFERENCES threads (channel_id, id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT messages_deleted_has_no_text CHECK (deleted_at IS NULL OR text = ''),
    CONSTRAINT messages_live_has_text CHECK (deleted_at IS NOT NULL OR text <> '')
);
ALTER TABLE threads ADD CONSTRAINT threads_root_message_fkey
    FOREIGN KEY (root_message_id) REFERENCES messages (id) ON DELETE CASCADE;
-- Pages of a channel and of a thread, newest first by (created_at, id).
CREATE INDEX messages_channel_page_idx ON messages (channel_id, created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX messages_thread_page_idx ON messages (thread_id, created_at, id) WHERE deleted_at IS NULL AND thread_id IS NOT NULL;
GRANT SELECT, INSERT, UPDATE, DELETE ON messages TO bothy_app;
COMMENT ON TABLE messages IS 'Messages of a channel, optionally in a thread. retention: content (kept until deleted; a deleted message keeps no text)';

-- +goose Down
ALTER TABLE threads DROP CONSTRAINT threads_root_message_fkey;
DROP TABLE messages;
DROP TABLE threads;
