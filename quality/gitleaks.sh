#!/usr/bin/env bash
# gitleaks.sh [ROOT] runs the pinned gitleaks with ROOT/.gitleaks.toml over
#   1. the git history of HEAD (every commit reachable from it), and
#   2. the work tree: every file git knows (tracked, or untracked and not
#      ignored), so local secrets under ignored folders (.local/) are not
#      reported, while a secret not yet committed is.
# Findings are printed redacted; the exit status is 1 when there is any.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "${1:-$here/..}" && pwd)
gitleaks=$("$here/../tools/toolbin.sh" gitleaks)
config=$root/.gitleaks.toml
flags=(--config "$config" --redact --verbose --no-banner --no-color --exit-code 1)

status=0
echo "gitleaks: history of HEAD"
"$gitleaks" git "${flags[@]}" --log-opts="--full-history HEAD" "$root" || status=1

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
(
  cd "$root"
  git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do
      [ -f "$f" ] && printf '%s\0' "$f"
    done | xargs -0 -r cp --parents -t "$tree"
)
echo "gitleaks: work tree"
(cd "$tree" && "$gitleaks" dir "${flags[@]}" .) || status=1
exit $status
