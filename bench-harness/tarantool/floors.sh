#!/usr/bin/env bash
# Build the bench-only floors module for Tarantool (bench-harness/tarantool-floors:
# bench-harness/src/floor.rs as a LuaJIT module, no Lua linked in) and put it
# at <out>/protolua_floors.so (default out: target/tarantool-floors). Prints <out>.
#
#   PROTOLUA_FLOORS="$(bench-harness/tarantool/floors.sh)" tarantool bench-harness/tarantool/run.lua "$(pwd)"
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${1:-$ROOT/target/tarantool-floors}"
# Its own target directory: this crate links protolua as a module (its own
# workspace), and sharing the workspace's target/ let a vendored
# libprotolua.rlib from a bench build be linked in (a second LuaJIT inside
# Tarantool: a crash on load). See rock/build.sh.
TDIR="${CARGO_TARGET_DIR:-$ROOT/target}/tarantool-floors"
cargo build --release --locked --manifest-path "$ROOT/bench-harness/tarantool-floors/Cargo.toml" --target-dir "$TDIR" >&2
mkdir -p "$OUT"
cp "$TDIR/release/libprotolua_floors.so" "$OUT/protolua_floors.so"
echo "$OUT"
