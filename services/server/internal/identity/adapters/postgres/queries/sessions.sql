-- Sessions (migration 00013): written and looked up by the SHA-256 of
-- the token only (sessions_token_hash_key). A session is usable while it
-- is neither revoked nor expired at the time the caller passes.

-- name: SessionInsert :exec
INSERT INTO sessions (id, person_id, token_hash, created_at, expires_at, stepped_up_at)
VALUES (@id, @person_id, @token_hash, @created_at, @expires_at, @stepped_up_at);

-- name: SessionGetActive :one
SELECT id, person_id, created_at, expires_at, stepped_up_at FROM sessions
WHERE id = @id AND person_id = @person_id AND revoked_at IS NULL AND expires_at > @now::timestamptz;

-- name: SessionUpdateSteppedUp :execrows
UPDATE sessions SET stepped_up_at = @at::timestamptz
WHERE id = @id AND revoked_at IS NULL AND expires_at > @at::timestamptz;

-- name: SessionRevoke :execrows
UPDATE sessions SET revoked_at = @at::timestamptz
WHERE id = @id AND person_id = @person_id AND revoked_at IS NULL AND expires_at > @at::timestamptz;

-- name: SessionOwnerByTokenHash :one
-- One probe of sessions_token_hash_key plus the person's row.
SELECT s.id, s.person_id, p.role, s.stepped_up_at, s.expires_at
FROM sessions s JOIN people p ON p.principal_id = s.person_id
WHERE s.token_hash = @token_hash AND s.revoked_at IS NULL AND s.expires_at > @now::timestamptz;

-- name: SessionDeleteExpired :execrows
-- One retention batch: up to @batch sessions expired at @before, oldest
-- first, through sessions_expires_at_idx. Rows a sign-out or step-up holds
-- are skipped, so a batch never waits.
DELETE FROM sessions WHERE id IN (
    SELECT id FROM sessions WHERE expires_at <= @before::timestamptz
    ORDER BY expires_at LIMIT @batch
    FOR UPDATE SKIP LOCKED);
