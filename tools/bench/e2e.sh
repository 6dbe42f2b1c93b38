#!/usr/bin/env bash
# e2e.sh is `make bench-e2e`: the end-to-end benchmark of outgoing webhooks
# on this machine, with nothing left behind. Like tools/demo/demo.sh it
# starts a throwaway PostgreSQL 18 cluster in a temporary directory (here
# with pg_stat_statements loaded), creates the secrets and the database
# (`bothy secrets init`, `bothy migrate --bootstrap`; tools/pg/throwaway.sh),
# then runs bin/bothy-bench, which starts `bothy serve --role api` and
# `--role worker` processes per scenario, an HTTPS receiver and the load
# generator (services/server/cmd/bothy-bench/README.md). Arguments go to
# bothy-bench (for example -scenarios fleet,hot -scale 0.01);
# BENCH_E2E_SCALE scales every message count. On every exit the benchmark
# (by its PID), the cluster and the temporary directory are removed.
#
# Expects bin/bothy and bin/bothy-bench (make bench-e2e builds both) and
# the PostgreSQL binaries of tools/pg/install.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bothy="$root/bin/bothy"
bench="$root/bin/bothy-bench"
for b in "$bothy" "$bench"; do
  [ -x "$b" ] || { echo "e2e.sh: $b is missing; run make bench-e2e" >&2; exit 1; }
done
# shellcheck source=../pg/throwaway.sh
. "$root/tools/pg/throwaway.sh"

throwaway_start bothy-bench "$bothy" '# Configuration of one `make bench-e2e` run (docs/operations/configuration.md).
# bothy-bench adds per scenario database.url and database.migration_url (a
# copy of the database bothy), webhook.allowed_hosts, egress.allowed_hosts,
# egress.extra_ca_file and the two listen addresses (free loopback ports).
# Every other key keeps its default, as an operator would start.' \
  "-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.max=1000 -c pg_stat_statements.track_planning=on -c track_wal_io_timing=on"
mkdir -p "$tmp/work"
throwaway_run "$bench" --bothy "$bothy" --config "$config" --admin-url-file "$tmp/admin_url" \
  --pg-data "$tmp/pg/data" --work-dir "$tmp/work" --queries "$root/services/server/internal" "$@"
