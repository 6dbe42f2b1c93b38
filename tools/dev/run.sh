#!/usr/bin/env bash
# run.sh is `make run`: a local bothy on 127.0.0.1:8080 with a persistent
# PostgreSQL 18 cluster of .local/pg (its data in .local/pg/data, or under
# the cache when the clone sits in a folder the PostgreSQL user cannot enter;
# tools/pg/cluster.sh). Safe to run again: the cluster, the
# secrets and the configuration are kept; migrations only apply what is new.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
local_dir="$root/.local"
bin="$root/bin/bothy"
config="$local_dir/config.yaml"

mkdir -p "$local_dir"
"$root/tools/pg/cluster.sh" start "$local_dir/pg"
port=$(cat "$local_dir/pg/port")
pg_data="$("$root/tools/pg/cluster.sh" where "$local_dir/pg")/data"
umask 077
"$root/tools/pg/cluster.sh" url "$local_dir/pg" > "$local_dir/pg/admin_url"
umask 022

if [ ! -f "$config" ]; then
  cat > "$config" <<YAML
# Configuration of the local bothy of \`make run\` (docs/operations/configuration.md).
database:
  url: postgres://bothy_app@127.0.0.1:$port/bothy?sslmode=disable
  migration_url: postgres://bothy_owner@127.0.0.1:$port/bothy?sslmode=disable
secrets:
  dir: $local_dir/secrets
http:
  listen_address: 127.0.0.1:8080
  operator_listen_address: 127.0.0.1:9090
YAML
fi

"$bin" secrets init --config "$config"
"$bin" migrate --bootstrap --admin-url-file "$local_dir/pg/admin_url" --config "$config"

# The owner hint only while there is no owner: a second `owner create` for
# the same address answers conflict (email_taken).
owner_hint=""
if [ "$("$bin" owner count --config "$config" 2>/dev/null || echo 0)" = "0" ]; then
  owner_hint="  first owner    $bin owner create --email robin@example.com --config $config
"
fi

cat <<TEXT

bothy is starting on http://127.0.0.1:8080 (operators: http://127.0.0.1:9090/metrics)
  configuration  $config
  database       PostgreSQL 18 on 127.0.0.1:$port, data in $pg_data
  readiness      curl -s http://127.0.0.1:8080/readyz
${owner_hint}  first webhook  docs/guides/first-webhook.md
Stop with Ctrl-C; run \`make run\` again to continue with the same data.

TEXT
exec "$bin" serve --role all --config "$config"
