-- The instance row (migration 00011): at most one, by the unique index
-- instance_singleton on (true).

-- name: InstanceGet :one
SELECT id, name, sync_epoch FROM instance;

-- name: InstanceInsert :execrows
-- Inserts nothing when the row exists; the caller learns from the count.
INSERT INTO instance (id, name, sync_epoch, created_at, updated_at)
VALUES (@id, @name, @sync_epoch, @now, @now)
ON CONFLICT ((true)) DO NOTHING;
