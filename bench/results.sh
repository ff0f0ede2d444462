#!/usr/bin/env bash
# Regenerates results.md at the root of the repository from real runs, with a release build:
# the classic suite, then the YCSB suite (workloads a,b,c,f,d,e on RECORDS records, OPERATIONS
# operations each, default 10,000), each on every store that can run here (`--store all`).
# results.md is the two runs' own markdown, one after the other, unedited.
set -euo pipefail
cd "$(dirname "$0")/.."
records=${RECORDS:-10000}
operations=${OPERATIONS:-10000}
cargo build --release --locked --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
./target/release/dbcompare run --store all --suite classic --out "$work/classic"
./target/release/dbcompare run --store all --suite ycsb \
  -p "recordcount=$records" -p "operationcount=$operations" --out "$work/ycsb"
{
  cat "$work/classic/results.md"
  echo
  sed '1s/^# dbcompare results$/# dbcompare results: the YCSB suite/' "$work/ycsb/results.md"
} > results.md
echo "wrote results.md"
