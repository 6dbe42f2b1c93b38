-- +goose Up
-- Principals: every actor of bothy has one row here, whatever its kind, so
-- that grants, memberships, audit entries and tokens reference one table.
CREATE TABLE principals (
    id           uuid PRIMARY KEY,
    kind         text NOT NULL CHECK (kind IN ('person', 'app', 'agent')),
    display_name text NOT NULL CHECK (length(display_name) BETWEEN 1 AND 200),
    created_at   timestamptz NOT NULL
);
COMMENT ON TABLE principals IS 'Every person, app and agent principal. retention: config (kept while the principal exists)';
GRANT SELECT, INSERT, UPDATE, DELETE ON principals TO bothy_app;

-- People sign in with email and password (argon2id hash) and hold an
-- instance role.
CREATE TABLE people (
    principal_id  uuid PRIMARY KEY REFERENCES principals (id) ON DELETE CASCADE,
    email         text NOT NULL CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 320),
    password_hash text NOT NULL,
    role          text NOT NULL CHECK (role IN ('owner', 'member')),
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE UNIQUE INDEX people_email_key ON people (email);
COMMENT ON TABLE people IS 'People with email, password hash and instance role. retention: config (personal data, deleted with the person)';
GRANT SELECT, INSERT, UPDATE, DELETE ON people TO bothy_app;

-- Agents exist as principals so that webhook_subscriptions.agent_id has its
-- foreign key; the agent transport itself is not built yet.
CREATE TABLE agents (
    principal_id uuid PRIMARY KEY REFERENCES principals (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL
);
COMMENT ON TABLE agents IS 'Agent principals. retention: config';
GRANT SELECT, INSERT, UPDATE, DELETE ON agents TO bothy_app;

-- +goose Down
DROP TABLE agents;
DROP TABLE people;
DROP TABLE principals;
