#!/usr/bin/env bash
# The client's instructions per search of one or more dbcompare builds, counted with
# valgrind's callgrind (not in CI). A count does not move with what else the machine does,
# which a timed figure on a shared machine does: two builds' client cost can be told apart
# to a percent or two. For each build, the classic suite runs at tiny size (1,000 records)
# with 2 and then 12 searches per record; the searching thread's instructions differ by the
# 10,000 searches between them, and their difference over 10,000 is the figure. Builds
# alternate over PAIRS rounds (2); the median per build is printed, with each build's ratio
# to the first.
#   bench/instructions.sh STORE BUILD...        # STORE: sqlite, postgres, mysql or redis
# A server is started with the first build's `dbcompare server STORE`, unless URL is given.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: bench/instructions.sh STORE BUILD..." >&2; exit 2; }
store=$1
shift
builds=("$@")
pairs=${PAIRS:-2}
bin=${builds[0]}
# shellcheck source=bench/servers.sh
source bench/servers.sh
tools valgrind
use_server "$store"

count() { # $1 = build, $2 = searches per record: the busiest thread's instructions
  callgrind_search "$1" "$store" "$url" "$2"
  grep -h '^totals:' "$work"/cg/out.* | awk '{print $2}' | sort -n | tail -1
}

for round in $(seq 1 "$pairs"); do
  echo "round $round of $pairs" >&2
  order=("${builds[@]}")
  if [ $((round % 2)) -eq 0 ]; then
    order=()
    for ((i = ${#builds[@]} - 1; i >= 0; i--)); do order+=("${builds[$i]}"); done
  fi
  for b in "${order[@]}"; do
    low=$(count "$b" 2)
    high=$(count "$b" 12)
    echo "$b $(((high - low) / 10000))"
  done
done > "$work/all"

python3 - "$work/all" "$store" "$pairs" "${builds[@]}" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
store, pairs, builds = sys.argv[2], sys.argv[3], sys.argv[4:]
per = {b: [int(n) for name, n in rows if name == b] for b in builds}
first = statistics.median(per[builds[0]])
print(f"{store}: client instructions per search (callgrind, {pairs} alternated rounds)")
for b in builds:
    m = statistics.median(per[b])
    runs = ", ".join(f"{n:,}" for n in per[b])
    print(f"{b:40} {m:>9,.0f}  ({runs})  {m / first:.3f} of the first")
PY
