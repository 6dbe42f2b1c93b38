-- +goose Up
-- Idempotency-Key records (M1-20). A row is reserved (status NULL) before the
-- handler runs and completed in the handler's transaction; an in-flight
-- request holds the row lock. A response with a one-time secret keeps only
-- its status: body and headers stay NULL (R-API-26).
CREATE TABLE idempotency_keys (
    principal_id    uuid NOT NULL,
    operation       text NOT NULL,
    key             text NOT NULL CHECK (octet_length(key) BETWEEN 1 AND 255),
    request_hash    bytea NOT NULL CHECK (octet_length(request_hash) = 32),
    status          integer NULL CHECK (status BETWEEN 100 AND 599),
    headers         jsonb NULL CHECK (jsonb_typeof(headers) = 'object'),
    body            bytea NULL,
    one_time_secret boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    PRIMARY KEY (principal_id, operation, key),
    CONSTRAINT idempotency_keys_expiry_after_creation CHECK (expires_at > created_at),
    CONSTRAINT idempotency_keys_reserved_has_no_response
        CHECK (status IS NOT NULL OR (headers IS NULL AND body IS NULL AND NOT one_time_secret)),
    CONSTRAINT idempotency_keys_one_time_secret_not_stored
        CHECK (NOT one_time_secret OR (headers IS NULL AND body IS NULL))
);

CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at);

GRANT SELECT, INSERT, UPDATE, DELETE ON idempotency_keys TO bothy_app;

COMMENT ON TABLE idempotency_keys IS
    'Idempotency-Key reservations and stored responses (kernel/idempotency). retention: transient (deleted after expires_at = created_at + idempotency.key_ttl)';

-- +goose Down
DROP TABLE idempotency_keys;
