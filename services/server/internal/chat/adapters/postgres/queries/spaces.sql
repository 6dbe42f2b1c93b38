-- Spaces and their members (migration 00023). A member is a person: the
-- foreign key space_members_principal_id_fkey names people.

-- name: SpaceInsert :exec
INSERT INTO spaces (id, name, created_by, created_at)
VALUES (@id, @name, @created_by, @created_at);

-- name: SpaceGetByID :one
SELECT * FROM spaces WHERE id = @id;

-- name: SpaceList :many
-- Index spaces_name_idx.
SELECT * FROM spaces ORDER BY name, id;

-- name: SpaceMemberInsert :exec
INSERT INTO space_members (space_id, principal_id, level, created_at)
VALUES (@space_id, @principal_id, @level, @created_at);

-- name: SpaceMemberExists :one
SELECT EXISTS (
    SELECT 1 FROM space_members WHERE space_id = @space_id AND principal_id = @principal_id
) AS member;

-- name: SpaceMemberListByPrincipals :many
-- Index space_members_principal_idx: the authorizer loads every membership
-- of its principals at once.
SELECT principal_id, space_id, level FROM space_members WHERE principal_id = ANY(@principal_ids::uuid[]);
