-- name: AppInstallationInsert :exec
INSERT INTO app_installations (id, app_id, state, granted_scopes, event_subscriptions,
    installed_by, installed_at, updated_at, uninstalled_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9);

-- name: AppInstallationUpdate :execrows
UPDATE app_installations
SET state = $2, granted_scopes = $3, event_subscriptions = $4, updated_at = $5, uninstalled_at = $6
WHERE id = $1;

-- name: AppInstallationGetByID :one
SELECT sqlc.embed(i), a.principal_id
FROM app_installations i JOIN apps a ON a.id = i.app_id
WHERE i.id = $1;

-- name: AppInstallationGetByIDForShare :one
SELECT sqlc.embed(i), a.principal_id
FROM app_installations i JOIN apps a ON a.id = i.app_id
WHERE i.id = $1
FOR SHARE OF i;

-- name: AppInstallationCurrentByApp :one
SELECT sqlc.embed(i), a.principal_id
FROM app_installations i JOIN apps a ON a.id = i.app_id
WHERE i.app_id = $1 AND i.state <> 'uninstalled';

-- name: AppInstallationCurrentByAppForShare :one
SELECT sqlc.embed(i), a.principal_id
FROM app_installations i JOIN apps a ON a.id = i.app_id
WHERE i.app_id = $1 AND i.state <> 'uninstalled'
FOR SHARE OF i;

-- name: AppInstallationCurrentByAppForUpdate :one
SELECT sqlc.embed(i), a.principal_id
FROM app_installations i JOIN apps a ON a.id = i.app_id
WHERE i.app_id = $1 AND i.state <> 'uninstalled'
FOR UPDATE OF i;

-- name: AppInstallationFactsByPrincipal :one
SELECT i.id, i.state, i.granted_scopes
FROM apps a JOIN app_installations i ON i.app_id = a.id
WHERE a.principal_id = $1 AND i.state <> 'uninstalled';
