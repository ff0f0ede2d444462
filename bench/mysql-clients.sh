#!/usr/bin/env bash
# The MySQL driver's own cost, beside sysbench (not in CI): over TCP, the same prepared query
# on dbcompare's table (bench/same_query.lua) run by sysbench (a thread per connection), by
# the blocking `mysql` crate (a thread per connection too) and by mysql_async (tasks on
# LOOPS current-thread runtimes) in bench/mysql-clients (rows fetched, not decoded; and, as
# `checked`, each row decoded as dbcompare decodes it and digested), and
# dbcompare's own SEARCH small phase (mysql_async on LOOPS event loops, every row decoded and
# checked), alternated over the repetitions on one throw-away MariaDB. Prints each client's
# median queries/s and CPU per query (sysbench's from /usr/bin/time), and the median (min-max)
# of the per-repetition ratios to sysbench's.
# Settings: CONCURRENCY (connections, 1), LOOPS (event loops of the async clients, 1),
# RUNS (repetitions, 5), SECONDS_PER_RUN (5), BIN (a dbcompare binary to measure instead of
# this checkout's release build; a path from the repository's root).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
seconds=${SECONDS_PER_RUN:-5}
concurrency=${CONCURRENCY:-1}
loops=${LOOPS:-1}

# shellcheck source=bench/servers.sh
source bench/servers.sh
provisioning/install.sh mysql
tools sysbench time
bin=${BIN:-./target/release/dbcompare}
if [ -n "${BIN:-}" ]; then
  CARGO_TARGET_DIR=target/mysql-clients cargo build --release --locked --quiet \
    --manifest-path bench/mysql-clients/Cargo.toml
else
  build_release mysql-clients
fi
clients=./target/mysql-clients/release/mysql-clients

start mysql
url=$(cat "$work/mysql.url")
port=${url##*:}; port=${port%%/*}
password=$(password_of "$url")
# dbcompare's table at size small, as the classic suite leaves it.
"$bin" run --store mysql --url "mysql=$url" --sizes small --searches-per-insert 1 \
  --durability relaxed --warmup-runs 0 --runs 1 --quiet --out "$work/fill" > /dev/null
sb=(sysbench bench/same_query.lua --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port"
    --mysql-user=root --mysql-password="$password" --mysql-db=dbcompare --threads="$concurrency" --time="$seconds")
for rep in $(seq 1 "$runs"); do
  echo "repetition $rep of $runs" >&2
  order=(sysbench sync async checked dbcompare)
  [ $((rep % 2)) -eq 0 ] && order=(dbcompare checked async sync sysbench)
  for client in "${order[@]}"; do
    if [ "$client" = sysbench ]; then
      /usr/bin/time -f "%U %S" -o "$work/cpu" "${sb[@]}" run > "$work/sb"
      awk '/queries:/ { q = $2; r = substr($3, 2) } END { print q, r }' "$work/sb" > "$work/q"
      read -r queries rate < "$work/q"
      awk -v q="$queries" -v r="$rate" '{ printf "sysbench %s %.2f\n", r, ($1 + $2) / q * 1e6 }' "$work/cpu"
    elif [ "$client" = dbcompare ]; then
      search_figures mysql "$url" "$concurrency" "$loops"
    else
      "$clients" "$client" "$url" "$seconds" "$concurrency" "$loops"
    fi
  done
done > "$work/all"

python3 - "$work/all" "$concurrency" "$loops" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
conc, loops = sys.argv[2], sys.argv[3]
names = {"sysbench": "sysbench (libmariadb)", "sync": "mysql crate, blocking",
         "async": f"mysql_async, {loops} current-thread loop(s)",
         "checked": "mysql_async, rows decoded and digested",
         "dbcompare": f"dbcompare SEARCH small, {loops} loop(s)"}
# Each repetition printed one line per client: ratios are taken within a repetition.
reps = [{r[0]: (float(r[1]), float(r[2])) for r in rows[i:i + len(names)]}
        for i in range(0, len(rows), len(names))]
def spread(xs):
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"
print(f"{'client (concurrency ' + conc + ', same query)':40} {'queries/s':>10} {'vs sysbench':>18} "
      f"{'CPU us/query':>13} {'sysbench CPU/CPU':>18}")
for who, name in names.items():
    rate = statistics.median(rep[who][0] for rep in reps)
    cpu = statistics.median(rep[who][1] for rep in reps)
    rate_ratio = spread([rep[who][0] / rep["sysbench"][0] for rep in reps])
    cpu_ratio = spread([rep["sysbench"][1] / rep[who][1] for rep in reps])
    print(f"{name:40} {rate:>10.0f} {rate_ratio:>18} {cpu:>13.2f} {cpu_ratio:>18}")
PY
