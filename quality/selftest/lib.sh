# lib.sh: helpers of the gate self-tests (sourced). Each self-test plants a
# defect in a temporary copy or file, runs the gate and expects it to fail,
# and checks that the gate passes on the clean variant, so a gate that
# silently stopped checking anything is noticed.
set -euo pipefail
selftest_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$selftest_dir/../.." && pwd)
name=$(basename "$0" .sh)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
log=$scratch/.gate.log

# expect WANT DESCRIPTION COMMAND...: run the gate; WANT is pass or fail.
expect() {
  local want=$1 desc=$2 got=fail; shift 2
  if "$@" >"$log" 2>&1; then got=pass; fi
  if [ "$got" = "$want" ]; then
    echo "ok   $name: $desc (gate: $got)"
  else
    echo "FAIL $name: $desc: the gate must $want, but it did not"
    sed 's/^/    /' "$log" | tail -20
    failures=$((failures + 1))
  fi
}

# expect_fail DESCRIPTION COMMAND...: the gate must exit non-zero.
expect_fail() { expect fail "$@"; }

# expect_pass DESCRIPTION COMMAND...: the gate must exit zero.
expect_pass() { expect pass "$@"; }

# expect_output PATTERN DESCRIPTION: the last gate output matches PATTERN.
expect_output() {
  if grep -Eq -- "$1" "$log"; then
    echo "ok   $name: $2"
  else
    echo "FAIL $name: $2: output lacks /$1/"
    sed 's/^/    /' "$log" | tail -20
    failures=$((failures + 1))
  fi
}

# new_repo DIR: an empty git repository with a committer identity.
new_repo() {
  mkdir -p "$1"
  git -C "$1" init -q
  git -C "$1" config user.email robin@example.com
  git -C "$1" config user.name Robin
  git -C "$1" config commit.gpgsign false
}

# finish: the exit status of the self-test.
finish() {
  if [ "$failures" -gt 0 ]; then
    echo "$name: $failures expectation(s) failed"
    exit 1
  fi
}
