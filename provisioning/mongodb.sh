#!/usr/bin/env bash
# Installs MongoDB Community from MongoDB's own apt repository (Debian 12 or Ubuntu 22.04/24.04),
# starts it with configs/mongod.conf as a single-node replica set (so that each insert can
# run in a session transaction), and prints the URL to give dbcompare.
#
#   provisioning/mongodb.sh            # MongoDB 8.0
#   MONGODB_VERSION=7.0 provisioning/mongodb.sh
set -euo pipefail

version=${MONGODB_VERSION:-8.0}
here=$(cd "$(dirname "$0")/.." && pwd)

echo "This script DOWNLOADS MongoDB $version from MongoDB's repository (www.mongodb.org, repo.mongodb.org)"
echo "and installs it system-wide with apt. It needs root, curl and gpg."
if [ -t 0 ]; then read -r -p "Continue? [y/N] " answer; [ "$answer" = y ] || exit 1; fi

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)

# shellcheck disable=SC1091
. /etc/os-release
case "$ID" in
  debian) repo="deb [ signed-by=/usr/share/keyrings/mongodb-server-$version.gpg ] http://repo.mongodb.org/apt/debian $VERSION_CODENAME/mongodb-org/$version main" ;;
  ubuntu) repo="deb [ arch=amd64,arm64 signed-by=/usr/share/keyrings/mongodb-server-$version.gpg ] https://repo.mongodb.org/apt/ubuntu $VERSION_CODENAME/mongodb-org/$version multiverse" ;;
  *) echo "unsupported system '$ID': see MongoDB's installation guide" >&2; exit 1 ;;
esac

curl -fsSL "https://www.mongodb.org/static/pgp/server-$version.asc" |
  "${sudo[@]}" gpg --batch --yes -o "/usr/share/keyrings/mongodb-server-$version.gpg" --dearmor
echo "$repo" | "${sudo[@]}" tee "/etc/apt/sources.list.d/mongodb-org-$version.list" >/dev/null
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq mongodb-org

"${sudo[@]}" cp "$here/configs/mongod.conf" /etc/mongod.conf
"${sudo[@]}" mkdir -p /var/lib/mongodb /var/log/mongodb
"${sudo[@]}" chown -R mongodb:mongodb /var/lib/mongodb /var/log/mongodb
"${sudo[@]}" systemctl enable --now mongod

# One-time setup: a single-node replica set, so that transactions work.
for _ in $(seq 1 60); do mongosh --quiet --eval 'db.runCommand({ping: 1})' >/dev/null 2>&1 && break; sleep 1; done
mongosh --quiet --eval 'try { rs.status() } catch (e) { rs.initiate({_id: "rs0", members: [{_id: 0, host: "127.0.0.1:27017"}]}) }'

echo "MongoDB is running. Benchmark it with:"
echo "  export DBCOMPARE_MONGODB_URL='mongodb://127.0.0.1:27017/dbcompare?replicaSet=rs0'"
echo "  cargo run --release --features mongodb -- --store mongodb   # built with its feature"
