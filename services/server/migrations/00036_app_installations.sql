-- +goose Up
-- Installations of apps (M2-24, docs/spec/11-extensions.md 4): the scopes
-- an owner granted, the event types the installation may subscribe to, and
-- the state that decides whether the app token works (active) and whether
-- webhook deliveries go out. An uninstall keeps the row as history in state
-- uninstalled; a new install creates a new row. At most one installation per
-- app is not uninstalled: app_installations_current_key enforces it, and a
-- second install that races the first fails on it (already_installed).
CREATE TABLE app_installations (
    id                  uuid PRIMARY KEY,
    app_id              uuid NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    state               text NOT NULL CHECK (state IN ('active', 'suspended', 'uninstalled')),
    granted_scopes      text[] NOT NULL
                        CHECK (granted_scopes <@ ARRAY['events:subscribe', 'messages:read', 'messages:write', 'channels:read']::text[]),
    event_subscriptions text[] NOT NULL CHECK (array_position(event_subscriptions, NULL) IS NULL),
    installed_by        uuid NOT NULL,
    installed_at        timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    uninstalled_at      timestamptz NULL,
    CONSTRAINT app_installations_uninstalled_at_by_state
        CHECK ((state = 'uninstalled') = (uninstalled_at IS NOT NULL))
);
CREATE UNIQUE INDEX app_installations_current_key ON app_installations (app_id) WHERE state <> 'uninstalled';

GRANT SELECT, INSERT, UPDATE, DELETE ON app_installations TO bothy_app;

COMMENT ON TABLE app_installations IS 'Installations of apps: granted scopes, event subscriptions, state. retention: config (kept with the app; uninstalled rows are history)';

-- +goose Down
DROP TABLE app_installations;
