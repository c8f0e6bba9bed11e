#!/bin/sh
# Build protolua.so for the Lua that LuaRocks builds for (the rockspec passes
# its interpreter as $LUA). Picks the mlua feature set from what that Lua is:
# LuaJIT (and Tarantool, which embeds it) -> luajit, PUC 5.1 -> lua51,
# 5.4 -> lua54. Override with PROTOLUA_LUA_FLAVOR=luajit|lua51|lua54.
set -eu
flavor="${PROTOLUA_LUA_FLAVOR:-}"
if [ -z "$flavor" ]; then
    v="$("${LUA:-lua}" -e 'io.write(jit and "luajit" or _VERSION)' 2>/dev/null || true)"
    case "$v" in
        luajit) flavor=luajit ;;
        "Lua 5.1") flavor=lua51 ;;
        "Lua 5.4") flavor=lua54 ;;
        *) echo "rock/build.sh: cannot tell which Lua '${LUA:-lua}' is (got '$v'); set PROTOLUA_LUA_FLAVOR=luajit|lua51|lua54" >&2
           exit 1 ;;
    esac
fi
command -v cargo >/dev/null || { echo "rock/build.sh: cargo not found on PATH (install the Rust toolchain: https://rustup.rs)" >&2; exit 1; }
echo "rock/build.sh: building protolua for $flavor" >&2
# Module builds get a target directory of their own: protolua is a cdylib,
# so its outputs carry no hash in their names, and in the workspace's
# target/ a module build and the bench harness's vendored one overwrite
# each other's libprotolua.rlib/.so while each keeps a fresh fingerprint.
# (Seen: a bench build that no longer compiled, and a Tarantool module
# with a second, vendored LuaJIT linked in, which crashed on load.)
tdir="${CARGO_TARGET_DIR:-target}/module"
cargo build --release --locked -p protolua --no-default-features --features "$flavor,module" --target-dir "$tdir"
mkdir -p target/rock
out="$tdir/release"
case "$(uname -s)" in
    Darwin) lib="$out/libprotolua.dylib" ;;
    *) lib="$out/libprotolua.so" ;;
esac
cp "$lib" target/rock/protolua.so
