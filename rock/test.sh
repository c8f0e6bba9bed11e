#!/bin/sh
# Build the module the way users get it (the rockspec) for every host that is
# installed, and run the Lua suite (lua-binding/tests/lua/run.lua) in each:
#   tarantool  -> tarantoolctl rocks make (or tt rocks make), tree ./.rocks
#   luajit     -> luarocks --lua-version 5.1 make, LuaJIT feature set
#   lua5.1     -> luarocks --lua-version 5.1 make
#   lua5.4     -> luarocks --lua-version 5.4 make
# A host that is missing is reported and skipped; set PROTOLUA_REQUIRE_HOSTS
# (e.g. "tarantool luajit lua5.1 lua5.4") to make a missing one an error.
# luarocks builds against the Lua headers (liblua5.1-0-dev, liblua5.4-dev).
set -eu
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
ROCKSPEC=protolua-scm-1.rockspec
SUITE="$ROOT/lua-binding/tests/lua/run.lua"
# A hung suite fails the run in minutes, not at CI's deadline; PROTOLUA_TRACE_TESTS
# makes the harness name each test on stderr, so the log shows where it hung.
SUITE_TIMEOUT="${SUITE_TIMEOUT:-600}"
export PROTOLUA_TRACE_TESTS="${PROTOLUA_TRACE_TESTS:-}"
FIX="$ROOT/fixtures"
ran=""

missing() {
    case " ${PROTOLUA_REQUIRE_HOSTS:-} " in
        *" $1 "*) echo "rock/test.sh: $1 is required but $2" >&2; exit 1 ;;
    esac
    echo "rock/test.sh: skipping $1: $2"
}

if command -v tarantool >/dev/null; then
    echo "==> tarantool: $(tarantool --version | head -1)"
    if command -v tt >/dev/null; then tt rocks make "$ROCKSPEC"; else tarantoolctl rocks make "$ROCKSPEC"; fi
    # Run from a scratch directory: box.cfg in the tests writes there.
    (cd "$(mktemp -d)" && LUA_CPATH="$ROOT/.rocks/lib/tarantool/?.so;;" timeout "$SUITE_TIMEOUT" tarantool "$SUITE" "$FIX")
    ran="$ran tarantool"
else
    missing tarantool "not installed (apt install tarantool)"
fi

luarocks_host() { # name interpreter lua-version flavor
    name=$1 interp=$2 ver=$3 flavor=$4
    if ! command -v "$interp" >/dev/null; then missing "$name" "$interp is not installed"; return; fi
    if ! command -v luarocks >/dev/null; then missing "$name" "luarocks is not installed (apt install luarocks)"; return; fi
    tree="$ROOT/target/rocks/$name"
    echo "==> $name: LuaRocks tree $tree"
    PROTOLUA_LUA_FLAVOR=$flavor luarocks --lua-version "$ver" --tree "$tree" make "$ROCKSPEC"
    LUA_CPATH="$tree/lib/lua/$ver/?.so;;" timeout "$SUITE_TIMEOUT" "$interp" "$SUITE" "$FIX"
    ran="$ran $name"
}
luarocks_host luajit luajit 5.1 luajit
luarocks_host lua5.1 lua5.1 5.1 lua51
luarocks_host lua5.4 lua5.4 5.4 lua54

echo "rock/test.sh: Lua suite passed on:${ran:- nothing}"
