-- +goose Up
-- Personal tokens (identity module): long-lived bearer tokens a person
-- creates for scripts. Only the SHA-256 of the token is stored. A personal
-- token never satisfies step-up and never reaches owner-only actions.
CREATE TABLE personal_tokens (
    id         uuid PRIMARY KEY,
    person_id  uuid NOT NULL REFERENCES people (principal_id) ON DELETE CASCADE,
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    token_hash bytea NOT NULL CHECK (octet_length(token_hash) = 32),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NULL,
    revoked_at timestamptz NULL,
    CONSTRAINT personal_tokens_expiry_after_creation CHECK (expires_at IS NULL OR expires_at > created_at)
);

CREATE UNIQUE INDEX personal_tokens_token_hash_key ON personal_tokens (token_hash);
CREATE INDEX personal_tokens_person_id_idx ON personal_tokens (person_id, created_at);

GRANT SELECT, INSERT, UPDATE, DELETE ON personal_tokens TO bothy_app;

COMMENT ON TABLE personal_tokens IS 'Personal bearer tokens of people, hashed (identity module). retention: config (kept while the person exists)';

-- +goose Down
DROP TABLE personal_tokens;
