#!/usr/bin/env bash
# demo.sh is `make demo`: outgoing webhooks end to end on this machine, with
# nothing left behind. It starts a throwaway PostgreSQL 18 cluster in a
# temporary directory, creates the secrets and the database (`bothy secrets
# init`, `bothy migrate --bootstrap`), then runs bin/bothy-demo, which runs a
# bothy process of role all and an HTTPS webhook receiver for
# hooks.example.com and shows every delivery verified (services/server/cmd/
# bothy-demo/README.md). The exit status is the demo's: 0 when every
# expected delivery was verified. On every exit the demo process (by its
# PID), the cluster and the temporary directory are removed.
#
# Expects bin/bothy and bin/bothy-demo (make demo builds both) and the
# PostgreSQL binaries of tools/pg/install.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bothy="$root/bin/bothy"
demo="$root/bin/bothy-demo"
for b in "$bothy" "$demo"; do
  [ -x "$b" ] || { echo "demo.sh: $b is missing; run make demo" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bothy-demo.XXXXXX")
demo_pid=""
cleanup() {
  status=$?
  if [ -n "$demo_pid" ] && kill -0 "$demo_pid" 2>/dev/null; then
    kill -TERM "$demo_pid" 2>/dev/null || true
    wait "$demo_pid" 2>/dev/null || true
  fi
  "$root/tools/pg/cluster.sh" stop "$tmp/pg" || true
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# As root, PostgreSQL runs as an unprivileged user (tools/pg/env.sh), which
# must be able to pass through the temporary directory to its data.
[ "$(id -u)" = "0" ] && chmod o+x "$tmp"
"$root/tools/pg/cluster.sh" start "$tmp/pg" 2>"$tmp/cluster.log" || { cat "$tmp/cluster.log" >&2; exit 1; }
port=$(cat "$tmp/pg/port")
(umask 077 && "$root/tools/pg/cluster.sh" url "$tmp/pg" > "$tmp/admin_url")

config="$tmp/config.yaml"
cat > "$config" <<YAML
# Configuration of one \`make demo\` run (docs/operations/configuration.md).
# bothy-demo adds webhook.allowed_hosts, egress.allowed_hosts,
# egress.extra_ca_file and the two listen addresses (free loopback ports).
database:
  url: postgres://bothy_app@127.0.0.1:$port/bothy?sslmode=disable
  migration_url: postgres://bothy_owner@127.0.0.1:$port/bothy?sslmode=disable
secrets:
  dir: $tmp/secrets
log:
  level: warn
http:
  shutdown_timeout: 5s
jobs:
  shutdown_timeout: 5s
YAML

"$bothy" secrets init --config "$config" >/dev/null
"$bothy" migrate --bootstrap --admin-url-file "$tmp/admin_url" --config "$config" >/dev/null 2>"$tmp/migrate.log" \
  || { cat "$tmp/migrate.log" >&2; exit 1; }
echo "PostgreSQL 18 on 127.0.0.1:$port (throwaway, in $tmp): secrets created, database migrated"

"$demo" --config "$config" &
demo_pid=$!
status=0
wait "$demo_pid" || status=$?
demo_pid=""
exit "$status"
