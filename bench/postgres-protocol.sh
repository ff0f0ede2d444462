#!/usr/bin/env bash
# What a PostgreSQL client built on postgres-protocol's message codecs costs (not in CI):
# on one throw-away server, concurrency 1, the classic search's query, alternated RUNS times
# (5) between dbcompare's search (its own connection, src/store/postgres/wire.rs), a bare loop of the same query written
# with postgres-protocol on one tokio task (bench/postgres-clients/) and pgbench
# with the same query (bench/same_query.pgbench). Prints each side's searches/s and client
# CPU us per search, then the medians and the ratios to pgbench.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
queries=${QUERIES:-100000}
# shellcheck source=bench/servers.sh
source bench/servers.sh
provisioning/install.sh postgres
tools time
build_release postgres-clients
loop=./target/postgres-clients/release/postgres-clients
bin=./target/release/dbcompare
pgbin=$(dirname "$(find /usr/lib/postgresql -name pgbench -type f | sort -V | tail -n 1)")
start postgres
url=$(cat "$work/postgres.url")
port=${url##*:}; port=${port%%/*}
user=${url#*://}; user=${user%%:*}
PGPASSWORD=$(password_of "$url")
export PGPASSWORD
pgbench() {
  /usr/bin/time -f "%U %S" -o "$work/time" "$pgbin/pgbench" -h 127.0.0.1 -p "$port" -U "$user" \
    -M prepared -f bench/same_query.pgbench -c 1 -j 1 -t "$queries" postgres 2>/dev/null \
    | awk '/^tps/ { printf "pgbench %.0f ", $3 }'
  awk -v n="$queries" '{ printf "%.2f\n", ($1 + $2) / n * 1e6 }' "$work/time"
}
for rep in $(seq 1 "$runs"); do
  echo "repetition $rep of $runs" >&2
  # The first search run makes the table the other two read.
  search_figures postgres "$url" 1 1 | cut -d" " -f1-3
  if [ $((rep % 2)) -eq 1 ]; then
    "$loop" "$port" "$user" "$PGPASSWORD" "$queries"
    pgbench
  else
    pgbench
    "$loop" "$port" "$user" "$PGPASSWORD" "$queries"
  fi
done | tee "$work/figures" | sed 's/^/  /'
python3 - "$work/figures" <<'PY'
import statistics, sys
sides = {}
for line in open(sys.argv[1]):
    *name, rate, cpu = line.split()
    sides.setdefault(" ".join(name), []).append((float(rate), float(cpu)))
base = sides["pgbench"]
print(f"{'client':24} {'searches/s':>10} {'CPU us':>7} {'rate/pgbench':>18} {'pgbench CPU/CPU':>18}")
for name, figures in sides.items():
    rates = [r / b[0] for (r, _), b in zip(figures, base)]
    cpus = [b[1] / c for (_, c), b in zip(figures, base)]
    print(f"{name:24} {statistics.median(f[0] for f in figures):>10.0f}"
          f" {statistics.median(f[1] for f in figures):>7.2f}"
          f" {statistics.median(rates):>6.2f} ({min(rates):.2f}-{max(rates):.2f})"
          f" {statistics.median(cpus):>6.2f} ({min(cpus):.2f}-{max(cpus):.2f})")
PY
