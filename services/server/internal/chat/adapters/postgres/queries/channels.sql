-- Channels of a space (migration 00024); the name is unique in its space
-- (channels_space_id_name_key).

-- name: ChannelInsert :exec
INSERT INTO channels (id, space_id, name, created_by, created_at)
VALUES (@id, @space_id, @name, @created_by, @created_at);

-- name: ChannelListByIDs :many
-- The channels of a post, of a read of a channel or of a group of posts
-- (ADR 0099), with one statement; one way for all, behind the cache of
-- channels (ADR 0103).
SELECT * FROM channels WHERE id = ANY(@ids::uuid[]);

-- name: ChannelListBySpace :many
SELECT * FROM channels WHERE space_id = @space_id ORDER BY name, id;
