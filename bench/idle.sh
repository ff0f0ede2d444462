#!/usr/bin/env bash
# Where the 2 cores go when MySQL serves 8 connections (not in CI): dbcompare's classic
# search at concurrency 8 with one event loop and with a loop per connection, beside
# sysbench running the same query with its thread per connection, on one throw-away
# server, alternated over the repetitions. bench/cores.py reads /proc each second: the
# server's cores, the client's and the machine's idle ones; with the rate beside them, the
# server's CPU per query. Prints one line per repetition and side.
# Settings: RUNS (3), LOOPS (dbcompare's --client-threads to try, "1 8"), SECONDS_PER_RUN
# (sysbench's, 8), BIN (a dbcompare binary instead of this checkout's release build), SIZE
# (the classic size whose table both search, small; micro: 100 records, so that the records
# dbcompare checks answers against fit in a core's cache; each run is 600,000 searches).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
read -r -a loops <<< "${LOOPS:-1 8}"
seconds=${SECONDS_PER_RUN:-8}
size=${SIZE:-small}
case $size in micro) records=100 ;; tiny) records=1000 ;; small) records=10000 ;;
  *) echo "SIZE: micro, tiny or small" >&2; exit 2 ;; esac
# shellcheck source=bench/servers.sh
source bench/servers.sh
provisioning/install.sh mysql
tools sysbench
bin=${BIN:-./target/release/dbcompare}
[ -n "${BIN:-}" ] || cargo build --release --locked --quiet
# The client under its own command name, so that its CPU is told from the server's parent.
cp "$bin" "$work/dbc-client"
start mysql
url=$(cat "$work/mysql.url")
pw=$(password_of "$url")
port=${url##*:}; port=${port%%/*}
sleep 1
server=$(pgrep -n -P "${pids[0]}" || pgrep -n 'mariadbd|mysqld')
sb=(sysbench bench/same_query.lua --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port"
    --mysql-user=root --mysql-password="$pw" --mysql-db=dbcompare --threads=8
    --size="$size" --records="$records")
# The table the same query reads: a classic run at that size leaves it.
"$work/dbc-client" run --store mysql --url "mysql=$url" --sizes "$size" --searches-per-insert 1 \
  --warmup-runs 0 --runs 1 --concurrency 8 --quiet --out "$work/table"

ours() { # $1 = loops, $2 = repetition
  python3 bench/cores.py 30 "$server" dbc-client > "$work/cores" & local sampler=$!
  "$work/dbc-client" run --store mysql --url "mysql=$url" --sizes "$size" \
    --searches-per-insert $((600000 / records)) \
    --warmup-runs 0 --runs 1 --concurrency 8 --client-threads "$1" --quiet --out "$work/o-$1-$2"
  kill -TERM "$sampler" 2>/dev/null || true
  wait "$sampler" || true
  local rate
  rate=$(search_rate "$work/o-$1-$2/run.json")
  line "dbcompare, $1 loop(s)" "$2" "$rate"
}
theirs() { # $1 = repetition
  python3 bench/cores.py $((seconds + 1)) "$server" sysbench > "$work/cores" & local sampler=$!
  local rate
  rate=$("${sb[@]}" --time="$seconds" run | awk '/queries:/ { print substr($3, 2) }')
  wait "$sampler" || true
  line "sysbench, a thread per connection" "$1" "$rate"
}
line() { # $1 = side, $2 = repetition, $3 = queries per second; the cores from $work/cores
  read -r srv cli idl _ < "$work/cores"
  printf '%-36s %4s %9.0f %7s %7s %7s %10s\n' "$1" "$2" "$3" "$srv" "$cli" "$idl" \
    "$(python3 -c "print(f'{$srv / $3 * 1e6:.1f}')")"
}

echo "MySQL at concurrency 8: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date +%F)"
printf '%-36s %4s %9s %7s %7s %7s %10s\n' side rep "ops/s" server client idle "server us/op"
for rep in $(seq 1 "$runs"); do
  if [ $((rep % 2)) -eq 1 ]; then
    for l in "${loops[@]}"; do ours "$l" "$rep"; done; theirs "$rep"
  else
    theirs "$rep"; for l in "${loops[@]}"; do ours "$l" "$rep"; done
  fi
done
echo "server, client, idle: cores busy (idle: the machine's), medians of the seconds the server was busy"
