-- Principals, people and agents (migration 00010). A person's principal
-- and people row are one statement: the data-modifying WITH inserts the
-- principal, which the foreign key of people then finds at the end of the
-- statement (ADR 0078).

-- name: PersonInsertWithPrincipal :exec
WITH principal AS (
    INSERT INTO principals (id, kind, display_name, created_at)
    VALUES (@id, 'person', @display_name, @created_at)
)
INSERT INTO people (principal_id, email, password_hash, role, created_at, updated_at)
VALUES (@id, @email, @password_hash, @role, @created_at, @created_at);

-- name: PersonCountOwners :one
SELECT count(*) FROM people WHERE role = 'owner';

-- name: PersonGetByID :one
SELECT p.principal_id, p.email, pr.display_name, p.role, p.created_at
FROM people p JOIN principals pr ON pr.id = p.principal_id
WHERE p.principal_id = @principal_id;

-- name: PersonCredentialsByEmail :one
-- Index people_email_key.
SELECT principal_id, password_hash FROM people WHERE email = @email;

-- name: PersonCredentialsByID :one
SELECT principal_id, password_hash FROM people WHERE principal_id = @principal_id;

-- name: PersonUpdatePasswordHash :exec
UPDATE people SET password_hash = @password_hash, updated_at = @updated_at WHERE principal_id = @principal_id;

-- name: PrincipalInsert :exec
INSERT INTO principals (id, kind, display_name, created_at)
VALUES (@id, @kind, @display_name, @created_at);

-- name: PrincipalKindByID :one
SELECT kind FROM principals WHERE id = @id;

-- name: AgentInsert :exec
INSERT INTO agents (principal_id, created_at) VALUES (@principal_id, @created_at);
