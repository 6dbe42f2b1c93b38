-- +goose Up
-- Sessions of people (identity module): the bearer token of a sign-in. Only
-- the SHA-256 of the token is stored; lookups go by that hash. A session
-- ends at expires_at (identity.session_ttl after sign-in) or when revoked
-- (sign out). stepped_up_at is the last time the person entered the
-- password in this session (sign-in or step-up); the authorizer counts it
-- as fresh for identity.step_up_max_age.
CREATE TABLE sessions (
    id            uuid PRIMARY KEY,
    person_id     uuid NOT NULL REFERENCES people (principal_id) ON DELETE CASCADE,
    token_hash    bytea NOT NULL CHECK (octet_length(token_hash) = 32),
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    stepped_up_at timestamptz NULL,
    revoked_at    timestamptz NULL,
    CONSTRAINT sessions_expiry_after_creation CHECK (expires_at > created_at)
);

CREATE UNIQUE INDEX sessions_token_hash_key ON sessions (token_hash);
CREATE INDEX sessions_person_id_idx ON sessions (person_id);
CREATE INDEX sessions_expires_at_idx ON sessions (expires_at);

GRANT SELECT, INSERT, UPDATE, DELETE ON sessions TO bothy_app;

COMMENT ON TABLE sessions IS 'Sign-in sessions with hashed bearer tokens (identity module). retention: transient (a row is of no use once expired or revoked)';

-- +goose Down
DROP TABLE sessions;
