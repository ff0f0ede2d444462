#!/usr/bin/env bash
# Regenerates the published results from real runs, with a release build: the classic
# suite, then the YCSB suite (workloads a,b,c,f,d,e on RECORDS records, OPERATIONS
# operations each, default 10,000), each on every store that can run here (`--store all`).
#
# Each run's whole output directory (run.json, results.md, report.html, results.csv,
# series.csv, charts/) goes to docs/results/classic and docs/results/ycsb. results.md at the
# root of the repository is the two runs' own markdown, one after the other, unedited but
# for the charts' links (rewritten to where the charts are). Each run's page is its
# report.html there: docs/results/classic/report.html and docs/results/ycsb/report.html.
#
#   bench/results.sh              # run both suites, then publish
#   bench/results.sh --rerender   # publish again from the saved run.json files (after a
#                                 # change to the renderers; no database is touched)
#
# DBCOMPARE=path/to/dbcompare uses that binary instead of building a release one.
set -euo pipefail
cd "$(dirname "$0")/.."
records=${RECORDS:-10000}
operations=${OPERATIONS:-10000}
dbcompare=${DBCOMPARE:-}
if [ -z "$dbcompare" ]; then
  cargo build --release --locked --quiet
  dbcompare=./target/release/dbcompare
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "${1:-}" = --rerender ]; then
  for suite in classic ycsb; do
    "$dbcompare" report "docs/results/$suite/run.json" --out "$work/$suite" >/dev/null
  done
else
  "$dbcompare" run --store all --suite classic --out "$work/classic"
  "$dbcompare" run --store all --suite ycsb \
    -p "recordcount=$records" -p "operationcount=$operations" --out "$work/ycsb"
fi
for suite in classic ycsb; do
  rm -rf "docs/results/$suite"
  mkdir -p docs/results
  cp -r "$work/$suite" "docs/results/$suite"
done
{
  sed 's#](charts/#](docs/results/classic/charts/#' "$work/classic/results.md"
  echo
  sed -e '1s/^# dbcompare results$/# dbcompare results: the YCSB suite/' \
    -e 's#](charts/#](docs/results/ycsb/charts/#' "$work/ycsb/results.md"
} > results.md
echo "wrote results.md and docs/results/{classic,ycsb}"
