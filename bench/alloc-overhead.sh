#!/usr/bin/env bash
# What counting allocations costs: SQLite search blocks with the counting allocator on and
# off, alternated in one process (benches/alloc_overhead.rs). Target: less than 5%.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench --locked --quiet --bench alloc_overhead
