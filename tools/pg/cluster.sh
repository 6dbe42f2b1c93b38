#!/usr/bin/env bash
# cluster.sh manages the persistent local PostgreSQL 18 cluster of `make run`.
#
#   cluster.sh start DIR    initialise (first time) and start the cluster of DIR
#   cluster.sh stop DIR     stop it (fast shutdown)
#   cluster.sh url DIR      print the superuser URL (password included)
#   cluster.sh where DIR    print the folder that holds the cluster's data/
#   cluster.sh destroy DIR  stop it and remove its data, wherever it is kept
#
# DIR holds port, superuser_password and, normally, data/ and the logs. The
# first start picks a random free port on 127.0.0.1 and keeps it, so later
# starts reuse the data and the address. Password authentication
# (scram-sha-256) is on even locally: the superuser password is generated
# once and kept in DIR (mode 0600).
#
# As root, PostgreSQL runs as the unprivileged PG_RUN_USER, which must be
# able to pass through every folder above its data. A clone in root's home
# (mode 0700) or in a `mktemp -d` folder is closed to it, so there the data
# lives under the cache instead: $PG_CACHE_ROOT/clusters/<hash of DIR>. The
# choice is made once, at the first start, and recorded in DIR/data_home, so
# later runs find the same data even when folder modes change.
# PG_SERVER_OPTIONS adds server options to the start (for example
# "-c shared_preload_libraries=pg_stat_statements" for make bench-e2e).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=env.sh
. "$here/env.sh"

cmd=${1:?usage: cluster.sh start|stop|url|where|destroy DIR}
dir=${2:?usage: cluster.sh start|stop|url|where|destroy DIR}
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

# data_home prints the folder of data/, run/ and the PostgreSQL logs: the one
# recorded in DIR/data_home, else DIR when the PostgreSQL user can reach it
# (always when not root), else a folder under the cache keyed by DIR's path.
data_home() {
  if [ -f "$dir/data_home" ]; then
    cat "$dir/data_home"
  elif [ -f "$dir/data/PG_VERSION" ] || [ "$(id -u)" != "0" ] || as_pg test -x "$dir"; then
    echo "$dir"
  else
    echo "$PG_CACHE_ROOT/clusters/$(printf '%s' "$dir" | sha256sum | cut -c1-16)"
  fi
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
    home=$(data_home)
    if [ ! -f "$home/data/PG_VERSION" ]; then
      umask 077
      [ -f "$dir/superuser_password" ] || head -c 24 /dev/urandom | base64 | tr -d '/+=' > "$dir/superuser_password"
      umask 022
      mkdir -p "$home/data" "$home/run"
      # Every folder from the cache root down must let the PostgreSQL user in.
      [ "$home" = "$dir" ] || chmod 0755 "$(dirname "$home")" "$home"
      pwfile=$(mktemp)
      cp "$dir/superuser_password" "$pwfile"
      if [ "$(id -u)" = "0" ]; then
        chown -R "$PG_RUN_USER" "$home/data" "$home/run" "$pwfile"
      fi
      chmod 0700 "$home/data"
      as_pg "$bin/initdb" -D "$home/data" -U postgres --pwfile="$pwfile" \
        --auth=scram-sha-256 -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 \
        || { rm -f "$pwfile"; cat "$dir/initdb.log" >&2; exit 1; }
      rm -f "$pwfile"
      if [ "$home" != "$dir" ]; then
        echo "$home" > "$dir/data_home"
        echo "$dir" > "$home/cluster_of"
      fi
    fi
    if as_pg "$bin/pg_ctl" -D "$home/data" status >/dev/null 2>&1; then
      echo "PostgreSQL already running on 127.0.0.1:$port (data in $home/data)" >&2
      exit 0
    fi
    touch "$home/postgres.log"
    [ "$(id -u)" = "0" ] && chown "$PG_RUN_USER" "$home/postgres.log" "$home/run"
    as_pg "$bin/pg_ctl" -D "$home/data" -w -l "$home/postgres.log" \
      -o "-h 127.0.0.1 -p $port -k $home/run ${PG_SERVER_OPTIONS:-}" start >/dev/null \
      || { tail -20 "$home/postgres.log" >&2; exit 1; }
    echo "PostgreSQL 18 running on 127.0.0.1:$port (data in $home/data)" >&2
    ;;
  stop)
    bin=$("$here/install.sh")
    home=$(data_home)
    if [ -f "$home/data/PG_VERSION" ]; then
      as_pg "$bin/pg_ctl" -D "$home/data" -m fast stop >/dev/null 2>&1 || true
    fi
    ;;
  where)
    data_home
    ;;
  destroy)
    "$0" stop "$dir"
    home=$(data_home)
    [ "$home" = "$dir" ] || rm -rf "$home"
    rm -rf "$dir"
    ;;
  url)
    superuser_url
    ;;
  *)
    echo "cluster.sh: unknown command $cmd" >&2
    exit 2
    ;;
esac
