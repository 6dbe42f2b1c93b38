#!/usr/bin/env bash
# cluster.sh manages the persistent local PostgreSQL 18 cluster of `make run`.
#
#   cluster.sh start DIR   initialise (first time) and start the cluster in DIR
#   cluster.sh stop DIR    stop it (fast shutdown)
#   cluster.sh url DIR     print the superuser URL (password included)
#
# DIR holds data/, port, superuser_password and the log. The first start picks
# a random free port on 127.0.0.1 and keeps it, so later starts reuse the data
# and the address. Password authentication (scram-sha-256) is on even locally:
# the superuser password is generated once and kept in DIR (mode 0600).
# PG_SERVER_OPTIONS adds server options to the start (for example
# "-c shared_preload_libraries=pg_stat_statements" for make bench-e2e).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=env.sh
. "$here/env.sh"

cmd=${1:?usage: cluster.sh start|stop|url DIR}
dir=${2:?usage: cluster.sh start|stop|url DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# The unprivileged PostgreSQL user must be able to enter DIR.
[ "$(id -u)" = "0" ] && chmod o+x "$dir"

as_pg() {
  if [ "$(id -u)" = "0" ]; then
    setpriv --reuid="$PG_RUN_USER" --regid="$(id -g "$PG_RUN_USER")" --clear-groups "$@"
  else
    "$@"
  fi
}

free_port() {
  python3 - <<'PY' 2>/dev/null || echo $((20000 + RANDOM % 20000))
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
PY
}

superuser_url() {
  local pw
  pw=$(cat "$dir/superuser_password")
  echo "postgres://postgres:${pw}@127.0.0.1:$(cat "$dir/port")/postgres?sslmode=disable"
}

case "$cmd" in
  start)
    bin=$("$here/install.sh")
    [ -f "$dir/port" ] || free_port > "$dir/port"
    port=$(cat "$dir/port")
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      umask 077
      [ -f "$dir/superuser_password" ] || head -c 24 /dev/urandom | base64 | tr -d '/+=' > "$dir/superuser_password"
      umask 022
      mkdir -p "$dir/data" "$dir/run"
      pwfile=$(mktemp)
      cp "$dir/superuser_password" "$pwfile"
      if [ "$(id -u)" = "0" ]; then
        chown -R "$PG_RUN_USER" "$dir/data" "$dir/run" "$pwfile"
      fi
      chmod 0700 "$dir/data"
      as_pg "$bin/initdb" -D "$dir/data" -U postgres --pwfile="$pwfile" \
        --auth=scram-sha-256 -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 \
        || { rm -f "$pwfile"; cat "$dir/initdb.log" >&2; exit 1; }
      rm -f "$pwfile"
    fi
    if as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
      echo "PostgreSQL already running on 127.0.0.1:$port" >&2
      exit 0
    fi
    touch "$dir/postgres.log"
    [ "$(id -u)" = "0" ] && chown "$PG_RUN_USER" "$dir/postgres.log" "$dir/run"
    as_pg "$bin/pg_ctl" -D "$dir/data" -w -l "$dir/postgres.log" \
      -o "-h 127.0.0.1 -p $port -k $dir/run ${PG_SERVER_OPTIONS:-}" start >/dev/null \
      || { tail -20 "$dir/postgres.log" >&2; exit 1; }
    echo "PostgreSQL 18 running on 127.0.0.1:$port (data in $dir/data)" >&2
    ;;
  stop)
    bin=$("$here/install.sh")
    if [ -f "$dir/data/PG_VERSION" ]; then
      as_pg "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true
    fi
    ;;
  url)
    superuser_url
    ;;
  *)
    echo "cluster.sh: unknown command $cmd" >&2
    exit 2
    ;;
esac
