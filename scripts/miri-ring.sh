#!/usr/bin/env bash
# The SPSC ring (src/runtime/ring.rs) and its tests under Miri, which checks every unsafe access
# for undefined behaviour (uninitialised reads, data races, out-of-bounds slots). The ring is
# compiled on its own in a scratch crate under target/miri-ring, since Miri cannot build the
# engine's C dependencies (librdkafka). Needs a nightly toolchain with the miri component
# (`rustup toolchain install nightly --component miri rust-src`); skips with a message without it.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
if ! cargo +nightly miri --version >/dev/null 2>&1; then
    echo "miri-ring: cargo +nightly miri is not available; skipped." >&2
    exit 0
fi
dir=target/miri-ring
mkdir -p "$dir/src"
version=$(grep -A1 '^name = "crossbeam-utils"$' Cargo.lock | sed -n 's/^version = "\(.*\)"/\1/p' | head -1)
cat > "$dir/Cargo.toml" <<TOML
[package]
name = "ring-miri"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
crossbeam-utils = "=$version"

[workspace]
TOML
cat > "$dir/src/lib.rs" <<RS
//! The engine's ring, compiled alone for Miri (scripts/miri-ring.sh).
#![allow(dead_code)]
mod state {
    #[path = "$root/src/state/prefetch.rs"]
    pub mod prefetch;
}
#[path = "$root/src/runtime/ring.rs"]
pub mod ring;
RS
cd "$dir"
MIRIFLAGS="${MIRIFLAGS:--Zmiri-strict-provenance}" cargo +nightly miri test "$@"
