-- Server signing keys (migration 00012). Ensure and every rotation run
-- under ServerSigningKeyLock; a state change names the state it expects,
-- so a count other than one means the key left it.

-- name: ServerSigningKeyLock :exec
-- The transaction-scoped advisory lock (lock_class, 0): the two-key form
-- never meets River's single-key locks (postgres.LockClassKeys).
SELECT pg_advisory_xact_lock(@lock_class::int, 0);

-- name: ServerSigningKeyListUnretired :many
SELECT kid, purpose, state, public_key, private_key_enc, created_at, activated_at, not_after
FROM server_signing_keys
WHERE state <> 'retired'
ORDER BY purpose, kid;

-- name: ServerSigningKeyInsert :exec
INSERT INTO server_signing_keys (kid, purpose, alg, state, public_key, private_key_enc, created_at, activated_at)
VALUES (@kid, @purpose, 'EdDSA', @state, @public_key, @private_key_enc, @created_at, @activated_at);

-- name: ServerSigningKeyPromote :execrows
UPDATE server_signing_keys SET state = 'active', activated_at = @activated_at::timestamptz
WHERE kid = @kid AND state = 'next';

-- name: ServerSigningKeyStartRetiring :execrows
UPDATE server_signing_keys SET state = 'retiring', not_after = @not_after::timestamptz
WHERE kid = @kid AND state = 'active';

-- name: ServerSigningKeyRetire :execrows
-- The private key becomes the empty value: a retired key never signs again.
UPDATE server_signing_keys SET state = 'retired', retired_at = @retired_at::timestamptz, private_key_enc = ''::bytea
WHERE kid = @kid AND state = 'retiring';
