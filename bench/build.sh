#!/usr/bin/env bash
# A newcomer's first build, measured (not in CI): each candidate release profile is built
# cold (an empty target directory, the crates already downloaded: the download is timed on
# its own first), and its client CPU per search is then compared side by side with the
# first candidate's, with bench/ab.sh on each store. Prints per candidate the build's wall
# time and CPU time (user + system), and the serial tail's two steps (dbcompare's library,
# then the final link with its whole-program optimisation, from cargo's --timings report,
# kept beside each binary), then the ab.sh figures.
#   bench/build.sh                         # every candidate below
#   CANDIDATES="fat thin" bench/build.sh   # some of them
#   FEATURES=all-stores bench/build.sh     # with the stores that run only by URL too
# Settings: CANDIDATES, STORES (sqlite postgres mysql redis; empty: the builds alone), PAIRS (4, per store),
# KEEP (a directory to keep each candidate's binary in, as KEEP/NAME), FEATURES (cargo
# features, as `--features` takes them; none: the default build a newcomer gets).
# The wall time is the machine's: on a shared machine, read the CPU time beside it.
set -euo pipefail
cd "$(dirname "$0")/.."

# name -> the `--config` overrides of [profile.release] that make it.
declare -A profile=(
  [fat]='profile.release.lto="fat" profile.release.codegen-units=1 profile.release.package.dbcompare.codegen-units=1'
  # fat LTO, dbcompare's own crate optimised before the link in 2 or 4 units (both cores)
  [own2]='profile.release.lto="fat" profile.release.codegen-units=1 profile.release.package.dbcompare.codegen-units=2'
  [own4]='profile.release.lto="fat" profile.release.codegen-units=1 profile.release.package.dbcompare.codegen-units=4'
  [thin]='profile.release.lto="thin" profile.release.codegen-units=16 profile.release.package.dbcompare.codegen-units=16'
  [thin8]='profile.release.lto="thin" profile.release.codegen-units=8 profile.release.package.dbcompare.codegen-units=8'
  # no whole-program optimisation
  [off]='profile.release.lto=false profile.release.codegen-units=16 profile.release.package.dbcompare.codegen-units=16'
)
read -r -a candidates <<< "${CANDIDATES:-fat own2 off}"
read -r -a stores <<< "${STORES-sqlite postgres mysql redis}"
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
echo "features: ${FEATURES:-(default)}"
features=()
[ -z "${FEATURES:-}" ] || features=(--features "$FEATURES")
printf '%-8s %10s %12s %10s %10s\n' candidate "wall (s)" "CPU (s)" "lib (s)" "link (s)"
for name in "${candidates[@]}"; do
  config=()
  for c in ${profile[$name]}; do config+=(--config "$c"); done
  target="$builds/target-$name"
  /usr/bin/time -f '%e %U %S' -o "$builds/$name.time" \
    env CARGO_TARGET_DIR="$target" cargo build --release --locked --quiet --timings "${config[@]}" "${features[@]}"
  read -r wall user sys < "$builds/$name.time"
  # The serial tail: dbcompare's own crate, then the final link (whole-program optimisation).
  tail=$(python3 - "$target/cargo-timings/cargo-timing.html" <<'PY'
import json, re, sys
units = json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);", open(sys.argv[1]).read(), re.S).group(1))
ours = [u for u in units if u["name"] == "dbcompare" and "build-script" not in u["target"]]
lib = sum(u["duration"] for u in ours if not u["target"].strip())
link = sum(u["duration"] for u in ours if "bin" in u["target"])
print(f"{lib:.0f} {link:.0f}")
PY
)
  read -r lib link <<< "$tail"
  printf '%-8s %10.0f %12.0f %10s %10s\n' "$name" "$wall" "$(python3 -c "print($user + $sys)")" "$lib" "$link"
  cp "$target/release/dbcompare" "$keep/$name"
  cp "$target/cargo-timings/cargo-timing.html" "$keep/$name.timings.html"
  rm -rf "$target"
done

base=${candidates[0]}
for name in "${candidates[@]:1}"; do
  for store in "${stores[@]}"; do
    echo "== $base (before) against $name (after), $store"
    PAIRS=${PAIRS:-4} bench/ab.sh "$keep/$base" "$keep/$name" "$store"
  done
done
