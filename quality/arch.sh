#!/usr/bin/env bash
# arch.sh [MODULE_DIR] is `make arch`: tools/archcheck enforces the module
# dependency rules of MODULE_DIR/architecture/modules.yaml (default module:
# services/server) over `go list -json ./...`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(cd "${1:-$here/../services/server}" && pwd)
cd "$here/../tools" && GOWORK=off go build -o "${TMPDIR:-/tmp}/bothy-archcheck.$$" ./archcheck
trap 'rm -f "${TMPDIR:-/tmp}/bothy-archcheck.$$"' EXIT
cd "$dir" && "${TMPDIR:-/tmp}/bothy-archcheck.$$" -C .
