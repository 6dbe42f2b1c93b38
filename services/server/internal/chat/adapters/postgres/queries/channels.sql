-- Channels of a space (migration 00024); the name is unique in its space
-- (channels_space_id_name_key).

-- name: ChannelInsert :exec
INSERT INTO channels (id, space_id, name, created_by, created_at)
VALUES (@id, @space_id, @name, @created_by, @created_at);

-- name: ChannelGetByID :one
SELECT * FROM channels WHERE id = @id;

-- name: ChannelListBySpace :many
SELECT * FROM channels WHERE space_id = @space_id ORDER BY name, id;
