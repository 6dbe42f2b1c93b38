-- name: AppInsert :exec
INSERT INTO apps (id, principal_id, name, manifest, created_by, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7);

-- name: AppGetByID :one
SELECT * FROM apps WHERE id = $1;

-- name: AppList :many
SELECT * FROM apps ORDER BY name, id;
