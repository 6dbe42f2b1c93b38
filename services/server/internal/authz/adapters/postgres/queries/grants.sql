-- Grants (migrations 00030, 00045). The authorizer reads every grant of a
-- principal at once through the leading column of
-- grants_subject_place_key; the delivery router reads the holders of a
-- place through grants_place_idx.

-- name: GrantInsert :exec
INSERT INTO grants (id, subject_principal_id, level, space_id, channel_id, created_by, created_at)
VALUES (@id, @subject_principal_id, @level, @space_id, @channel_id, @created_by, @created_at);

-- name: GrantDelete :execrows
DELETE FROM grants WHERE id = @id AND subject_principal_id = @subject_principal_id;

-- name: GrantListBySubject :many
SELECT * FROM grants WHERE subject_principal_id = @subject_principal_id ORDER BY created_at, id;

-- name: GrantFactsBySubject :many
SELECT space_id, channel_id, level FROM grants WHERE subject_principal_id = @subject_principal_id;

-- name: GrantFactsBySubjects :many
SELECT subject_principal_id, space_id, channel_id, level FROM grants
WHERE subject_principal_id = ANY(@subject_principal_ids::uuid[]);

-- name: GrantHoldersByPlace :many
-- The subjects of the grants on the space (channel NULL) or on the space
-- and the channel: a space-wide grant covers every channel of its space.
SELECT DISTINCT subject_principal_id FROM grants
WHERE space_id = @space_id AND (@channel_id::uuid IS NULL OR channel_id IS NULL OR channel_id = @channel_id::uuid)
ORDER BY subject_principal_id;
