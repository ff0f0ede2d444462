#!/usr/bin/env bash
# The client's allocations per operation: on the driver suite's 22 tests, beside the Go
# seed's Go-MySQL-Driver 1.1 (seed 000's allocs/query and B/query, database/sql included),
# with their ratio to Go's (at or below 1.00 in both meets issue 15's target); and on the
# classic suite's insert and search (tiny, 5 searches per record). With SITES=1 each line
# also gets the share of every crate whose code allocated (`--alloc-sites`: slow, exact),
# and each run's results.md, with every phase's call sites, is kept in results/.
#
#   bench/allocations.sh                 # mysql, postgres, redis, sqlite
#   bench/allocations.sh mysql
#   SITES=1 bench/allocations.sh mysql   # and by crate; results/allocations-driver-mysql/
#   DBCOMPARE_MONGODB_URL=mongodb://127.0.0.1:27017/dbcompare bench/allocations.sh mongodb
#   DBCOMPARE=target/release/dbcompare bench/allocations.sh   # skip the release build
#
# Allocation counts do not depend on the machine's speed: one warm-up run (prepared
# statements, first buffers) and one measured run are enough, and they repeat run to run.
# Needs the servers installed (provisioning/install.sh mysql postgres redis).
set -euo pipefail
cd "$(dirname "$0")/.."

stores=("$@")
[ ${#stores[@]} -gt 0 ] || stores=(mysql postgres redis sqlite)
scale=${SCALE:-0.02}
sites=()
[ "${SITES:-0}" = 1 ] && sites=(--alloc-sites)
if [ -z "${DBCOMPARE:-}" ]; then
    # With SITES=1 the profiling build (release with debug information), which names the driver
    # code a release build inlines into dbcompare's functions; the counts are the same.
    profile=release
    [ ${#sites[@]} -gt 0 ] && profile=profiling
    cargo build --profile "$profile" --locked --quiet
    DBCOMPARE=target/$profile/dbcompare
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

status=0
for store in "${stores[@]}"; do
    for suite in driver classic; do
        out="$work/$suite-$store"
        args=(--suite driver --scale "$scale")
        [ "$suite" = classic ] && args=(--suite classic --sizes tiny --searches-per-insert 5)
        if ! "$DBCOMPARE" run --store "$store" "${args[@]}" --warmup-runs 1 --runs 1 \
            --no-floor --quiet "${sites[@]}" --out "$out" >/dev/null; then
            echo "$store: the $suite run failed (see above)" >&2
            status=1
        fi
        if [ ${#sites[@]} -gt 0 ] && [ -f "$out/results.md" ]; then
            mkdir -p results
            rm -rf "results/allocations-$suite-$store"
            cp -r "$out" "results/allocations-$suite-$store"
        fi
    done
done

echo "client allocations per operation: driver suite (scale $scale) beside Go-MySQL-Driver 1.1, classic tiny"
echo "$(date -u +%Y-%m-%d) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $("$DBCOMPARE" --version)"
python3 - "$work" "${stores[@]}" <<'PY'
import json, os, sys

# Seed 000, Go-MySQL-Driver 1.1: (allocs/query, B/query) per test.
GO = {
    "SimpleExec": (3, 97), "PreparedExec": (5, 149), "SimpleQueryRow": (12, 363),
    "PreparedQueryRow": (14, 382), "PreparedQueryRowParam": (15, 400),
    "EchoMixed5": (17, 644), "SelectLargeString": (12, 10608),
    "SelectPreparedLargeString": (15, 10632), "SelectLargeBytes": (12, 10608),
    "SelectPreparedLargeBytes": (15, 10632), "SelectLargeRaw": (10, 348),
    "SelectPreparedLargeRaw": (13, 374),
    **{f"PreparedExecConcurrent{n}": (5, 150) for n in (1, 2, 4, 8, 16)},
    **{f"PreparedQueryConcurrent{n}": (17, 476) for n in (1, 2, 4, 8, 16)},
}
work, stores = sys.argv[1], sys.argv[2:]
print(f"{'store':<9} {'test':<27} {'allocs/op':>9} {'x Go':>6} {'B/op':>8} {'x Go':>6}  by crate")
met = {}
for suite in ("driver", "classic"):
    for store in stores:
        path = os.path.join(work, f"{suite}-{store}", "run.json")
        if not os.path.exists(path):
            continue
        report = json.load(open(path))
        for result in report["stores"]:
            for p in result["phases"]:
                name = p["size"]["name"]
                if suite == "classic":
                    name = f"{p['kind'].upper()} {name}"
                a, b = p.get("allocs_per_op"), p.get("bytes_per_op")
                if a is None:
                    continue
                owners = ""
                if p.get("alloc_sites"):
                    owners = ", ".join(
                        f"{o['owner']} {o['allocs_per_op']:.1f}/{o['bytes_per_op']:.0f} B"
                        for o in p["alloc_sites"]["owners"][:4]
                    )
                if name in GO:
                    ga, gb = GO[name]
                    tally = met.setdefault(store, [0, 0])
                    tally[0] += a <= ga and b <= gb
                    tally[1] += 1
                    ratios = (f"{a / ga:6.2f}", f"{b / gb:6.2f}")
                else:
                    ratios = ("-", "-")
                print(f"{store:<9} {name:<27} {a:9.1f} {ratios[0]:>6} {b:8.0f} {ratios[1]:>6}  {owners}")
            for na in result.get("not_applicable", []):
                print(f"{store:<9} {na:<27} {'n/a':>9}")
for store, (ok, tests) in met.items():
    print(f"{store}: {ok} of {tests} driver tests at or below Go-MySQL-Driver 1.1 in both allocs and bytes")
PY
exit $status
