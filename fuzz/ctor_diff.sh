#!/usr/bin/env bash
# Differential fuzz of LuaJIT's constructor decode path against the C API
# path (fuzz/lua/ctor_diff.lua), each mode (plain, hooks, nomemo) for SECS
# seconds, with the system `luajit` and a module build of protolua.
#
#   fuzz/ctor_diff.sh [SECS (60)] [SEED (1)]      (`just fuzz-ctor`; CI: 10 s)
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-60}
SEED=${2:-1}
command -v luajit >/dev/null || { echo "!! no luajit (Debian: apt-get install luajit)"; exit 1; }
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
# A module build in the module target directory (see rock/build.sh for why
# not the workspace's own).
cargo build --release -p protolua --no-default-features --features luajit,module --target-dir "$TARGET_DIR/module"
mkdir -p "$TARGET_DIR/fuzz-ctor"
cp "$TARGET_DIR/module/release/libprotolua.so" "$TARGET_DIR/fuzz-ctor/protolua.so"
for mode in plain hooks nomemo; do
    luajit fuzz/lua/ctor_diff.lua "$TARGET_DIR/fuzz-ctor" "$SECS" "$SEED" "$mode"
done
