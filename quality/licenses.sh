#!/usr/bin/env bash
# licenses.sh [MODULE_DIR [ALLOWED]] checks that every package the Go module
# in MODULE_DIR (default services/server) builds or tests with is under a
# license listed in ALLOWED (default quality/licenses/allowed.txt).
#
# It runs the pinned go-licenses `report` (offline: its URL look-ups only
# warn) over ./... including test-only dependencies, ignores the module's
# own packages and the modules of this repository (module paths under
# bothy/, such as the receiver library bothy/libraries/go/webhookverify
# that the server's tests import, ADR 0071: our code, not a dependency)
# and compares the license of each package with the list. A
# package whose license go-licenses cannot identify fails too.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mod=$(cd "${1:-$here/../services/server}" && pwd)
allowed=${2:-$here/licenses/allowed.txt}
golicenses=$("$here/../tools/toolbin.sh" go-licenses)

own=$(cd "$mod" && go list -m)
report=$(mktemp)
trap 'rm -f "$report" "$report.err"' EXIT
if ! (cd "$mod" && "$golicenses" report --include_tests --ignore "$own" --ignore bothy/ \
  --template "$here/licenses/report.tmpl" ./... >"$report" 2>"$report.err"); then
  grep -v 'Error discovering license URL' "$report.err" >&2 || true
  echo "licenses: go-licenses report failed" >&2
  exit 1
fi

bad=0
count=0
while read -r pkg license; do
  [ -n "$pkg" ] || continue
  count=$((count + 1))
  if ! grep -v '^#' "$allowed" | grep -qx -- "$license"; then
    echo "licenses: $pkg is under $license, which is not on ${allowed#"$here/../"}" >&2
    bad=$((bad + 1))
  fi
done <"$report"
if [ "$count" -eq 0 ]; then
  echo "licenses: go-licenses reported no dependency; the check would prove nothing" >&2
  exit 1
fi
if [ "$bad" -gt 0 ]; then
  echo "licenses: $bad of $count packages have a license that is not allowed" >&2
  exit 1
fi
echo "licenses: $count dependency package(s), all under allowed licenses"
