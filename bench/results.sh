#!/usr/bin/env bash
# Regenerates the published results from real runs, with a release build: the classic
# suite, then the YCSB suite (workloads a,b,c,f,d,e on RECORDS records, OPERATIONS
# operations each, default 10,000), each on every store that can run here (`--store all`),
# then the classic suite on two stores in two configurations each, side by side
# (PostgreSQL with synchronous_commit on and off, Redis with appendfsync always and
# everysec).
#
# Each run's whole output directory (run.json, results.md, report.html, results.csv,
# series.csv, charts/) goes to docs/results/classic, docs/results/ycsb and
# docs/results/variants. results.md at the root of the repository is the three runs' own
# markdown, one after the other, unedited but for the charts' links (rewritten to where the
# charts are) and each part's title. Each run's page is its report.html there.
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
  for suite in classic ycsb variants; do
    "$dbcompare" report "docs/results/$suite/run.json" --out "$work/$suite" >/dev/null
  done
else
  "$dbcompare" run --store all --suite classic --out "$work/classic"
  "$dbcompare" run --store all --suite ycsb \
    -p "recordcount=$records" -p "operationcount=$operations" --out "$work/ycsb"
  "$dbcompare" run --suite classic \
    --store postgres@sync,postgres@async,redis@always,redis@everysec \
    --set postgres@async:synchronous_commit=off --set redis@everysec:appendfsync=everysec \
    --out "$work/variants"
fi
for suite in classic ycsb variants; do
  rm -rf "docs/results/$suite"
  mkdir -p docs/results
  cp -r "$work/$suite" "docs/results/$suite"
done
{
  sed 's#](charts/#](docs/results/classic/charts/#' "$work/classic/results.md"
  echo
  sed -e '1s/^# dbcompare results$/# dbcompare results: the YCSB suite/' \
    -e 's#](charts/#](docs/results/ycsb/charts/#' "$work/ycsb/results.md"
  echo
  sed -e '1s/^# dbcompare results$/# dbcompare results: one store in several configurations/' \
    -e 's#](charts/#](docs/results/variants/charts/#' "$work/variants/results.md"
} > results.md
echo "wrote results.md and docs/results/{classic,ycsb,variants}"
