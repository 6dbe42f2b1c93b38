#!/usr/bin/env bash
# Self-test of `make adr-index` in check mode on a temporary copy of
# docs/adr: a new ADR, a hand edit of the index and an ADR without a valid
# status each fail the check; regenerating makes it pass again.
. "$(dirname "$0")/lib.sh"

d=$scratch/adr
mkdir -p "$d" && cp "$repo"/docs/adr/*.md "$d/"
gate() { "$repo/quality/adr-index.sh" check "$d"; }
expect_pass "the committed index" gate

printf -- '---\nstatus: accepted\ndate: 2026-11-30\n---\n\n# Deliver webhooks in order\n' >"$d/0998-deliver-webhooks-in-order.md"
expect_fail "a new ADR not yet in the index" gate
expect_output "is stale" "the stale index is named"
"$repo/quality/adr-index.sh" write "$d" >/dev/null
expect_pass "the regenerated index" gate
grep -q '| \[0998\](0998-deliver-webhooks-in-order.md) | Deliver webhooks in order | accepted | 2026-11-30 |' "$d/README.md" ||
  { echo "FAIL $name: the new ADR is not in the table"; failures=$((failures + 1)); }

sed -i 's/Deliver webhooks in order |/Deliver webhooks in any order |/' "$d/README.md"
expect_fail "a hand edit of the index" gate
"$repo/quality/adr-index.sh" write "$d" >/dev/null

printf -- '---\nstatus: done\ndate: 2026-11-30\n---\n\n# Bad status\n' >"$d/0999-bad-status.md"
expect_fail "an ADR with a status MADR does not know" gate
expect_output 'status "done"' "the bad status is named"
finish
