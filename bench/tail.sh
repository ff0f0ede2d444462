#!/usr/bin/env bash
# Whether a search phase at concurrency 8 runs at its concurrency to its end (not in CI):
# the classic SEARCH small phase (400,000 searches after one warm-up run) on one throw-away
# server, with each number of client event loops in turn, and per repetition the phase's
# rate (its operations over its span) against its middle's (the time series' points
# without the first and last tenth). A phase whose tasks finish apart ends below its
# concurrency: its rate falls below its middle's, and the last points show it.
# Settings: STORE (mysql), RUNS (3), LOOPS (dbcompare's --client-threads to try, "2 1"),
# BIN (a dbcompare binary instead of this checkout's release build; several, spaced, are
# alternated on the same server, the order reversed every other repetition).
set -euo pipefail
cd "$(dirname "$0")/.."
store=${STORE:-mysql}
runs=${RUNS:-3}
read -r -a loops <<< "${LOOPS:-2 1}"
# shellcheck source=bench/servers.sh
source bench/servers.sh
[ "$store" = sqlite ] || provisioning/install.sh "$store"
read -r -a bins <<< "${BIN:-./target/release/dbcompare}"
[ -n "${BIN:-}" ] || cargo build --release --locked --quiet
# shellcheck disable=SC2034 # the server is started with it (bench/servers.sh)
bin=${bins[0]}
use_server "$store"
urls=()
[ -n "$url" ] && urls=(--url "$store=$url")
echo "$store, classic SEARCH small at concurrency 8: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date +%F)"
printf '%-14s %5s %4s %9s %9s %8s %8s %7s  %s\n' binary loops rep "ops/s" middle "over" "span s" \
  "cpu us" "the last points (ops/s)"
for rep in $(seq 1 "$runs"); do
  order=("${bins[@]}")
  if [ $((rep % 2)) -eq 0 ]; then
    order=(); for ((i = ${#bins[@]} - 1; i >= 0; i--)); do order+=("${bins[i]}"); done
  fi
  for b in "${order[@]}"; do
  for l in "${loops[@]}"; do
    "$b" run --store "$store" "${urls[@]}" --sizes small --searches-per-insert 40 \
      --warmup-runs 1 --runs 1 --concurrency 8 --client-threads "$l" --quiet --out "$work/o" \
      > /dev/null 2>&1
    python3 - "$work/o/run.json" "$l" "$rep" "$(basename "$b")" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["stores"][0]
assert s["status"] == "ok", s.get("error")
p = next(p for p in s["phases"] if p["kind"] == "search")
series = p["series"]
series = series[0] if isinstance(series, list) else series
w, points = series["interval_ms"], series["points"]
n = len(points)
middle = points[n // 10:n - n // 10]
steady = sum(x["ops"] for x in middle) / (len(middle) * w) * 1000
# The last point is cut short where the phase ended.
widths = [w] * (n - 1) + [series["span_ms"] - (n - 1) * w]
last = " ".join(f"{x['ops'] / wd * 1000:.0f}" for x, wd in zip(points[-4:], widths[-4:]))
print(f"{sys.argv[4][:14]:14} {sys.argv[2]:>5} {sys.argv[3]:>4} {p['ops_per_s']:9.0f} {steady:9.0f} "
      f"{p['ops_per_s'] / steady:8.3f} {series['span_ms'] / 1000:8.1f} {p['cpu_us_per_op']:7.1f}  {last}")
PY
  done
  done
done
echo "over: the phase's rate over its middle's (below 1: it ended below its concurrency); cpu us: the client's per search"
