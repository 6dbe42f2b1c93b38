-- +goose Up
-- Every change of a stored credential or of the person it names tells the
-- api processes, which keep the owners of recently used bearer tokens in
-- memory (identity.token_cache_ttl, ADR 0102): an update or delete of a
-- row of people, sessions or personal_tokens notifies channel
-- bothy_credentials with the person's principal ID, and a TRUNCATE of one
-- of them with an empty payload (forget every person). A trigger rather
-- than the use cases, so that no write path (a future use case, the
-- retention purge, an operator's SQL) can change a credential without the
-- processes hearing of it. NOTIFY is sent at the commit, only when the
-- transaction commits, and PostgreSQL sends one notification per distinct
-- payload of a transaction. Not SECURITY DEFINER: it runs with the rights
-- of the writer, which pg_notify needs none beyond.
-- +goose StatementBegin
CREATE FUNCTION identity_credentials_changed() RETURNS trigger
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

CREATE TRIGGER people_credentials_changed AFTER UPDATE OR DELETE ON people
    FOR EACH ROW EXECUTE FUNCTION identity_credentials_changed();
CREATE TRIGGER sessions_credentials_changed AFTER UPDATE OR DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION identity_credentials_changed();
CREATE TRIGGER personal_tokens_credentials_changed AFTER UPDATE OR DELETE ON personal_tokens
    FOR EACH ROW EXECUTE FUNCTION identity_credentials_changed();
CREATE TRIGGER people_credentials_truncated AFTER TRUNCATE ON people
    FOR EACH STATEMENT EXECUTE FUNCTION identity_credentials_changed();
CREATE TRIGGER sessions_credentials_truncated AFTER TRUNCATE ON sessions
    FOR EACH STATEMENT EXECUTE FUNCTION identity_credentials_changed();
CREATE TRIGGER personal_tokens_credentials_truncated AFTER TRUNCATE ON personal_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION identity_credentials_changed();

-- +goose Down
DROP TRIGGER personal_tokens_credentials_truncated ON personal_tokens;
DROP TRIGGER sessions_credentials_truncated ON sessions;
DROP TRIGGER people_credentials_truncated ON people;
DROP TRIGGER personal_tokens_credentials_changed ON personal_tokens;
DROP TRIGGER sessions_credentials_changed ON sessions;
DROP TRIGGER people_credentials_changed ON people;
DROP FUNCTION identity_credentials_changed();
