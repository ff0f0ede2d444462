#!/usr/bin/env bash
# dbcompare beside the native tools, on the same throw-away servers in one run (not in CI).
# Prints the ratio of dbcompare's throughput to each tool's at equal concurrency:
#   Redis GET            vs redis-benchmark -t get -P 1 (100-byte values)
#   PostgreSQL point select (prepared) vs pgbench -S -M prepared (scale 10)
#   MySQL point select (prepared)      vs sysbench oltp_point_select (100,000 rows)
#   pool suite Large Result Set and Connection Pool vs asyncmy, same queries, same table
# dbcompare's side is its classic SEARCH small phase (a prepared point lookup by a unique
# index, every record decoded and checked): more work per query than the tools' own.
# Installs what it needs: sysbench (Debian), asyncmy (PyPI, in .tools/venv).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${SECONDS_PER_RUN:-10}
runs=${RUNS:-3}

provisioning/install.sh postgres mysql redis
command -v sysbench >/dev/null || { apt-get install -y -qq sysbench >/dev/null || sudo apt-get install -y -qq sysbench >/dev/null; }
if [ ! -x .tools/venv/bin/python ]; then
  python3 -m venv .tools/venv
  .tools/venv/bin/pip install -q asyncmy
fi
cargo build --release --locked --quiet
bin=./target/release/dbcompare
pgbin=$(dirname "$(find /usr/lib/postgresql -name pgbench -type f | sort -V | tail -n 1)")

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

start() { # $1 = store; its URL lands in $work/$1.url (not in a subshell: pids must stay)
  "$bin" server "$1" > "$work/$1.url" 2> "$work/$1.log" &
  pids+=("$!")
  for _ in $(seq 1 300); do [ -s "$work/$1.url" ] && break; sleep 0.1; done
  [ -s "$work/$1.url" ] || { cat "$work/$1.log" >&2; exit 1; }
}
start redis
start postgres
start mysql
redis_url=$(cat "$work/redis.url")
pg_url=$(cat "$work/postgres.url")
my_url=$(cat "$work/mysql.url")

# dbcompare's point lookups at concurrency 1 and 8, on each server.
"$bin" run --store postgres,mysql,redis --url "postgres=$pg_url" --url "mysql=$my_url" --url "redis=$redis_url" \
  --sizes small --searches-per-insert 10 --warmup-runs 1 --runs "$runs" --concurrency 1,8 --quiet --out "$work/classic"
"$bin" run --suite pool --store mysql --url "mysql=$my_url" --warmup-runs 1 --runs "$runs" --quiet --out "$work/pool"

# The native tools on the same servers.
redis_port=${redis_url##*:}; redis_port=${redis_port%%/*}
pg_port=${pg_url##*:}; pg_port=${pg_port%%/*}
my_port=${my_url##*:}; my_port=${my_port%%/*}
for c in 1 8; do
  redis-benchmark -h 127.0.0.1 -p "$redis_port" -t get -P 1 -d 100 -c "$c" -n $((20000 * c)) --csv -q \
    | awk -F'"' '/GET/ { print $4 }' > "$work/redis-$c"
done
"$pgbin/pgbench" -h 127.0.0.1 -p "$pg_port" -U bench -i -s 10 -q postgres > /dev/null 2>&1
for c in 1 8; do
  "$pgbin/pgbench" -h 127.0.0.1 -p "$pg_port" -U bench -S -M prepared -c "$c" -j "$c" -T "$seconds" postgres 2>/dev/null \
    | awk '/^tps/ { print $3; exit }' > "$work/pg-$c"
done
sb=(sysbench oltp_point_select --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$my_port" \
  --mysql-user=root --mysql-db=dbcompare --tables=1 --table-size=100000)
"${sb[@]}" prepare > /dev/null
for c in 1 8; do
  "${sb[@]}" --threads="$c" --time="$seconds" run | awk -F'[(]' '/queries:/ { split($2, a, " "); print a[1] }' > "$work/my-$c"
done
.tools/venv/bin/python bench/asyncmy_pool.py "$my_url" "$runs" > "$work/asyncmy.json"

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
classic = json.load(open(f"{work}/classic/run.json"))
pool = json.load(open(f"{work}/pool/run.json"))
asyncmy = json.load(open(f"{work}/asyncmy.json"))
def search(store, c):
    s = next(s for s in classic["stores"] if s["store"] == store)
    assert s["status"] == "ok", s.get("error")
    return next(p for p in s["phases"] if p["kind"] == "search" and p["concurrency"] == c)["ops_per_s"]
def native(name, c):
    return float(open(f"{work}/{name}-{c}").read().strip())
m = classic["machine"]
print(f"dbcompare beside the native tools, {classic['finished_at'][:10]}, {m['cpu_model']}, {m['cores']} cores")
print(f"{'workload':44} {'conc':>4} {'dbcompare':>10} {'native':>10} {'ratio':>6}")
for store, tool, name in [("redis", "redis-benchmark GET -P 1", "redis"),
                          ("postgres", "pgbench -S -M prepared", "pg"),
                          ("mysql", "sysbench oltp_point_select", "my")]:
    for c in (1, 8):
        ours, theirs = search(store, c), native(name, c)
        print(f"{store + ' point lookup vs ' + tool:44} {c:>4} {ours:>10.0f} {theirs:>10.0f} {ours / theirs:>6.2f}")
phases = {p["size"]["name"]: p for p in next(s for s in pool["stores"] if s["store"] == "mysql")["phases"]}
for test in ("LargeResultSet", "ConnectionPool"):
    ours, theirs = phases[test]["wall_ms"] / 1000, asyncmy[test]
    print(f"{'mysql ' + test + ' vs asyncmy ' + asyncmy['asyncmy'] + ' (s)':44} {'':>4} {ours:>10.3f} {theirs:>10.3f} {theirs / ours:>6.2f}")
print("ratio: dbcompare's throughput over the tool's (above 1: dbcompare is faster)")
PY
