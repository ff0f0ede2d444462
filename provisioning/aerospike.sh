#!/usr/bin/env bash
# Installs Aerospike Server Community Edition with the vendor's tarball installer (asinstall),
# configures the benchmark's namespace from configs/aerospike.conf, starts it, and prints
# the URL to give dbcompare.
#
#   provisioning/aerospike.sh
#   AEROSPIKE_ARTIFACT=https://.../aerospike-server-community_..._debian12_x86_64.tgz provisioning/aerospike.sh
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck disable=SC1091
. /etc/os-release
case "$ID" in
  debian) platform="debian$VERSION_ID" ;;
  ubuntu) platform="ubuntu$VERSION_ID" ;;
  *) echo "unsupported system '$ID': see Aerospike's installation guide" >&2; exit 1 ;;
esac
artifact=${AEROSPIKE_ARTIFACT:-https://download.aerospike.com/download/server/latest/artifact/$platform}

echo "This script DOWNLOADS Aerospike Server Community Edition from Aerospike ($artifact)"
echo "and installs it system-wide with its installer. It needs root and curl."
if [ -t 0 ]; then read -r -p "Continue? [y/N] " answer; [ "$answer" = y ] || exit 1; fi

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
curl -fsSL -o "$work/aerospike.tgz" "$artifact"
tar -xzf "$work/aerospike.tgz" -C "$work"
(cd "$work"/aerospike-server-* && "${sudo[@]}" ./asinstall)

# One-time setup: the benchmark's namespace (test2, as in the blog) with a file storage engine.
"${sudo[@]}" mkdir -p /opt/aerospike/data /var/log/aerospike
"${sudo[@]}" cp "$here/configs/aerospike.conf" /etc/aerospike/aerospike.conf
"${sudo[@]}" systemctl enable --now aerospike

echo "Aerospike is running. Benchmark it with:"
echo "  export DBCOMPARE_AEROSPIKE_URL=aerospike://127.0.0.1:3000/test2"
echo "  cargo run --release --features aerospike -- --store aerospike   # built with its feature"
