#!/usr/bin/env bash
# Redis at concurrency 1, dbcompare beside redis-benchmark, with the server and the client
# placed on the same core, on two different cores, and where the scheduler puts them (not in
# CI). At concurrency 1 client and server take turns, so every answer and every request
# wakes the other side; on two cores that wake-up crosses to the other core, which on a VM
# whose idle cores halt at once is dear. Pinning both to one core takes that cost away and
# leaves the clients' own. Beside both runs the least a client can do (bench/bare/redis_get.c:
# GET, read the answer's bytes, wait in epoll_wait; no parsing, no clock, no check): the
# round trip's own cost on this machine, waiting as dbcompare's event loop waits (bare) and
# as redis-benchmark's does (bare-ae). Prints each placement's rates and their ratios to
# redis-benchmark's per repetition, the four clients in turn, their order alternated.
# Settings: RUNS (2), BIN (a dbcompare binary instead of this checkout's release build).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-2}
# shellcheck source=bench/servers.sh
source bench/servers.sh
provisioning/install.sh redis
bin=${BIN:-./target/release/dbcompare}
[ -n "${BIN:-}" ] || cargo build --release --locked --quiet
bare=$work/redis_get
gcc -O2 -o "$bare" bench/bare/redis_get.c
start redis
url=$(cat "$work/redis.url")
pw=$(password_of "$url")
port=${url##*:}; port=${port%%/*}
# redis-benchmark's GET reads the key its SET writes: a 100-byte value, as in peers.sh.
redis-benchmark -h 127.0.0.1 -p "$port" -a "$pw" -t set -d 100 -n 1 -q > /dev/null
sleep 1
server=$(pgrep -n -P "${pids[0]}" redis-server || pgrep -n redis-server)
[ "$(nproc)" -ge 2 ] || { echo "needs 2 cores" >&2; exit 2; }
echo "Redis GET at concurrency 1 by placement: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date +%F)"
echo "idle cores poll for (guest_halt_poll_ns): $(cat /sys/module/haltpoll/parameters/guest_halt_poll_ns 2>/dev/null || echo n/a)"
printf '%-10s %4s %16s %10s %8s %8s   %-24s\n' placement rep redis-benchmark dbcompare bare bare-ae 'ratios: dbc bare bare-ae'
# The clients, each printing its rate, placed by ${pin[@]}.
theirs() {
  "${pin[@]}" redis-benchmark -h 127.0.0.1 -p "$port" -a "$pw" -t get -P 1 -d 100 -c 1 \
    -n 100000 --csv -q | awk -F'"' '/GET/ { print $4 }'
}
ours() {
  "${pin[@]}" "$bin" run --store redis --url "redis=$url" --sizes small --searches-per-insert 10 \
    --warmup-runs 0 --runs 1 --concurrency 1 --quiet --out "$work/ours-$placement-$rep"
  search_rate "$work/ours-$placement-$rep/run.json"
}
least() { WAIT=$1 "${pin[@]}" "$bare" "$port" key:__rand_int__ 100000 "$pw" | cut -d' ' -f1; }
for placement in one-core two-cores scheduler; do
  case $placement in
    one-core) taskset -a -p -c 0 "$server" > /dev/null; pin=(taskset -c 0) ;;
    two-cores) taskset -a -p -c 1 "$server" > /dev/null; pin=(taskset -c 0) ;;
    scheduler) taskset -a -p -c "0-$(($(nproc) - 1))" "$server" > /dev/null; pin=() ;;
  esac
  for rep in $(seq 1 "$runs"); do
    if [ $((rep % 2)) = 1 ]; then
      t=$(theirs); o=$(ours); b=$(least loop); a=$(least ae)
    else
      a=$(least ae); b=$(least loop); o=$(ours); t=$(theirs)
    fi
    printf '%-10s %4s %16.0f %10.0f %8.0f %8.0f   %s\n' "$placement" "$rep" "$t" "$o" "$b" "$a" \
      "$(python3 -c "print(' '.join(f'{x / $t:.2f}' for x in ($o, $b, $a)))")"
  done
done
echo "ratios: dbcompare's searches per second, then each bare client's GETs per second, over redis-benchmark's GETs per second"
