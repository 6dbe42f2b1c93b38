# shellcheck shell=bash
# throwaway.sh: a throwaway PostgreSQL 18 cluster with a migrated bothy
# database in a temporary directory, for `make demo` (tools/demo/demo.sh)
# and `make bench-e2e` (tools/bench/e2e.sh). Sourced, not run.
#
#   throwaway_start NAME BOTHY COMMENT [PG_OPTIONS]
#                                         create the directory $tmp, start the
#                                         cluster (with the server options
#                                         PG_OPTIONS, see cluster.sh),
#                                         write $tmp/admin_url and $config,
#                                         run `bothy secrets init` and
#                                         `bothy migrate --bootstrap`
#   throwaway_run CMD [ARG...]           run CMD in the background and wait
#                                         for it, so a signal stops it by
#                                         its PID; returns its status
#
# On every exit the command of throwaway_run, the cluster and $tmp are
# removed; the exit status stays the script's.
throwaway_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
throwaway_pid=""
tmp=""
config=""

throwaway_cleanup() {
  local status=$?
  if [ -n "$throwaway_pid" ] && kill -0 "$throwaway_pid" 2>/dev/null; then
    kill -TERM "$throwaway_pid" 2>/dev/null || true
    wait "$throwaway_pid" 2>/dev/null || true
  fi
  if [ -n "$tmp" ]; then
    "$throwaway_root/tools/pg/cluster.sh" stop "$tmp/pg" || true
    rm -rf "$tmp"
  fi
  exit "$status"
}

throwaway_start() {
  local name=$1 bothy=$2 comment=$3 pg_options=${4:-} port
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")
  trap throwaway_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  # As root, PostgreSQL runs as an unprivileged user (tools/pg/env.sh),
  # which must be able to pass through the temporary directory to its data.
  [ "$(id -u)" = "0" ] && chmod o+x "$tmp"
  PG_SERVER_OPTIONS="$pg_options" "$throwaway_root/tools/pg/cluster.sh" start "$tmp/pg" 2>"$tmp/cluster.log" || { cat "$tmp/cluster.log" >&2; exit 1; }
  port=$(cat "$tmp/pg/port")
  (umask 077 && "$throwaway_root/tools/pg/cluster.sh" url "$tmp/pg" > "$tmp/admin_url")

  config="$tmp/config.yaml"
  {
    printf '%s\n' "$comment"
    cat <<YAML
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
  } > "$config"

  "$bothy" secrets init --config "$config" >/dev/null
  "$bothy" migrate --bootstrap --admin-url-file "$tmp/admin_url" --config "$config" >/dev/null 2>"$tmp/migrate.log" \
    || { cat "$tmp/migrate.log" >&2; exit 1; }
  echo "PostgreSQL 18 on 127.0.0.1:$port (throwaway, in $tmp): secrets created, database migrated"
}

throwaway_run() {
  local status=0
  "$@" &
  throwaway_pid=$!
  wait "$throwaway_pid" || status=$?
  throwaway_pid=""
  return "$status"
}
