-- +goose Up
-- The audit trail (M1-24): one row per allowed change (written by the use
-- case in its transaction) and per denial (written by the authorizer).
-- Details are a JSON object of identifiers, codes, integers, booleans and
-- lists of codes only (kernel/auditing): never free text, URLs or secrets.
CREATE TABLE audit_events (
    id             uuid PRIMARY KEY,
    created_at     timestamptz NOT NULL,
    action         text NOT NULL,
    actor_id       uuid NULL,
    actor_kind     text NOT NULL
                   CHECK (actor_kind IN ('person', 'app', 'agent', 'system', 'anonymous')),
    resource_kind  text NOT NULL,
    resource_id    uuid NULL,
    outcome        text NOT NULL CHECK (outcome IN ('allow', 'deny')),
    reason         text NULL,
    details        jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(details) = 'object'),
    correlation_id text NULL,
    CONSTRAINT audit_events_reason_only_for_deny CHECK ((outcome = 'deny') = (reason IS NOT NULL)),
    CONSTRAINT audit_events_actor_id_by_kind
        CHECK ((actor_kind IN ('system', 'anonymous')) = (actor_id IS NULL))
);

CREATE INDEX audit_events_created_at_idx ON audit_events (created_at);
CREATE INDEX audit_events_resource_idx ON audit_events (resource_kind, resource_id);

GRANT SELECT, INSERT, UPDATE, DELETE ON audit_events TO bothy_app;

COMMENT ON TABLE audit_events IS
    'Audit trail of allowed changes and denials (kernel/auditing). retention: audit';

-- +goose Down
DROP TABLE audit_events;
