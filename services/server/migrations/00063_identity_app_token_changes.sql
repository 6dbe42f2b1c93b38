-- +goose Up
-- App tokens join the cache of token owners (ADR 0102, amended): an update
-- or delete of a row of app_tokens notifies bothy_credentials with the
-- app's principal ID, a truncate with an empty payload (every principal),
-- as migration 00062 does for people, sessions and personal_tokens.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION identity_credentials_changed() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF TG_LEVEL = 'STATEMENT' THEN
        PERFORM pg_notify('bothy_credentials', '');
    ELSIF TG_TABLE_NAME = 'people' THEN
        PERFORM pg_notify('bothy_credentials', OLD.principal_id::text);
    ELSIF TG_TABLE_NAME = 'app_tokens' THEN
        PERFORM pg_notify('bothy_credentials', OLD.principal_id::text);
    ELSE
        PERFORM pg_notify('bothy_credentials', OLD.person_id::text);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER app_tokens_credentials_changed AFTER UPDATE OR DELETE ON app_tokens
    FOR EACH ROW EXECUTE FUNCTION identity_credentials_changed();
CREATE TRIGGER app_tokens_credentials_truncated AFTER TRUNCATE ON app_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION identity_credentials_changed();

-- +goose Down
DROP TRIGGER app_tokens_credentials_truncated ON app_tokens;
DROP TRIGGER app_tokens_credentials_changed ON app_tokens;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION identity_credentials_changed() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF TG_LEVEL = 'STATEMENT' THEN
        PERFORM pg_notify('bothy_credentials', '');
    ELSIF TG_TABLE_NAME = 'people' THEN
        PERFORM pg_notify('bothy_credentials', OLD.principal_id::text);
    ELSE
        PERFORM pg_notify('bothy_credentials', OLD.person_id::text);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
