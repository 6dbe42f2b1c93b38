#!/usr/bin/env bash
# lint.sh [ROOT] is `make lint`:
#   1. the pinned golangci-lint with ROOT/quality/golangci.yml over each Go
#      module in LINT_MODULES (default: services/server, tools and the
#      receiver library libraries/go/webhookverify; go vet,
#      staticcheck, errcheck, revive's doc comment rule, gofmt, goimports
#      with the local prefix bothy/, misspell, gosec, ...);
#   2. the text rules (tools/textrules): no en or em dash in any file, the
#      white label with ROOT/quality/whitelabel-allow.txt, and no Go file
#      citing a ticket's design note.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "${1:-$here/..}" && pwd)
golangci=$("$here/../tools/toolbin.sh" golangci-lint)

status=0
for m in ${LINT_MODULES:-services/server tools libraries/go/webhookverify}; do
  echo "lint: golangci-lint in $m"
  # Modules outside go.work (tools, the receiver library) run with
  # GOWORK=off; the others in the workspace. --allow-parallel-runners: a
  # second lint on the same machine (another checkout) waits for the
  # first instead of failing the gate.
  workoff=
  [ -f "$root/go.work" ] && grep -qE "^\s*(use\s+)?\./$m\s*\)?$" "$root/go.work" || workoff=off
  (cd "$root/$m" && GOWORK=${workoff:-${GOWORK:-}} "$golangci" run --allow-parallel-runners --config "$root/quality/golangci.yml" ./...) || status=1
done

echo "lint: text rules"
(cd "$here/../tools" && GOWORK=off go run ./textrules -C "$root") || status=1
exit $status
