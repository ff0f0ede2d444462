#!/usr/bin/env bash
# The whole test suite, on a fresh machine too: installs what the tests need (idempotent:
# the servers they start, the MongoDB-compatible test servers, shellcheck, socat for a TLS front, Chromium), checks the shell
# scripts, formatting and lints (of the default build and of the one with every store), runs
# every test of the default build (without the stores that run only by URL: what `cargo
# test` runs), then `cargo test --locked --all-features`. Extra arguments go to that last
# `cargo test` (for example `tests/run.sh --test url_stores`).
set -euo pipefail
cd "$(dirname "$0")/.."

provisioning/install.sh postgres mysql redis jongodb secantus shellcheck socat chromium
shellcheck provisioning/*.sh bench/*.sh tests/*.sh .ci/run
cargo fmt --check
cargo clippy --all-targets --locked -- -D warnings
cargo clippy --all-targets --all-features --locked -- -D warnings
cargo test --locked
cargo test --locked --all-features "$@"
