-- +goose Up
-- Spaces and their members (M1-52, internal/chat). A member is a person
-- (the foreign key names people, so an app or agent can never be one) with
-- a level on the space and every channel in it; apps reach spaces through
-- grants (00030) instead. Names are checked by the chat domain against
-- chat.name_max_chars; the table only refuses empty ones.
CREATE TABLE spaces (
    id         uuid PRIMARY KEY,
    name       text NOT NULL CHECK (name <> ''),
    created_by uuid NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX spaces_name_idx ON spaces (name, id);
GRANT SELECT, INSERT, UPDATE, DELETE ON spaces TO bothy_app;
COMMENT ON TABLE spaces IS 'Chat spaces. retention: config (kept until deleted by an owner)';

CREATE TABLE space_members (
    space_id     uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    principal_id uuid NOT NULL REFERENCES people (principal_id) ON DELETE CASCADE,
    level        text NOT NULL CHECK (level IN ('read', 'write', 'admin')),
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (space_id, principal_id)
);
-- The authorizer loads every membership of one principal at once.
CREATE INDEX space_members_principal_idx ON space_members (principal_id);
GRANT SELECT, INSERT, UPDATE, DELETE ON space_members TO bothy_app;
COMMENT ON TABLE space_members IS 'Persons in spaces with their level. retention: config (deleted with the space or the person)';

-- +goose Down
DROP TABLE space_members;
DROP TABLE spaces;
