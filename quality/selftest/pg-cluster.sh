#!/usr/bin/env bash
# Self-test of the PostgreSQL provisioning of `make run` (tools/pg/cluster.sh)
# from a folder closed to everybody else (mode 0700, like root's home or a
# `mktemp -d` folder): the cluster starts, answers on its port, names where
# its data is, starts again on the same data, and `destroy` leaves nothing.
# As root the data must live where the unprivileged PostgreSQL user can
# reach it, under the cache and outside the closed folder (issue 14).
. "$(dirname "$0")/lib.sh"

closed=$scratch/home
mkdir -p "$closed/clone"
chmod 0700 "$closed"
pgdir=$closed/clone/.local/pg
cluster() { "$repo/tools/pg/cluster.sh" "$@"; }
trap 'cluster destroy "$pgdir" >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT

expect_pass "the first start below a 0700 folder" cluster start "$pgdir"
home=$(cluster where "$pgdir")
expect_output "PostgreSQL 18 running on 127.0.0.1:[0-9]+ \(data in $home/data\)" "the start names the data folder that \`where\` prints"
port=$(cat "$pgdir/port")
answers() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }
expect_pass "the cluster accepts connections on its port" answers
if [ "$(id -u)" = "0" ]; then
  case $home in
    "$closed"/*) echo "FAIL $name: as root the data is below the closed folder: $home"; failures=$((failures + 1)) ;;
    *) echo "ok   $name: as root the data is outside the closed folder ($home)" ;;
  esac
fi

expect_pass "stop" cluster stop "$pgdir"
expect_pass "a second start on the same data" cluster start "$pgdir"
expect_output "data in $home/data" "the second start uses the same data"
expect_pass "destroy" cluster destroy "$pgdir"
expect_fail "destroy removes the data" test -e "$home/data"
finish
