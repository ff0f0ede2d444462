#!/usr/bin/env bash
# Two dbcompare builds side by side on one server (not in CI): each runs the classic SEARCH
# small phase (10 searches per record, after one warm-up run), alternating which goes first
# over PAIRS pairs, and the script prints each build's median searches/s and client CPU per
# search (and the server's, where run.json has it), with the median (min-max) of the
# per-pair ratios. For a change's before and after:
#   git worktree add /tmp/before HEAD~1
#   CARGO_TARGET_DIR=target/before cargo build --release --manifest-path /tmp/before/Cargo.toml
#   bench/ab.sh target/before/release/dbcompare target/release/dbcompare redis
# A server is started with the second build's `dbcompare server STORE` (postgres, mysql or
# redis), unless URL is given; SQLite needs none. Settings: PAIRS (8), CONCURRENCY (1), LOOPS (1), URL,
# WORKLOAD: a YCSB workload (a to f) to run instead of the classic search (ycsb_figures), and
# POOL=1: the pool suite's Large Result Set instead (pool_figures; its calls/s are 1 / time).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 3 ] || { echo "usage: bench/ab.sh BEFORE AFTER STORE" >&2; exit 2; }
before=$1 after=$2 store=$3
pairs=${PAIRS:-8}
concurrency=${CONCURRENCY:-1}
loops=${LOOPS:-1}
workload=${WORKLOAD:-}

bin=$after
# shellcheck source=bench/servers.sh
source bench/servers.sh
if [ -n "${POOL:-}" ] && [ "$store" = sqlite ]; then
  echo "POOL=1 needs a server store (postgres, mysql or redis)" >&2
  exit 2
fi
use_server "$store"
for pair in $(seq 1 "$pairs"); do
  echo "pair $pair of $pairs" >&2
  order=(before after)
  [ $((pair % 2)) -eq 0 ] && order=(after before)
  for side in "${order[@]}"; do
    bin=$after
    [ "$side" = before ] && bin=$before
    if [ -n "${POOL:-}" ]; then
      echo "$side $(pool_figures "$store" "$url")"
    elif [ -n "$workload" ]; then
      echo "$side $(ycsb_figures "$store" "$url" "$concurrency" "$loops" "$workload")"
    else
      echo "$side $(search_figures "$store" "$url" "$concurrency" "$loops")"
    fi
  done
done > "$work/all"

what="SEARCH small"
[ -n "$workload" ] && what="YCSB workload $workload"
[ -n "${POOL:-}" ] && what="pool suite Large Result Set"
python3 - "$work/all" "$store" "$concurrency" "$pairs" "$what" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
side = {s: [(float(r[2]), float(r[3])) for r in rows if r[0] == s] for s in ("before", "after")}
# The server's CPU per operation, where the figures give it (the classic search on a server).
server = {s: [float(r[4]) for r in rows if r[0] == s and len(r) > 4 and r[4] != "-"]
          for s in ("before", "after")}
store, conc, pairs, what = sys.argv[2:6]
print(f"{store} {what}, concurrency {conc}, {pairs} alternated pairs")
for s, runs in side.items():
    rate = statistics.median(r for r, _ in runs)
    print(f"{s:7} {rate:>10.{2 if rate < 100 else 0}f} ops/s {statistics.median(c for _, c in runs):>8.2f} us CPU/op")
def spread(xs):
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"
pairs = list(zip(side["before"], side["after"]))
print("throughput after/before", spread([a[0] / b[0] for b, a in pairs]))
print("CPU per operation before/after", spread([b[1] / a[1] for b, a in pairs]))
if all(len(server[s]) == len(side[s]) for s in server) and server["before"]:
    print(f"server CPU per operation: before {statistics.median(server['before']):.2f} us,"
          f" after {statistics.median(server['after']):.2f} us; before/after",
          spread([b / a for b, a in zip(server["before"], server["after"])]))
PY
