#!/usr/bin/env bash
# What a Redis Cluster costs and gives on one machine: the classic suite on one throw-away
# Redis server and on a throw-away cluster of MASTERS masters (the redis-cluster store),
# side by side: the cluster client's own CPU per operation, and the search throughput at
# concurrency 1 and 8.
#
#   bench/cluster.sh                       # 3 rounds at --sizes tiny, 3 masters
#   ROUNDS=5 SIZE=small MASTERS=4 bench/cluster.sh
#   DBCOMPARE=target/release/dbcompare bench/cluster.sh   # skip the release build
#
# The two stores alternate within each round (the order swapped every other round), so that
# both see the same machine; each figure is the median over the rounds with min-max, and
# the ratio cluster/server of the medians. Each run is one measured run after one warm-up
# run. Needs redis-server and redis-cli (provisioning/install.sh redis-cluster).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-3}
size=${SIZE:-tiny}
masters=${MASTERS:-3}
if [ -z "${DBCOMPARE:-}" ]; then
    cargo build --release --locked --quiet
    DBCOMPARE=target/release/dbcompare
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One run's figures, a "name value" line each.
measure() {
    "$DBCOMPARE" --quiet --store "$1" --sizes "$size" --concurrency 1,8 --runs 1 \
        --warmup-runs 1 --no-floor --redis-cluster-masters "$masters" --out "$work/out" >/dev/null
    python3 - "$work/out/run.json" <<'PY'
import json, sys
store = json.load(open(sys.argv[1]))["stores"][0]
if store["status"] != "ok":
    sys.exit(f"{store['store']}: {store.get('error')}")
for p in store["phases"]:
    if p["errors"]:
        sys.exit(f"{store['store']} {p['kind']}: {p['errors']} errors")
    name = f"{p['kind']}-c{p['concurrency']}"
    print(f"{name}-ops/s", round(p["ops_per_s"]))
    print(f"{name}-p50-us", p["latency_us"]["p50"])
    print(f"{name}-cpu-us/op", p["cpu_us_per_op"])
PY
}

for ((r = 0; r < rounds; r++)); do
    order=(redis redis-cluster)
    ((r % 2 == 0)) || order=(redis-cluster redis)
    for store in "${order[@]}"; do
        measure "$store" >>"$work/$store"
    done
done

echo "one Redis server against a ${masters}-master Redis Cluster: classic suite at --sizes $size, $rounds rounds"
echo "$(date -u +%Y-%m-%d) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, Redis $(redis-server --version | awk '{ print $3 }' | cut -d= -f2)"
python3 - "$work/redis" "$work/redis-cluster" <<'PY'
import statistics, sys
def load(path):
    figures = {}
    for line in open(path):
        name, value = line.split()
        figures.setdefault(name, []).append(float(value))
    return figures
one, cluster = load(sys.argv[1]), load(sys.argv[2])
def shown(values):
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"
print(f"{'figure':<22} {'one server':<26} {'cluster':<26} cluster/server")
for name in one:
    a, b = one[name], cluster.get(name, [])
    if not b:
        continue
    ratio = statistics.median(b) / statistics.median(a) if statistics.median(a) else float("nan")
    print(f"{name:<22} {shown(a):<26} {shown(b):<26} {ratio:.2f}")
PY
