#!/usr/bin/env bash
# Installs the servers dbcompare starts throw-away instances of, from Debian/Ubuntu
# packages. Idempotent: a store whose server is already installed is left alone.
#
#   provisioning/install.sh                   # postgres, mysql (MariaDB) and redis
#   provisioning/install.sh postgres redis    # only these
#   provisioning/install.sh redis-cluster     # redis-server and redis-cli, which make the
#                                             # throw-away Redis Cluster
#   provisioning/install.sh jongodb           # the in-memory MongoDB-wire-compatible server
#                                             # the MongoDB adapter's tests run against
#                                             # (npm package, into .tools/ of this checkout)
#   provisioning/install.sh secantus          # SecantusDB, a MongoDB-wire-compatible server
#                                             # on WiredTiger the adapter's tests run
#                                             # against (PyPI package, into .tools/)
#   provisioning/install.sh chromium          # headless Chromium, for the test that opens
#                                             # report.html in a real browser
#   provisioning/install.sh socat             # the TLS front the MongoDB TLS test puts
#                                             # before jongodb
#
# MongoDB, Aerospike and Couchbase are not in Debian's archive: provisioning/mongodb.sh,
# aerospike.sh and couchbase.sh install them from their vendors.
#
# Debian's policy keeps apt from starting the system services in containers; on a
# machine where apt does start them, they listen on their default ports, which dbcompare
# does not use (its throw-away servers take free ports on 127.0.0.1).
set -euo pipefail

usage() {
  echo "usage: $0 [sqlite|postgres|mysql|redis|redis-cluster|jongodb|secantus|shellcheck|socat|chromium]..." >&2
  exit 2
}

here=$(cd "$(dirname "$0")/.." && pwd)
jongodb_package=@jongodb/memory-server-bin-linux-x64-gnu@0.1.6
jongodb_dir="$here/.tools/jongodb"
jongodb_bin="$jongodb_dir/node_modules/@jongodb/memory-server-bin-linux-x64-gnu/bin/jongodb"
want_jongodb=no
secantus_package=SecantusDB==0.7.0b3
secantus_dir="$here/.tools/secantus"
secantus_bin="$secantus_dir/bin/secantusd-py"
want_secantus=no

if [ "$#" -eq 0 ]; then
  set -- postgres mysql redis
fi

# As root, PostgreSQL also needs its `postgres` user (initdb refuses root); the package creates it.
installed_postgres() {
  { compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || command -v initdb >/dev/null; } &&
    { [ "$(id -u)" -ne 0 ] || id postgres >/dev/null 2>&1; }
}
installed_mysql() { command -v mariadbd >/dev/null || command -v mysqld >/dev/null || [ -x /usr/sbin/mariadbd ] || [ -x /usr/sbin/mysqld ]; }
installed_redis() { command -v redis-server >/dev/null && command -v redis-cli >/dev/null; }
installed_shellcheck() { command -v shellcheck >/dev/null; }
installed_chromium() { command -v chromium >/dev/null; }
installed_socat() { command -v socat >/dev/null; }

packages=()
for store in "$@"; do
  case "$store" in
    sqlite) echo "sqlite: embedded in dbcompare, nothing to install" ;;
    postgres) if installed_postgres; then echo "postgres: already installed"; else packages+=(postgresql); fi ;;
    mysql) if installed_mysql; then echo "mysql: already installed"; else packages+=(mariadb-server); fi ;;
    redis) if installed_redis; then echo "redis: already installed"; else packages+=(redis-server redis-tools); fi ;;
    redis-cluster) if installed_redis; then echo "redis-cluster: already installed"; else packages+=(redis-server redis-tools); fi ;;
    shellcheck) if installed_shellcheck; then echo "shellcheck: already installed"; else packages+=(shellcheck); fi ;;
    socat) if installed_socat; then echo "socat: already installed"; else packages+=(socat); fi ;;
    chromium) if installed_chromium; then echo "chromium: already installed"; else packages+=(chromium); fi ;;
    jongodb)
      if [ -x "$jongodb_bin" ]; then
        echo "jongodb: already installed"
      else
        want_jongodb=yes
        command -v npm >/dev/null || packages+=(npm)
      fi ;;
    secantus)
      if [ -x "$secantus_bin" ]; then
        echo "secantus: already installed"
      else
        want_secantus=yes
        python3 -c 'import venv, ensurepip' 2>/dev/null || packages+=(python3-venv)
      fi ;;
    mongodb|aerospike|couchbase)
      echo "$store: not in Debian's archive; provisioning/$store.sh installs it from its vendor, or give a server with --url $store=..." >&2 ;;
    *) echo "unknown store '$store'" >&2; usage ;;
  esac
done

if [ "${#packages[@]}" -gt 0 ]; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "installing ${packages[*]} needs root (or sudo)" >&2; exit 1; }
    sudo=(sudo)
  fi
  echo "installing: ${packages[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
  echo "installed: ${packages[*]}"
fi

if [ "$want_jongodb" = yes ]; then
  echo "installing: $jongodb_package (npm) into .tools/jongodb"
  mkdir -p "$jongodb_dir"
  npm install --prefix "$jongodb_dir" --no-save --no-audit --no-fund --loglevel=error "$jongodb_package" >/dev/null
  [ -x "$jongodb_bin" ] || { echo "jongodb: $jongodb_bin is missing after the install" >&2; exit 1; }
  echo "installed: jongodb"
fi

if [ "$want_secantus" = yes ]; then
  echo "installing: $secantus_package (PyPI) into .tools/secantus"
  rm -rf "$secantus_dir"
  python3 -m venv "$secantus_dir"
  "$secantus_dir/bin/pip" install --quiet --disable-pip-version-check "$secantus_package"
  [ -x "$secantus_bin" ] || { echo "secantus: $secantus_bin is missing after the install" >&2; exit 1; }
  echo "installed: secantus"
fi
