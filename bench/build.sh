#!/usr/bin/env bash
# A newcomer's first build, measured (not in CI): each candidate release profile is built
# cold (an empty target directory, the crates already downloaded: the download is timed on
# its own first), and its client CPU per search is then compared side by side with the
# first candidate's, with bench/ab.sh on each store. Prints per candidate the build's wall
# time and CPU time (user + system), then the ab.sh figures.
#   bench/build.sh                         # every candidate below
#   CANDIDATES="fat thin" bench/build.sh   # some of them
# Settings: CANDIDATES, STORES (sqlite postgres mysql redis), PAIRS (4, per store),
# KEEP (a directory to keep each candidate's binary in, as KEEP/NAME).
# The wall time is the machine's: on a shared machine, read the CPU time beside it.
set -euo pipefail
cd "$(dirname "$0")/.."

# name -> the `--config` overrides of [profile.release] that make it.
declare -A profile=(
  [fat]='profile.release.lto="fat" profile.release.codegen-units=1'
  [thin]='profile.release.lto="thin" profile.release.codegen-units=16'
  [thin8]='profile.release.lto="thin" profile.release.codegen-units=8'
  [off]='profile.release.lto=false profile.release.codegen-units=16'  # the quick profile
)
read -r -a candidates <<< "${CANDIDATES:-fat thin off}"
read -r -a stores <<< "${STORES:-sqlite postgres mysql redis}"
for name in "${candidates[@]}"; do
  [ -n "${profile[$name]:-}" ] || { echo "unknown candidate $name (${!profile[*]})" >&2; exit 2; }
done

builds=$(mktemp -d)
keep=${KEEP:-$builds/bin}
mkdir -p "$keep"
trap 'rm -rf "$builds"' EXIT

start=$(date +%s.%N)
cargo fetch --locked --quiet
echo "download: $(python3 -c "import time; print(f'{time.time() - $start:.0f} s')")"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "rustc: $(rustc --version)"
printf '%-8s %10s %12s\n' candidate "wall (s)" "CPU (s)"
for name in "${candidates[@]}"; do
  config=()
  for c in ${profile[$name]}; do config+=(--config "$c"); done
  target="$builds/target-$name"
  /usr/bin/time -f '%e %U %S' -o "$builds/$name.time" \
    env CARGO_TARGET_DIR="$target" cargo build --release --locked --quiet "${config[@]}"
  read -r wall user sys < "$builds/$name.time"
  printf '%-8s %10.0f %12.0f\n' "$name" "$wall" "$(python3 -c "print($user + $sys)")"
  cp "$target/release/dbcompare" "$keep/$name"
  rm -rf "$target"
done

base=${candidates[0]}
for name in "${candidates[@]:1}"; do
  for store in "${stores[@]}"; do
    echo "== $base (before) against $name (after), $store"
    PAIRS=${PAIRS:-4} bench/ab.sh "$keep/$base" "$keep/$name" "$store"
  done
done
