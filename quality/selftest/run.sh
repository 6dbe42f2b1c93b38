#!/usr/bin/env bash
# run.sh is `make quality-selftest`: the unit tests of the gate programs in
# tools/, then every self-test script beside this file. Each script plants
# defects in temporary copies and expects its gate to fail on them.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
failed=()
echo "quality-selftest: go test of the tools module"
(cd "$here/../../tools" && GOWORK=off go test -count=1 ./...) || failed+=(tools)
for t in "$here"/*.sh; do
  case $(basename "$t") in lib.sh | run.sh) continue ;; esac
  start=$SECONDS
  if bash "$t"; then
    echo "quality-selftest: $(basename "$t" .sh) passed in $((SECONDS - start)) s"
  else
    failed+=("$(basename "$t" .sh)")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "quality-selftest: failed: ${failed[*]}"
  exit 1
fi
echo "quality-selftest: every gate failed on its planted defects and passed on clean input"
