-- +goose Up
-- Grants (M1-28, internal/authz): a level (read < write < admin) on a whole
-- space (channel_id NULL) or on one channel of it, given to a principal,
-- for example G-6: write on Support/Eskalation for the app Tracker. The
-- composite foreign key keeps a channel grant inside its space; NULLS NOT
-- DISTINCT makes one space-wide grant per subject and space.
CREATE TABLE grants (
    id                   uuid PRIMARY KEY,
    subject_principal_id uuid NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
    level                text NOT NULL CHECK (level IN ('read', 'write', 'admin')),
    space_id             uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    channel_id           uuid NULL,
    created_by           uuid NOT NULL,
    created_at           timestamptz NOT NULL,
    CONSTRAINT grants_channel_fkey FOREIGN KEY (space_id, channel_id)
        REFERENCES channels (space_id, id) ON DELETE CASCADE,
    CONSTRAINT grants_subject_place_key UNIQUE NULLS NOT DISTINCT (subject_principal_id, space_id, channel_id)
);
-- The authorizer loads every grant of one principal at once through the
-- leading column of grants_subject_place_key.
GRANT SELECT, INSERT, UPDATE, DELETE ON grants TO bothy_app;
COMMENT ON TABLE grants IS 'Levels on spaces and channels given to principals (apps, persons). retention: config (deleted with the principal, space or channel, or when revoked)';

-- +goose Down
DROP TABLE grants;
