-- Personal tokens (migration 00014): written and looked up by the SHA-256
-- of the token only. A token is usable while it is neither revoked nor
-- expired at the time the caller passes (no expiry: never expires).

-- name: PersonalTokenInsert :exec
INSERT INTO personal_tokens (id, person_id, name, token_hash, created_at, expires_at)
VALUES (@id, @person_id, @name, @token_hash, @created_at, @expires_at);

-- name: PersonalTokenListActiveByPerson :many
SELECT id, person_id, name, created_at, expires_at FROM personal_tokens
WHERE person_id = @person_id AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > @now::timestamptz)
ORDER BY created_at DESC, id DESC;

-- name: PersonalTokenGetActive :one
SELECT id, person_id, name, created_at, expires_at FROM personal_tokens
WHERE id = @id AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > @now::timestamptz);

-- name: PersonalTokenRevoke :execrows
UPDATE personal_tokens SET revoked_at = @at::timestamptz
WHERE id = @id AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > @at::timestamptz);

-- name: PersonalTokenOwnerByTokenHash :one
-- One probe of personal_tokens_token_hash_key plus the person's row.
SELECT t.id, t.person_id, p.role, t.expires_at
FROM personal_tokens t JOIN people p ON p.principal_id = t.person_id
WHERE t.token_hash = @token_hash AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > @now::timestamptz);
