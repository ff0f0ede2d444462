#!/usr/bin/env bash
# The MySQL driver's own cost, beside sysbench (not in CI): over TCP, the same prepared query
# on dbcompare's table (bench/same_query.lua) run by sysbench (a thread per connection), by
# the blocking `mysql` crate (a thread per connection too) and by mysql_async (tasks on
# LOOPS current-thread runtimes) in bench/mysql-clients (rows fetched, not decoded), and
# dbcompare's own SEARCH small phase (mysql_async on LOOPS event loops, every row decoded and
# checked), alternated over the repetitions on one throw-away MariaDB. Prints each client's
# median queries/s and CPU per query (sysbench's from /usr/bin/time).
# Settings: CONCURRENCY (connections, 1), LOOPS (event loops of the async clients, 1),
# RUNS (repetitions, 5), SECONDS_PER_RUN (5).
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
build_release mysql-clients
bin=./target/release/dbcompare
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
  order=(sysbench sync async dbcompare)
  [ $((rep % 2)) -eq 0 ] && order=(dbcompare async sync sysbench)
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
base = statistics.median(float(r[1]) for r in rows if r[0] == "sysbench")
conc, loops = sys.argv[2], sys.argv[3]
print(f"{'client (concurrency ' + conc + ', same query)':40} {'queries/s':>10} {'vs sysbench':>12} {'CPU us/query':>13}")
names = {"sysbench": "sysbench (libmariadb)", "sync": "mysql crate, blocking",
         "async": f"mysql_async, {loops} current-thread loop(s)",
         "dbcompare": f"dbcompare SEARCH small, {loops} loop(s)"}
for who, name in names.items():
    rate = statistics.median(float(r[1]) for r in rows if r[0] == who)
    cpu = statistics.median(float(r[2]) for r in rows if r[0] == who)
    print(f"{name:40} {rate:>10.0f} {rate / base:>12.2f} {cpu:>13.2f}")
PY
