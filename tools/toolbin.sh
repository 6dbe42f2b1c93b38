#!/usr/bin/env bash
# toolbin.sh NAME prints the path of the pinned third-party tool NAME, built
# (once, then cached in Go's build cache) from the tools module that pins it:
#
#   golangci-lint  tools/go.mod             (v2.15.0)
#   gitleaks       tools/gitleaks/go.mod    (v8.30.1)
#   go-licenses    tools/golicenses/go.mod  (v1.6.0)
#
# gitleaks and go-licenses have modules of their own because their
# dependencies do not build together with golangci-lint's under one module
# graph (charmbracelet/x/ansi and otiai10/copy API changes).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
case "${1:-}" in
  golangci-lint) mod=$here ;;
  gitleaks) mod=$here/gitleaks ;;
  go-licenses) mod=$here/golicenses ;;
  *) echo "usage: toolbin.sh golangci-lint|gitleaks|go-licenses" >&2; exit 2 ;;
esac
cd "$mod" && GOWORK=off exec go tool -n "$1"
