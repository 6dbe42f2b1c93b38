#!/usr/bin/env bash
# demo.sh is `make demo`: outgoing webhooks end to end on this machine, with
# nothing left behind. It starts a throwaway PostgreSQL 18 cluster in a
# temporary directory, creates the secrets and the database (`bothy secrets
# init`, `bothy migrate --bootstrap`; tools/pg/throwaway.sh), then runs
# bin/bothy-demo, which runs a bothy process of role all and an HTTPS
# webhook receiver for hooks.example.com and shows every delivery verified
# (services/server/cmd/bothy-demo/README.md). The exit status is the
# demo's: 0 when every expected delivery was verified. On every exit the
# demo process (by its PID), the cluster and the temporary directory are
# removed.
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
# shellcheck source=../pg/throwaway.sh
. "$root/tools/pg/throwaway.sh"

throwaway_start bothy-demo "$bothy" '# Configuration of one `make demo` run (docs/operations/configuration.md).
# bothy-demo adds webhook.allowed_hosts, egress.allowed_hosts,
# egress.extra_ca_file and the two listen addresses (free loopback ports).'
throwaway_run "$demo" --config "$config"
