#!/usr/bin/env bash
# What TLS costs: the classic suite's search phase (and its durable inserts) on each
# throw-away server store, plain and with --tls (TLS only, the certificate and host name
# verified), side by side on the same machine.
#
#   bench/tls.sh                    # postgres, mysql, redis; 3 rounds at --sizes tiny
#   bench/tls.sh redis              # one store
#   ROUNDS=5 SIZE=small bench/tls.sh
#   DBCOMPARE=target/release/dbcompare bench/tls.sh   # skip the release build
#
# Plain and TLS alternate within each round (the order swapped every other round), so that
# both see the same machine; each figure is the median over the rounds with min-max, and the
# ratio TLS/plain of the medians (ops/s: below 1 is slower; p50 latency: above 1 is slower).
# Each run is one measured run after one warm-up run, at concurrency 1. Needs the servers
# installed (provisioning/install.sh postgres mysql redis).
set -euo pipefail
cd "$(dirname "$0")/.."

stores=("$@")
[ ${#stores[@]} -gt 0 ] || stores=(postgres mysql redis)
rounds=${ROUNDS:-3}
size=${SIZE:-tiny}
if [ -z "${DBCOMPARE:-}" ]; then
    cargo build --release --locked --quiet
    DBCOMPARE=target/release/dbcompare
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# "search_ops_per_s search_p50_us insert_ops_per_s" of one run; $2 is "" or "--tls".
measure() {
    local store=$1 tls=$2
    # shellcheck disable=SC2086 # $tls is one flag or none
    "$DBCOMPARE" --quiet --store "$store" --sizes "$size" --runs 1 --warmup-runs 1 \
        --no-floor $tls --out "$work/out" >/dev/null
    python3 - "$work/out/run.json" <<'EOF'
import json, sys
store = json.load(open(sys.argv[1]))["stores"][0]
if store["status"] != "ok":
    sys.exit(f"{store['store']}: {store.get('error')}")
phase = {p["kind"]: p for p in store["phases"] if p["concurrency"] == 1}
tls = store["info"]["settings"].get("tls", "off")
print(round(phase["search"]["ops_per_s"]), phase["search"]["latency_us"]["p50"],
      round(phase["insert"]["ops_per_s"]), "|", tls, file=sys.stdout)
EOF
}

# "median min max" of numbers.
stats() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], v[1], v[NR] }'
}

# "median (min-max)".
shown() {
    echo "$1" | awk '{ printf "%.0f (%.0f-%.0f)", $1, $2, $3 }'
}

ratio() {
    awk -v a="${1%% *}" -v b="${2%% *}" 'BEGIN { printf "%.2f", a / b }'
}

echo "what TLS costs: classic suite at --sizes $size, concurrency 1, $rounds rounds"
echo "$(date -u +%Y-%m-%d) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
printf '%-9s %-6s %-24s %-24s %-22s\n' store "" "search ops/s" "search p50 us" "insert ops/s"
for store in "${stores[@]}"; do
    declare -A runs=()
    for ((r = 0; r < rounds; r++)); do
        order=("" --tls)
        ((r % 2 == 0)) || order=(--tls "")
        for tls in "${order[@]}"; do
            line=$(measure "$store" "$tls")
            runs[${tls:-plain}]+="${line%%|*};"
            [ -z "$tls" ] || used="${line#*| }"
        done
    done
    for side in plain --tls; do
        IFS=';' read -r -a lines <<<"${runs[$side]}"
        search=() p50=() insert=()
        for l in "${lines[@]}"; do
            read -r s p i <<<"$l"
            search+=("$s") p50+=("$p") insert+=("$i")
        done
        declare "s_${side#--}=$(stats "${search[@]}")"
        declare "p_${side#--}=$(stats "${p50[@]}")"
        declare "i_${side#--}=$(stats "${insert[@]}")"
    done
    # shellcheck disable=SC2154 # declared above
    {
        printf '%-9s %-6s %-24s %-24s %-22s\n' "$store" plain "$(shown "$s_plain")" "$(shown "$p_plain")" "$(shown "$i_plain")"
        printf '%-9s %-6s %-24s %-24s %-22s\n' "" TLS "$(shown "$s_tls")" "$(shown "$p_tls")" "$(shown "$i_tls")"
        printf '%-9s %-6s %-24s %-24s %-22s\n' "" ratio "$(ratio "$s_tls" "$s_plain")" "$(ratio "$p_tls" "$p_plain")" "$(ratio "$i_tls" "$i_plain")"
    }
    echo "          TLS in use: $used"
    unset runs
done
