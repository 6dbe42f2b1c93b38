-- +goose Up
-- App tokens (identity module): the bearer token an app gets at
-- installation, a one-time secret. Only the SHA-256 of the token is stored.
-- Uninstalling revokes every token of the app principal.
CREATE TABLE app_tokens (
    id           uuid PRIMARY KEY,
    principal_id uuid NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
    token_hash   bytea NOT NULL CHECK (octet_length(token_hash) = 32),
    created_at   timestamptz NOT NULL,
    revoked_at   timestamptz NULL
);

CREATE UNIQUE INDEX app_tokens_token_hash_key ON app_tokens (token_hash);
CREATE INDEX app_tokens_principal_id_idx ON app_tokens (principal_id) WHERE revoked_at IS NULL;

GRANT SELECT, INSERT, UPDATE, DELETE ON app_tokens TO bothy_app;

COMMENT ON TABLE app_tokens IS 'Bearer tokens of app principals, hashed (identity module). retention: config (kept while the app principal exists)';

-- +goose Down
DROP TABLE app_tokens;
