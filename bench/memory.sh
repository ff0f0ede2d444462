#!/usr/bin/env bash
# Peak memory (RSS) of dbcompare's own process in a classic run at --sizes small (10,000
# records) and at --sizes 100000, for SQLite and one server store (Redis): the client's
# memory must not grow with the number of records or operations (records are made again
# from the seed when needed; latencies go to fixed-size histograms and time series).
#
#   bench/memory.sh                 # both stores, 3 rounds, 2 searches per insert
#   bench/memory.sh sqlite          # one store
#   ROUNDS=5 SEARCHES=40 bench/memory.sh
#   DBCOMPARE=target/release/dbcompare bench/memory.sh   # skip the release build
#
# The two sizes alternate within each round, so that both see the same machine; the figures
# are medians over the rounds, with min-max, and the ratio big/small. The peak is the one
# each run writes in its run.json (`client_peak_rss_bytes`, Linux's VmHWM of dbcompare's
# own process): a child server's memory is not in it, as it would be in GNU time's figure.
# Needs the servers installed (provisioning/install.sh redis).
set -euo pipefail
cd "$(dirname "$0")/.."

stores=("$@")
[ ${#stores[@]} -gt 0 ] || stores=(sqlite redis)
rounds=${ROUNDS:-3}
searches=${SEARCHES:-2}
if [ -z "${DBCOMPARE:-}" ]; then
    cargo build --release --locked --quiet
    DBCOMPARE=target/release/dbcompare
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Peak RSS in kB of one run.
peak_kb() {
    local store=$1 size=$2
    "$DBCOMPARE" --quiet --store "$store" --sizes "$size" --searches-per-insert "$searches" \
        --runs 1 --warmup-runs 0 --no-floor --out "$work/out" >/dev/null
    local bytes
    bytes=$(grep -o '"client_peak_rss_bytes": [0-9]*' "$work/out/run.json" | grep -o '[0-9]*$')
    echo $((bytes / 1024))
}

# "median min max" of numbers.
stats() {
    printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], v[1], v[NR] }'
}

# "median (min-max)" in MB, from "median min max" in kB.
in_mb() {
    echo "$1" | awk '{ printf "%.1f (%.1f-%.1f)", $1 / 1024, $2 / 1024, $3 / 1024 }'
}

echo "dbcompare peak RSS, classic suite, $searches searches per insert, $rounds rounds"
echo "$(date -u +%Y-%m-%d) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
printf '%-8s %-22s %-22s %s\n' store "small (10000) MB" "100000 MB" "ratio 100000/small"
status=0
for store in "${stores[@]}"; do
    small=() big=()
    for ((r = 0; r < rounds; r++)); do
        if ((r % 2 == 0)); then
            small+=("$(peak_kb "$store" small)")
            big+=("$(peak_kb "$store" 100000)")
        else
            big+=("$(peak_kb "$store" 100000)")
            small+=("$(peak_kb "$store" small)")
        fi
    done
    s=$(stats "${small[@]}")
    b=$(stats "${big[@]}")
    ratio=$(awk -v a="${b%% *}" -v b="${s%% *}" 'BEGIN { printf "%.3f", a / b }')
    printf '%-8s %-22s %-22s %s\n' "$store" "$(in_mb "$s")" "$(in_mb "$b")" "$ratio"
    if awk -v r="$ratio" 'BEGIN { exit !(r > 1.10) }'; then
        echo "  $store: over the target (within 10%)" >&2
        status=1
    fi
done
exit $status
