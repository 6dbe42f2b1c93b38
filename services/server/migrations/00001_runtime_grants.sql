-- +goose Up
-- The runtime role bothy_app reads and writes rows and never changes the
-- schema. River's tables are created by `bothy migrate` (rivermigrate) before
-- goose runs, as the migration owner, so their grants live here.
GRANT SELECT ON goose_db_version TO bothy_app;
GRANT SELECT ON river_migration TO bothy_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON river_job, river_leader, river_queue, river_notification TO bothy_app;
GRANT USAGE, SELECT ON SEQUENCE river_job_id_seq, river_notification_id_seq TO bothy_app;

-- +goose Down
REVOKE ALL ON goose_db_version, river_migration, river_job, river_leader, river_queue, river_notification FROM bothy_app;
REVOKE ALL ON SEQUENCE river_job_id_seq, river_notification_id_seq FROM bothy_app;
