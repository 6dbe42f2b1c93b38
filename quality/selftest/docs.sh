#!/usr/bin/env bash
# Self-test of `make docs` on a temporary copy of the repository: the site
# builds with an API reference from a small api/openapi.yaml and links to
# it from the home page; a link to a missing page and a link to a missing
# repository file each fail the build.
. "$(dirname "$0")/lib.sh"

r=$scratch/repo
new_repo "$r"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  [ -f "$f" ] && printf '%s\0' "$f"
done | xargs -0 -r cp --parents -t "$r")
mkdir -p "$r/api"
cat >"$r/api/openapi.yaml" <<'EOM'
openapi: 3.1.0
info:
  title: bothy self-test API
  version: 0.0.0
  license: {name: MIT, identifier: MIT}
servers:
  - url: https://chat.example.com/api/v1
paths:
  /instance:
    get:
      operationId: getInstance
      summary: Read the instance
      responses:
        '200':
          description: The instance.
          content:
            application/json:
              schema:
                type: object
                properties:
                  name: {type: string, example: Support}
EOM
git -C "$r" add -A && git -C "$r" commit -qm copy
gate() { "$repo/tools/docs/build.sh" "$r" "$r/site"; }
expect_pass "the documentation with an API reference" gate
for f in index.html reference/api.html reference/http-api.html reference/go/index.html api/openapi.yaml docs/adr/index.html; do
  [ -f "$r/site/$f" ] || { echo "FAIL $name: site/$f is missing"; failures=$((failures + 1)); }
done
grep -q 'href="./reference/api.html"' "$r/site/index.html" ||
  { echo "FAIL $name: the home page does not link to the API reference"; failures=$((failures + 1)); }
grep -q 'getInstance' "$r/site/reference/http-api.html" ||
  { echo "FAIL $name: the API reference lacks the operation getInstance"; failures=$((failures + 1)); }

# The planted links name targets that no change will create.
mkdir -p "$r/docs/spec"
printf '# Architecture\n\nSee the [glossary](98-no-such-page.md).\n' >"$r/docs/spec/02-architecture.md"
expect_fail "a relative link to a page that does not exist" gate
expect_output "docs/spec/02-architecture.md:3: broken link 98-no-such-page.md" "the stage names file and line"

printf '# Architecture\n\nSee the [data model](/docs/spec/98-no-such-page).\n' >"$r/docs/spec/02-architecture.md"
expect_fail "a site link to a page that does not exist" gate
expect_output "[Dd]ead link" "VitePress names the dead link"

printf '# Architecture\n\nSee [the vectors](../../api/no-such-vectors.json).\n' >"$r/docs/spec/02-architecture.md"
expect_fail "a link to a repository file that does not exist" gate
expect_output "docs/spec/02-architecture.md:3: broken link" "the stage names file and line"

printf '# Architecture\n\nSee [the contract](../../api/openapi.yaml) and [the ADRs](../adr).\n' >"$r/docs/spec/02-architecture.md"
expect_pass "links to a repository file and to a folder" gate
[ -f "$r/site/docs/spec/02-architecture.html" ] && grep -Eq 'href="(\./)?\.\./adr/"' "$r/site/docs/spec/02-architecture.html" ||
  { echo "FAIL $name: the folder link does not point to the folder's page"; failures=$((failures + 1)); }
finish
