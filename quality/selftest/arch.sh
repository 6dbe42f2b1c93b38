#!/usr/bin/env bash
# Self-test of `make arch` on a temporary copy of services/server: each
# planted import that breaks a rule of architecture/modules.yaml fails the
# gate; an import along an allowed edge through a port passes.
. "$(dirname "$0")/lib.sh"

s=$scratch/server
mkdir -p "$s"
(cd "$repo/services/server" && tar --exclude=./bin -cf - .) | tar -xf - -C "$s"
export GOWORK=off GOPROXY=off GOFLAGS=-mod=mod
gate() { "$repo/quality/arch.sh" "$s"; }
expect_pass "the code as it is" gate

# pkg DIR IMPORTS...: write a package DIR (relative) that imports IMPORTS.
pkg() {
  local dir=$1 name; shift
  name=$(basename "$dir")
  mkdir -p "$s/$dir"
  {
    echo "// Package $name is planted by the arch self-test."
    echo "package $name"
    for i in "$@"; do echo "import _ \"bothy/server/$i\""; done
  } >"$s/$dir/planted.go"
}
unplant() { find "$s" -name planted.go -delete; find "$s/internal" -type d -empty -delete; }

pkg internal/chat
pkg internal/chat/adapters/postgres internal/chat
pkg internal/apps/app internal/chat internal/kernel/ids
expect_pass "apps uses the port of chat (an allowed edge)" gate

pkg internal/apps/app internal/chat/adapters/postgres
expect_fail "apps imports an adapter of chat" gate
expect_output "only through its port internal/chat" "the bypassed port is named"
unplant

pkg internal/kernel/planted internal/platform/buildinfo
expect_fail "the kernel imports platform" gate
expect_output "kernel imports nothing of platform" "the kernel rule is named"
unplant

pkg internal/chat/domain internal/platform/pg
expect_fail "a domain package imports platform" gate
expect_output "domain packages import only the standard library" "the domain rule is named"
unplant

mkdir -p "$s/internal/chat/domain"
printf '// Package domain is planted by the arch self-test.\npackage domain\n\nimport _ "go.yaml.in/yaml/v3"\n' >"$s/internal/chat/domain/planted.go"
expect_fail "a domain package imports a library outside domain_libraries" gate
expect_output "import only the standard library, internal/kernel and the domain_libraries" "the domain library rule is named"
unplant

pkg internal/apps
pkg internal/chat internal/apps
expect_fail "chat imports apps (no such edge)" gate
expect_output "apps is not among them" "the missing edge is named"
unplant

pkg internal/platform/planted internal/platform/pg/pgtest
expect_fail "production code imports the test harness" gate
expect_output "is a test harness, for tests only" "the test-only rule is named"
unplant

# Inline SQL (ADR 0078): a use case that runs a statement of its own, and
# an inline_sql entry for a function without any.
mkdir -p "$s/internal/chat/app"
printf '%s\n' 'package app' '' 'import (' '	"context"' '' '	"bothy/server/internal/platform/pg"' ')' '' \
  'func planted(ctx context.Context, db pg.DBTX) error { _, err := db.Exec(ctx, "SELECT 1"); return err }' >"$s/internal/chat/app/planted.go"
expect_fail "a use case runs inline SQL" gate
expect_output "internal/chat/app/planted.go:9: planted runs inline SQL \\(Exec\\)" "the place and the way out are named"
unplant
cp "$s/architecture/modules.yaml" "$scratch/modules.yaml"
sed -i 's|^inline_sql:$|&\n  internal/apps/adapters/postgres: [Store.Planted]|' "$s/architecture/modules.yaml"
expect_fail "an inline_sql entry for a function without inline SQL" gate
expect_output "inline_sql lists internal/apps/adapters/postgres Store.Planted, which runs no inline SQL" "the stale entry is named"
cp "$scratch/modules.yaml" "$s/architecture/modules.yaml"

pkg internal/billing
expect_fail "a package outside every module" gate
expect_output "belongs to no module" "the unknown package is named"
unplant
expect_pass "the code after the plants are removed" gate
finish
