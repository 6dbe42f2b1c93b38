#!/usr/bin/env bash
# migrations.sh lint|lock [DIR] runs tools/migrationslint over the goose
# migrations in DIR (default services/server/migrations):
#   lint  `make migrations-lint`: names and numbers, goose sections, grants
#         to bothy_app, retention comments, migrations.sha256 against the
#         files and against git HEAD's copy;
#   lock  `make migrations-lock`: write migrations.sha256 (merged lines kept).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:?usage: migrations.sh lint|lock [DIR]}
dir=$(cd "${2:-$here/../services/server/migrations}" && pwd)
flags=(-dir "$dir" -classes "$here/retention-classes.txt")
[ "$mode" = lock ] && flags+=(-lock)
cd "$here/../tools" && GOWORK=off exec go run ./migrationslint "${flags[@]}"
