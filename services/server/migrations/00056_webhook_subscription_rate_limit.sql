-- +goose Up
-- A subscription's optional rate limit (issue 16 part 3, ADR 0081):
-- max_per_second is the owner's limit, NULL for none; rate_window holds the
-- ends of its latest attempts, oldest first, at most max_per_second of them
-- (internal/apps/domain/webhook RateWindow). A claim under the limit waits
-- until the max_per_second-th latest end is a second behind, so the
-- receiver never gets more than max_per_second requests in any second,
-- whichever worker sends them. Both columns sit outside every index, so the
-- updates of a claim and a record stay HOT (00046).
ALTER TABLE webhook_subscriptions
    ADD COLUMN max_per_second integer NULL,
    ADD COLUMN rate_window timestamptz[] NOT NULL DEFAULT '{}',
    ADD CONSTRAINT webhook_subscriptions_max_per_second_positive
        CHECK (max_per_second IS NULL OR max_per_second > 0);

-- +goose Down
ALTER TABLE webhook_subscriptions
    DROP CONSTRAINT webhook_subscriptions_max_per_second_positive,
    DROP COLUMN rate_window,
    DROP COLUMN max_per_second;
