#!/usr/bin/env bash
# Self-test of `make migrations-lint` and `make migrations-lock` on a
# temporary repository holding a copy of the migrations: an edit of a merged
# migration, a table without grant or retention comment, a DDL grant to
# bothy_app and a number used twice each fail; a correct new migration
# passes once locked.
. "$(dirname "$0")/lib.sh"

r=$scratch/repo
new_repo "$r"
mkdir -p "$r/migrations"
cp "$repo"/services/server/migrations/*.sql "$repo"/services/server/migrations/migrations.sha256 "$r/migrations/"
git -C "$r" add -A && git -C "$r" commit -qm migrations
gate() { "$repo/quality/migrations.sh" lint "$r/migrations"; }
lock() { "$repo/quality/migrations.sh" lock "$r/migrations" >/dev/null; }
first=$(cd "$r/migrations" && ls [0-9]*.sql | head -1)
expect_pass "the merged migrations" gate

echo "-- an innocent comment" >>"$r/migrations/$first"
expect_fail "an edit of a merged migration" gate
expect_output "was changed after it was merged" "the edit is named as such"
lock
expect_fail "an edit of a merged migration after make migrations-lock" gate
git -C "$r" checkout -q -- .

# The number after the highest one: the ranges of the modules leave gaps,
# so first + count may be taken.
last=$(cd "$r/migrations" && ls [0-9]*.sql | tail -1)
next=$(printf '%05d' $((10#${last%%_*} + 1)))
new=$r/migrations/${next}_widgets.sql
printf -- '-- +goose Up\nCREATE TABLE widgets (id uuid PRIMARY KEY);\n\n-- +goose Down\nDROP TABLE widgets;\n' >"$new"
lock
expect_fail "a table without grant and retention comment" gate
expect_output "table widgets has no GRANT" "the missing grant is named"
expect_output "table widgets has no COMMENT ON TABLE" "the missing comment is named"

printf -- "-- +goose Up\nCREATE TABLE widgets (id uuid PRIMARY KEY);\nGRANT SELECT, INSERT, UPDATE, DELETE ON widgets TO bothy_app;\nCOMMENT ON TABLE widgets IS 'Widgets of Robin. retention: content';\n\n-- +goose Down\nDROP TABLE widgets;\n" >"$new"
expect_fail "a changed new migration before make migrations-lock" gate
lock
expect_pass "a correct new migration after make migrations-lock" gate

sed -i 's/SELECT, INSERT, UPDATE, DELETE/SELECT, TRUNCATE/' "$new" && lock
expect_fail "TRUNCATE granted to bothy_app" gate
expect_output "grants TRUNCATE to bothy_app" "the DDL grant is named"
git -C "$r" checkout -q -- . && git -C "$r" clean -qfd

dup=$r/migrations/${first%%_*}_duplicate.sql
printf -- '-- +goose Up\nSELECT 1;\n-- +goose Down\nSELECT 1;\n' >"$dup" && lock
expect_fail "a number used twice" gate
expect_output "is used by" "the duplicate number is named"
finish
