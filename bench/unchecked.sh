#!/usr/bin/env bash
# What checking every answer and measuring every operation cost a search (not in CI).
# dbcompare is built with bench/unchecked.patch, which adds a trial switch that no build of
# dbcompare's own has: DBCOMPARE_TRIAL=1 reads every search's answer whole but neither
# decodes nor checks it; DBCOMPARE_TRIAL=2 also neither reads the clock nor records the
# latency; 0: as built. The patched build is made from the last commit (not from changes not
# yet committed) in a worktree under target/unchecked, and never leaves it. The three modes
# run the classic SEARCH small phase (10 searches per record, after one warm-up run) on one
# throw-away server per store, one after another, the order turned every repetition; the
# script prints each mode's median searches/s and client CPU per search, the medians
# (min-max) of the per-repetition ratios to the build as it is, the microseconds per search
# each saves, and in how many repetitions it spent less CPU than the build as it is.
# Settings: RUNS (6), STORES (a space-separated list of redis, postgres and mysql; all),
# CONCURRENCY (1; the event loops are dbcompare's default, as in bench/peers.sh: one for
# Redis, a loop per core up to the concurrency for PostgreSQL and MySQL).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-6}
stores=${STORES:-redis postgres mysql}
concurrency=${CONCURRENCY:-1}
tree=target/unchecked/tree
if [ -d "$tree" ]; then
  git -C "$tree" checkout -q -f --detach "$(git rev-parse HEAD)"
else
  git worktree add -q -f --detach "$tree" HEAD
fi
git -C "$tree" apply "$PWD/bench/unchecked.patch"
CARGO_TARGET_DIR=target/unchecked/build cargo build --release --locked --quiet \
  --manifest-path "$tree/Cargo.toml"
bin=target/unchecked/build/release/dbcompare
# shellcheck source=bench/servers.sh
source bench/servers.sh

for store in $stores; do
  case $store in redis | postgres | mysql) ;; *) echo "STORES: redis, postgres or mysql" >&2; exit 2 ;; esac
  start "$store"
  url=$(cat "$work/$store.url")
  modes=(0 1 2)
  loops=$(default_loops "$store" "$concurrency")
  for rep in $(seq 1 "$runs"); do
    echo "$store: repetition $rep of $runs" >&2
    k=$(((rep - 1) % 3))
    order=("${modes[@]:k}" "${modes[@]:0:k}")
    [ $((rep % 2)) -eq 0 ] && order=("${order[2]}" "${order[1]}" "${order[0]}")
    for mode in "${order[@]}"; do
      echo "$store $mode $(DBCOMPARE_TRIAL=$mode search_figures "$store" "$url" "$concurrency" "$loops")"
    done
  done
done > "$work/all"

python3 - "$work/all" "$concurrency" "$runs" "$(nproc)" \
  "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" <<'PY'
import collections, datetime, statistics, sys
rows, concurrency, runs, cores, cpu = sys.argv[1:]
figures = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(rows):
    store, mode, _, rate, us = line.split()[:5]
    figures[store][int(mode)].append((float(rate), float(us)))
names = {0: "as built", 1: "answers not checked", 2: "nor timed"}
print(f"What checking and measuring cost a search: {cores} cores, {cpu}, {datetime.date.today()}, "
      f"concurrency {concurrency}, {runs} repetitions")
print(f"{'store':9} {'mode':20} {'searches/s':>10} {'CPU us':>7}  {'rate/as built':>17}  "
      f"{'as built CPU/CPU':>17}  {'CPU saved us':>12}  {'less CPU in':>11}  {'time saved us':>13}")
def spread(xs):
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"
for store, modes in figures.items():
    base = modes[0]
    for mode in (0, 1, 2):
        own = modes[mode]
        rate = [o[0] / b[0] for o, b in zip(own, base)]
        cpu_ratio = [b[1] / o[1] for o, b in zip(own, base)]
        cpu_saved = [b[1] - o[1] for o, b in zip(own, base)]
        time_saved = [1e6 / b[0] - 1e6 / o[0] for o, b in zip(own, base)]
        print(f"{store:9} {names[mode]:20} {statistics.median(o[0] for o in own):>10.0f} "
              f"{statistics.median(o[1] for o in own):>7.2f}  {spread(rate):>17}  "
              f"{spread(cpu_ratio):>17}  {statistics.median(cpu_saved):>12.2f}  "
              f"{sum(x > 0 for x in cpu_saved):>4} of {len(cpu_saved):<3}  "
              f"{statistics.median(time_saved):>13.2f}")
print("ratios and savings per repetition, against the build as it is in the same repetition "
      "(above 1 / above 0: the mode is faster); less CPU in: the repetitions in which the mode "
      "spent less than the build as it is; searches/s and CPU us: each mode's own medians, not "
      "paired")
PY
