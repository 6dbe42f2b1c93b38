#!/usr/bin/env bash
# adr-index.sh write|check [DIR] runs tools/adrindex on the ADR folder DIR
# (default docs/adr): `write` regenerates README.md (make adr-index), `check`
# fails when README.md is stale or an ADR lacks its MADR front matter.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:?usage: adr-index.sh write|check [DIR]}
dir=$(cd "${2:-$here/../docs/adr}" && pwd)
flags=(-dir "$dir")
[ "$mode" = check ] && flags+=(-check)
cd "$here/../tools" && GOWORK=off exec go run ./adrindex "${flags[@]}"
