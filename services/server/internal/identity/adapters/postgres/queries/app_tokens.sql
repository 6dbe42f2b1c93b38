-- App tokens (migration 00015): written and looked up by the SHA-256 of
-- the token only; they do not expire, uninstalling revokes them.

-- name: AppTokenInsert :exec
INSERT INTO app_tokens (id, principal_id, token_hash, created_at)
VALUES (@id, @principal_id, @token_hash, @created_at);

-- name: AppTokenRevokeByPrincipal :exec
UPDATE app_tokens SET revoked_at = @revoked_at::timestamptz
WHERE principal_id = @principal_id AND revoked_at IS NULL;

-- name: AppTokenOwnerByTokenHash :one
-- One probe of app_tokens_token_hash_key plus the principal's row.
SELECT t.id, t.principal_id
FROM app_tokens t JOIN principals pr ON pr.id = t.principal_id
WHERE t.token_hash = @token_hash AND t.revoked_at IS NULL AND pr.kind = 'app';
