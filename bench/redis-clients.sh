#!/usr/bin/env bash
# The Redis driver's own cost, beside redis-benchmark (not in CI): GETs of one 100-byte key
# by redis-benchmark (-P 1), by the redis crate's blocking connection (a thread per
# connection), its multiplexed async connection (the connection's driver a task of its
# own), and a direct connection as dbcompare's (the socket read and written by the task that
# sends the command), all in bench/redis-clients (values fetched, not decoded), and
# dbcompare's own SEARCH small phase (a GET of a record's key, every value decoded and
# checked), alternated over the repetitions on one throw-away Redis. Prints each client's
# median GETs/s, its median ratio to redis-benchmark (min-max over the repetitions) and its
# CPU per GET (redis-benchmark's from /usr/bin/time).
# Settings: CONCURRENCY (connections, 1), LOOPS (event loops of the async clients and
# redis-benchmark's --threads when above 1, 1), RUNS (repetitions, 5), SECONDS_PER_RUN (5).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
seconds=${SECONDS_PER_RUN:-5}
concurrency=${CONCURRENCY:-1}
loops=${LOOPS:-1}

# shellcheck source=bench/servers.sh
source bench/servers.sh
provisioning/install.sh redis
tools time
build_release redis-clients
bin=./target/release/dbcompare
clients=./target/redis-clients/release/redis-clients

start redis
url=$(cat "$work/redis.url")
port=${url##*:}; port=${port%%/*}
password=$(password_of "$url")
rb_threads=()
[ "$loops" -gt 1 ] && rb_threads=(--threads "$loops")
# redis-benchmark's GET reads the key its SET test writes (100 bytes); the crate's loops
# write their own.
redis-benchmark -h 127.0.0.1 -p "$port" -a "$password" -t set -d 100 -n 1 -q > /dev/null 2>&1
for rep in $(seq 1 "$runs"); do
  echo "repetition $rep of $runs" >&2
  order=(redis-benchmark sync async direct dbcompare)
  [ $((rep % 2)) -eq 0 ] && order=(dbcompare direct async sync redis-benchmark)
  for client in "${order[@]}"; do
    if [ "$client" = redis-benchmark ]; then
      # About as many GETs as the others make in the time given (the last repetition's rate).
      n=$(( ${rate:-10000} * seconds ))
      /usr/bin/time -f "%U %S" -o "$work/cpu" redis-benchmark -h 127.0.0.1 -p "$port" -a "$password" \
        -t get -P 1 -d 100 -c "$concurrency" -n "$n" "${rb_threads[@]}" --csv -q > "$work/rb" 2>/dev/null
      got=$(awk -F, '/GET/ { gsub(/"/, "", $2); print $2 }' "$work/rb")
      awk -v n="$n" -v r="$got" '{ printf "redis-benchmark %s %.2f\n", r, ($1 + $2) / n * 1e6 }' "$work/cpu"
      rate=${got%.*}
    elif [ "$client" = dbcompare ]; then
      search_figures redis "$url" "$concurrency" "$loops"
    else
      "$clients" "$client" "$url" "$seconds" "$concurrency" "$loops"
    fi
  done
done > "$work/all"

python3 - "$work/all" "$concurrency" "$loops" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
conc, loops = sys.argv[2], sys.argv[3]
def of(who, col):
    return [float(r[col]) for r in rows if r[0] == who]
base = of("redis-benchmark", 1)
print(f"{'client (concurrency ' + conc + ', GET)':44} {'GETs/s':>8} {'vs redis-benchmark':>20} {'CPU us/GET':>11}")
names = {"redis-benchmark": "redis-benchmark -P 1",
         "sync": "redis crate, blocking",
         "async": f"redis crate, multiplexed, {loops} loop(s)",
         "direct": f"direct connection, {loops} loop(s)",
         "dbcompare": f"dbcompare SEARCH small, {loops} loop(s)"}
for who, name in names.items():
    rates = of(who, 1)
    ratios = [r / b for r, b in zip(rates, base)]
    spread = f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"
    print(f"{name:44} {statistics.median(rates):>8.0f} {spread:>20} {statistics.median(of(who, 2)):>11.2f}")
PY
