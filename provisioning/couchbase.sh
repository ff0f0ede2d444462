#!/usr/bin/env bash
# Installs Couchbase Server Community from Couchbase's package repository, initialises a
# one-node cluster and the benchmark's bucket with the quotas in configs/couchbase.toml, and
# prints the URL to give dbcompare.
#
#   COUCHBASE_PASSWORD=choose-one provisioning/couchbase.sh
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
password=${COUCHBASE_PASSWORD:?set COUCHBASE_PASSWORD to the administrator password to create}
user=${COUCHBASE_USER:-Administrator}
release=https://packages.couchbase.com/releases/couchbase-release/couchbase-release-1.0-noarch.deb

echo "This script DOWNLOADS Couchbase Server Community from Couchbase (packages.couchbase.com)"
echo "and installs it system-wide with apt. It needs root and curl."
if [ -t 0 ]; then read -r -p "Continue? [y/N] " answer; [ "$answer" = y ] || exit 1; fi

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)

# `key = value` from configs/couchbase.toml (first match; quotes removed).
setting() { sed -n "s/^$1 *= *\"\{0,1\}\([^\"]*\)\"\{0,1\} *$/\1/p" "$here/configs/couchbase.toml" | head -n 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
curl -fsSL -o "$work/couchbase-release.deb" "$release"
"${sudo[@]}" dpkg -i "$work/couchbase-release.deb"
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq couchbase-server-community
"${sudo[@]}" systemctl enable --now couchbase-server

cli=/opt/couchbase/bin/couchbase-cli
for _ in $(seq 1 120); do curl -fs http://127.0.0.1:8091/ui/index.html >/dev/null && break; sleep 1; done

# One-time setup: the cluster (3000 MB data, 1000 MB index, as in the blog) and the bucket.
"$cli" cluster-init -c 127.0.0.1 --cluster-username "$user" --cluster-password "$password" \
  --cluster-name "$(setting name)" --services "$(setting services)" \
  --cluster-ramsize "$(setting data_ramsize_mb)" --cluster-index-ramsize "$(setting index_ramsize_mb)"
"$cli" bucket-create -c 127.0.0.1 -u "$user" -p "$password" --bucket dbcompare \
  --bucket-type couchbase --bucket-ramsize "$(setting ram_quota_mb)" \
  --bucket-replica "$(setting replicas)" --enable-flush 1 --wait

echo "Couchbase is running. Benchmark it with:"
echo "  export DBCOMPARE_COUCHBASE_URL='couchbase://$user:PASSWORD@127.0.0.1/dbcompare'"
echo "  cargo run --release --features couchbase -- --store couchbase   # built with its feature"
