#!/usr/bin/env bash
# build.sh [ROOT [OUT]] is `make docs`: it builds the documentation site of
# ROOT (default: this repository) into OUT (default: ROOT/site) offline with
# the generators pinned in tools/docs/package-lock.json (VitePress 1.6.4,
# Redocly CLI 2.77.0). Broken links fail it: stage.mjs checks links to
# repository files and folders, VitePress the links between pages.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "${1:-$here/../..}" && pwd)
out=${2:-$root/site}

# Install the pinned packages once per lock file (npm ci wipes node_modules,
# so it runs only when the lock changed).
stamp=$here/node_modules/.bothy-lock.sha256
want=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
node "$here/stage.mjs" "$root" "$stage"
# The pages import vue and the theme: resolve them from the pinned packages.
ln -s "$here/node_modules" "$stage/node_modules"
rm -rf "$out"
cd "$here"
BOTHY_DOCS_STAGE=$stage BOTHY_DOCS_OUT=$out node_modules/.bin/vitepress build . 2>&1 |
  grep -v -E '^\s*$|vitepress v[0-9]' || true
# VitePress exits non-zero on dead links; pipefail would hide it behind grep.
[ -f "$out/index.html" ] || { echo "docs: the build failed (see above)" >&2; exit 1; }
echo "docs: site in ${out#"$root/"} ($(find "$out" -name '*.html' | wc -l) pages)"
