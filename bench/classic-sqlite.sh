#!/usr/bin/env bash
# The classic suite on embedded SQLite, RUNS times (default 3) with a release build: prints
# the whole suite's wall time and the client CPU cost per SQLite search, median of the runs,
# beside their targets (suite well under a minute; search under 20 us of CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
cargo build --release --locked --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for i in $(seq 1 "$runs"); do
  start=$(date +%s.%N)
  ./target/release/dbcompare run --store sqlite --warmup-runs 0 --runs 1 --quiet --out "$work/$i"
  end=$(date +%s.%N)
  echo "$start $end" > "$work/$i/wall"
done
python3 - "$work" "$runs" <<'PY'
import json, statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
walls, cpu, qps = [], {}, {}
for i in range(1, runs + 1):
    start, end = map(float, open(f"{work}/{i}/wall").read().split())
    walls.append(end - start)
    store = json.load(open(f"{work}/{i}/run.json"))["stores"][0]
    assert store["status"] == "ok", store.get("error")
    for p in store["phases"]:
        key = f'{p["kind"].upper()} {p["size"]["name"]}'
        cpu.setdefault(key, []).append(p["cpu_us_per_op"])
        qps.setdefault(key, []).append(p["ops_per_s"])
print(f"classic suite on sqlite, {runs} runs (median, min-max)")
print(f"  whole suite wall time: {statistics.median(walls):.1f} s ({min(walls):.1f}-{max(walls):.1f}); target < 60 s, ratio {statistics.median(walls)/60:.2f}")
for key in cpu:
    print(f"  {key:14} {statistics.median(qps[key]):>9.0f} ops/s   client cpu {statistics.median(cpu[key]):7.2f} us/op ({min(cpu[key]):.2f}-{max(cpu[key]):.2f})")
search = [v for k, vs in cpu.items() if k.startswith("SEARCH") for v in vs]
m = statistics.median(search)
print(f"  SQLite search client cpu: {m:.2f} us/op; target < 20 us, ratio {m/20:.2f}")
PY
