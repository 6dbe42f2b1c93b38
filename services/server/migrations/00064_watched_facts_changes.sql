-- +goose Up
-- The api processes keep more than token owners in memory (ADR 0103): a
-- person's standing (grants and space memberships) and channels. Every
-- change of such a fact now notifies one channel, bothy_changes, with the
-- ID the fact is about, at the commit, as migration 00062 did for
-- credentials alone (and for the same reasons: a trigger, so that no
-- write path goes unheard; one notification per distinct payload of a
-- transaction; an empty payload, from a TRUNCATE, forgets everything).
-- One function serves every table: its argument names the column that
-- holds the ID. An insert is reported too where a new row changes what a
-- cache holds (a grant or membership gives rights its holder's cached
-- standing lacks); a new channel or credential is never in a cache.
-- +goose StatementBegin
CREATE FUNCTION watched_facts_changed() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF TG_LEVEL = 'STATEMENT' THEN
        PERFORM pg_notify('bothy_changes', '');
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM pg_notify('bothy_changes', to_jsonb(OLD) ->> TG_ARGV[0]);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM pg_notify('bothy_changes', to_jsonb(NEW) ->> TG_ARGV[0]);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

DROP TRIGGER people_credentials_changed ON people;
DROP TRIGGER sessions_credentials_changed ON sessions;
DROP TRIGGER personal_tokens_credentials_changed ON personal_tokens;
DROP TRIGGER app_tokens_credentials_changed ON app_tokens;
DROP TRIGGER people_credentials_truncated ON people;
DROP TRIGGER sessions_credentials_truncated ON sessions;
DROP TRIGGER personal_tokens_credentials_truncated ON personal_tokens;
DROP TRIGGER app_tokens_credentials_truncated ON app_tokens;
DROP FUNCTION identity_credentials_changed();

CREATE TRIGGER people_credentials_changed AFTER UPDATE OR DELETE ON people
    FOR EACH ROW EXECUTE FUNCTION watched_facts_changed('principal_id');
CREATE TRIGGER sessions_credentials_changed AFTER UPDATE OR DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION watched_facts_changed('person_id');
CREATE TRIGGER personal_tokens_credentials_changed AFTER UPDATE OR DELETE ON personal_tokens
    FOR EACH ROW EXECUTE FUNCTION watched_facts_changed('person_id');
CREATE TRIGGER app_tokens_credentials_changed AFTER UPDATE OR DELETE ON app_tokens
    FOR EACH ROW EXECUTE FUNCTION watched_facts_changed('principal_id');
CREATE TRIGGER grants_facts_changed AFTER INSERT OR UPDATE OR DELETE ON grants
    FOR EACH ROW EXECUTE FUNCTION watched_facts_changed('subject_principal_id');
CREATE TRIGGER space_members_facts_changed AFTER INSERT OR UPDATE OR DELETE ON space_members
    FOR EACH ROW EXECUTE FUNCTION watched_facts_changed('principal_id');
CREATE TRIGGER channels_facts_changed AFTER UPDATE OR DELETE ON channels
    FOR EACH ROW EXECUTE FUNCTION watched_facts_changed('id');

CREATE TRIGGER people_credentials_truncated AFTER TRUNCATE ON people
    FOR EACH STATEMENT EXECUTE FUNCTION watched_facts_changed();
CREATE TRIGGER sessions_credentials_truncated AFTER TRUNCATE ON sessions
    FOR EACH STATEMENT EXECUTE FUNCTION watched_facts_changed();
CREATE TRIGGER personal_tokens_credentials_truncated AFTER TRUNCATE ON personal_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION watched_facts_changed();
CREATE TRIGGER app_tokens_credentials_truncated AFTER TRUNCATE ON app_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION watched_facts_changed();
CREATE TRIGGER grants_facts_truncated AFTER TRUNCATE ON grants
    FOR EACH STATEMENT EXECUTE FUNCTION watched_facts_changed();
CREATE TRIGGER space_members_facts_truncated AFTER TRUNCATE ON space_members
    FOR EACH STATEMENT EXECUTE FUNCTION watched_facts_changed();
CREATE TRIGGER channels_facts_truncated AFTER TRUNCATE ON channels
    FOR EACH STATEMENT EXECUTE FUNCTION watched_facts_changed();

-- +goose Down
DROP TRIGGER channels_facts_truncated ON channels;
DROP TRIGGER space_members_facts_truncated ON space_members;
DROP TRIGGER grants_facts_truncated ON grants;
DROP TRIGGER app_tokens_credentials_truncated ON app_tokens;
DROP TRIGGER personal_tokens_credentials_truncated ON personal_tokens;
DROP TRIGGER sessions_credentials_truncated ON sessions;
DROP TRIGGER people_credentials_truncated ON people;
DROP TRIGGER channels_facts_changed ON channels;
DROP TRIGGER space_members_facts_changed ON space_members;
DROP TRIGGER grants_facts_changed ON grants;
DROP TRIGGER app_tokens_credentials_changed ON app_tokens;
DROP TRIGGER personal_tokens_credentials_changed ON personal_tokens;
DROP TRIGGER sessions_credentials_changed ON sessions;
DROP TRIGGER people_credentials_changed ON people;
DROP FUNCTION watched_facts_changed();
-- +goose StatementBegin
CREATE FUNCTION identity_credentials_changed() RETURNS trigger
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
CREATE TRIGGER people_credentials_changed AFTER UPDATE OR DELETE ON people
    FOR EACH ROW EXECUTE FUNCTION identity_credentials_changed();
CREATE TRIGGER sessions_credentials_changed AFTER UPDATE OR DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION identity_credentials_changed();
CREATE TRIGGER personal_tokens_credentials_changed AFTER UPDATE OR DELETE ON personal_tokens
    FOR EACH ROW EXECUTE FUNCTION identity_credentials_changed();
CREATE TRIGGER app_tokens_credentials_changed AFTER UPDATE OR DELETE ON app_tokens
    FOR EACH ROW EXECUTE FUNCTION identity_credentials_changed();
CREATE TRIGGER people_credentials_truncated AFTER TRUNCATE ON people
    FOR EACH STATEMENT EXECUTE FUNCTION identity_credentials_changed();
CREATE TRIGGER sessions_credentials_truncated AFTER TRUNCATE ON sessions
    FOR EACH STATEMENT EXECUTE FUNCTION identity_credentials_changed();
CREATE TRIGGER personal_tokens_credentials_truncated AFTER TRUNCATE ON personal_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION identity_credentials_changed();
CREATE TRIGGER app_tokens_credentials_truncated AFTER TRUNCATE ON app_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION identity_credentials_changed();
