-- +goose Up
-- Registered apps (M2-24, docs/spec/11-extensions.md 3): one row per app,
-- with its validated manifest as registered and the principal it acts as.
-- The principal is created together with the app and never shared, so an
-- app token, a grant or an audit entry of the principal names exactly one
-- app. name repeats manifest.name (the list order of listApps) and has the
-- length rule of principals.display_name.
CREATE TABLE apps (
    id           uuid PRIMARY KEY,
    principal_id uuid NOT NULL REFERENCES principals (id),
    name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    manifest     jsonb NOT NULL CHECK (jsonb_typeof(manifest) = 'object'),
    created_by   uuid NOT NULL,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    CONSTRAINT apps_principal_id_key UNIQUE (principal_id)
);
-- listApps orders by name, then id.
CREATE INDEX apps_name_idx ON apps (name, id);

GRANT SELECT, INSERT, UPDATE, DELETE ON apps TO bothy_app;

COMMENT ON TABLE apps IS 'Registered apps with their manifests. retention: config (kept while the app is registered)';

-- +goose Down
DROP TABLE apps;
