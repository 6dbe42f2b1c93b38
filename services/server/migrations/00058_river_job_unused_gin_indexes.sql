-- +goose Up
-- River's schema (migration 002 of River's main line) indexes river_job's
-- args and metadata with GIN for River UI's filters; bothy never queries
-- them, and every insert and every state change of a job (each is a
-- non-HOT update: state is in index keys) maintains both (ADR 0086). A
-- lease wake-up's insert read about 23 buffers with them and 16 without.
-- River's reindexer is configured without them (jobs.reindexedIndexes).
DROP INDEX river_job_args_index;
DROP INDEX river_job_metadata_index;

-- +goose Down
CREATE INDEX river_job_args_index ON river_job USING GIN (args);
CREATE INDEX river_job_metadata_index ON river_job USING GIN (metadata);
