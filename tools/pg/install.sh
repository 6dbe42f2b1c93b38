#!/usr/bin/env bash
# install.sh installs the pinned PostgreSQL 18 binaries into the cache and
# prints their bin directory. Safe to run again: an existing install is kept.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=env.sh
. "$here/env.sh"

if [ -x "$PG_BIN_DIR/postgres" ] && "$PG_BIN_DIR/postgres" --version >/dev/null 2>&1; then
  echo "$PG_BIN_DIR"
  exit 0
fi

command -v npm >/dev/null || { echo "install.sh: npm is missing; install Node.js and npm (Debian: apt-get install -y nodejs npm)" >&2; exit 1; }
mkdir -p "$PG_INSTALL_DIR"
chmod 0755 "$PG_CACHE_ROOT" "$PG_INSTALL_DIR"
(
  cd "$PG_INSTALL_DIR"
  [ -f package.json ] || echo '{"name":"bothy-postgresql","private":true}' > package.json
  npm install --no-audit --no-fund --loglevel=error "$PG_NPM_PACKAGE@$PG_NPM_VERSION" >&2
  # The package's postinstall restores the shared-library symlinks. npm 11 may
  # hold install scripts back, so run it ourselves; it is idempotent.
  cd "node_modules/$PG_NPM_PACKAGE" && node scripts/hydrate-symlinks.js >&2
)
chmod -R a+rX "$PG_INSTALL_DIR"
if ! "$PG_BIN_DIR/postgres" --version >/dev/null; then
  echo "install.sh: $PG_BIN_DIR/postgres does not run; see ldd output above" >&2
  ldd "$PG_BIN_DIR/postgres" | grep 'not found' >&2 || true
  exit 1
fi
echo "$PG_BIN_DIR"
