#!/usr/bin/env bash
# Installs the servers dbcompare starts throw-away instances of, from Debian/Ubuntu
# packages. Idempotent: a store whose server is already installed is left alone.
#
#   provisioning/install.sh                   # postgres, mysql (MariaDB) and redis
#   provisioning/install.sh postgres redis    # only these
#
# Debian's policy keeps apt from starting the system services in containers; on a
# machine where apt does start them, they listen on their default ports, which dbcompare
# does not use (its throw-away servers take free ports on 127.0.0.1).
set -euo pipefail

usage() {
  echo "usage: $0 [sqlite|postgres|mysql|redis|shellcheck]..." >&2
  exit 2
}

if [ "$#" -eq 0 ]; then
  set -- postgres mysql redis
fi

installed_postgres() { compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || command -v initdb >/dev/null; }
installed_mysql() { command -v mariadbd >/dev/null || command -v mysqld >/dev/null || [ -x /usr/sbin/mariadbd ] || [ -x /usr/sbin/mysqld ]; }
installed_redis() { command -v redis-server >/dev/null; }
installed_shellcheck() { command -v shellcheck >/dev/null; }

packages=()
for store in "$@"; do
  case "$store" in
    sqlite) echo "sqlite: embedded in dbcompare, nothing to install" ;;
    postgres) if installed_postgres; then echo "postgres: already installed"; else packages+=(postgresql); fi ;;
    mysql) if installed_mysql; then echo "mysql: already installed"; else packages+=(mariadb-server); fi ;;
    redis) if installed_redis; then echo "redis: already installed"; else packages+=(redis-server); fi ;;
    shellcheck) if installed_shellcheck; then echo "shellcheck: already installed"; else packages+=(shellcheck); fi ;;
    mongodb|aerospike|couchbase)
      echo "$store: not packaged by Debian; give a server with --url $store=... (see README)" >&2 ;;
    *) echo "unknown store '$store'" >&2; usage ;;
  esac
done

if [ "${#packages[@]}" -eq 0 ]; then
  exit 0
fi

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
