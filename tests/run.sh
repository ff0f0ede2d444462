#!/usr/bin/env bash
# The whole test suite, on a fresh machine too: installs what the tests need (idempotent:
# the servers they start, the MongoDB-compatible test servers, shellcheck, socat for a TLS front, Chromium), checks the shell
# scripts, formatting, lints and the API documentation's links (of the default build and of
# the one with every store), runs the tests whose outcome depends on which stores are built
# in the default build (the unit tests, `check` and the loaders: the stores that run only
# by URL are then absent), then every test with `cargo test --locked --all-features`. Extra
# arguments go to that last `cargo test` (for example `tests/run.sh --test url_stores`).
set -euo pipefail
cd "$(dirname "$0")/.."

provisioning/install.sh postgres mysql redis jongodb secantus shellcheck socat chromium
shellcheck provisioning/*.sh bench/*.sh tests/*.sh .ci/run
cargo fmt --check
cargo clippy --all-targets --locked -- -D warnings
cargo clippy --all-targets --all-features --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --locked --quiet
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --locked --all-features --quiet
# The other integration tests run the same code with or without the three stores, and are
# run once, in the build with every store.
cargo test --locked --lib --test check --test loaders
cargo test --locked --all-features "$@"
