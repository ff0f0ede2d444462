#!/usr/bin/env bash
# One client event loop against several (--client-threads), side by side on the same
# throw-away servers: the classic SEARCH small phase at concurrency 1 and 8, alternating
# which goes first over the repetitions. Prints each side's median throughput and client CPU
# per operation, and the median (min-max) of the per-repetition ratios (not in CI).
# Settings: RUNS (repetitions, 4), THREADS (the other side's --client-threads, the number of
# cores), STORES (mysql postgres redis).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-4}
threads=${THREADS:-$(nproc)}
read -r -a stores <<< "${STORES:-mysql postgres redis}"

provisioning/install.sh "${stores[@]}"
cargo build --release --locked --quiet
bin=./target/release/dbcompare

# shellcheck source=bench/servers.sh
source bench/servers.sh
for store in "${stores[@]}"; do start "$store"; done

for rep in $(seq 1 "$runs"); do
  echo "repetition $rep of $runs" >&2
  order=(1 "$threads")
  [ $((rep % 2)) -eq 0 ] && order=("$threads" 1)
  for store in "${stores[@]}"; do
    for t in "${order[@]}"; do
      # Relaxed durability: the inserts only fill the table; the searches are measured.
      "$bin" run --store "$store" --url "$store=$(cat "$work/$store.url")" --sizes small \
        --searches-per-insert 10 --durability relaxed --warmup-runs 1 --runs 1 \
        --concurrency 1,8 --client-threads "$t" --quiet --out "$work/$store-$t-$rep"
    done
  done
done

python3 - "$work" "$runs" "$threads" "${stores[@]}" <<'PY'
import json, statistics, sys
work, runs, threads, stores = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
reps = range(1, runs + 1)
def search(store, t, rep, c, figure):
    s = json.load(open(f"{work}/{store}-{t}-{rep}/run.json"))["stores"][0]
    assert s["status"] == "ok", s.get("error")
    return next(p for p in s["phases"] if p["kind"] == "search" and p["concurrency"] == c)[figure]
m = json.load(open(f"{work}/{stores[0]}-1-1/run.json"))["machine"]
print(f"one client event loop against {threads}, {m['cpu_model']}, {m['cores']} cores, {runs} alternated repetitions")
print(f"{'store':10} {'conc':>4} {'1 loop ops/s':>13} {threads + ' loops ops/s':>13} {'ratio (min-max)':>17}"
      f" {'1 loop CPU us/op':>17} {threads + ' loops CPU us/op':>18}")
for store in stores:
    for c in (1, 8):
        one = [search(store, 1, r, c, "ops_per_s") for r in reps]
        many = [search(store, threads, r, c, "ops_per_s") for r in reps]
        ratios = [b / a for a, b in zip(one, many)]
        cpu1 = statistics.median(search(store, 1, r, c, "cpu_us_per_op") for r in reps)
        cpun = statistics.median(search(store, threads, r, c, "cpu_us_per_op") for r in reps)
        print(f"{store:10} {c:>4} {statistics.median(one):>13.0f} {statistics.median(many):>13.0f}"
              f" {statistics.median(ratios):>6.2f} ({min(ratios):.2f}-{max(ratios):.2f})"
              f" {cpu1:>17.1f} {cpun:>18.1f}")
print("ratio: throughput with several loops over one loop, per repetition (above 1: more loops are faster)")
PY
