#!/bin/sh
# The binary rocks as a user without Rust gets them: pack each host's rock
# (rock/pack.sh --reuse: the builds rock/test.sh installed), install it into a
# fresh tree with cargo and rustc off PATH, and run the Lua suite
# (lua-binding/tests/lua/run.lua) against that tree alone.
#   tarantool  -> tarantoolctl rocks install (or tt rocks install), ./.rocks of a scratch dir
#   luajit     -> luarocks --lua-version 5.1 install
#   lua5.1     -> luarocks --lua-version 5.1 install
#   lua5.4     -> luarocks --lua-version 5.4 install
# Hosts and PROTOLUA_REQUIRE_HOSTS as in rock/test.sh.
set -eu
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
SUITE="$ROOT/lua-binding/tests/lua/run.lua"
SUITE_TIMEOUT="${SUITE_TIMEOUT:-600}" # as in rock/test.sh
FIX="$ROOT/fixtures"
OUT="$ROOT/target/rock-pack"
hosts="${*:-tarantool luajit lua5.1 lua5.4}"

rock/pack.sh --reuse $hosts

# PATH without every directory that holds cargo or rustc: an install that
# tried to build would fail here.
nocargo=""
old_ifs=$IFS
IFS=:
for d in $PATH; do
    if [ -x "$d/cargo" ] || [ -x "$d/rustc" ]; then continue; fi
    nocargo="${nocargo:+$nocargo:}$d"
done
IFS=$old_ifs
if PATH="$nocargo" command -v cargo >/dev/null 2>&1; then
    echo "rock/pack_test.sh: cargo is still on PATH ($nocargo)" >&2
    exit 1
fi

# check_rock rock: a binary rock holds the rockspec, rock_manifest, the
# library and the README LuaRocks adds as its doc, and nothing to build from.
check_rock() {
    extra="$(unzip -Z1 "$1" | grep -v -x -E 'protolua-scm-1\.rockspec|rock_manifest|lib/|lib/protolua\.so|doc/|doc/[^/]+\.md' || true)"
    if [ -n "$extra" ]; then
        echo "rock/pack_test.sh: $1 holds more than a binary rock should:" >&2
        echo "$extra" >&2
        exit 1
    fi
    unzip -Z1 "$1" | grep -q -x 'lib/protolua.so' || { echo "rock/pack_test.sh: $1 has no lib/protolua.so" >&2; exit 1; }
    sum="$(unzip -p "$1" lib/protolua.so | md5sum | cut -d' ' -f1)"
    unzip -p "$1" rock_manifest | grep -q "\"protolua.so\"\] = \"$sum\"" ||
        { echo "rock/pack_test.sh: $1: rock_manifest's checksum of lib/protolua.so is not $sum" >&2; exit 1; }
}

# run_suite interp cpath expected-so: the suite with only the fresh tree on
# the C path, after checking that protolua resolves to the installed file.
run_suite() {
    interp=$1 cpath=$2 so=$3
    [ -f "$so" ] || { echo "rock/pack_test.sh: $so was not installed" >&2; exit 1; }
    # package.searchpath by hand: Lua 5.1 has none.
    found="$(LUA_CPATH="$cpath" PATH="$nocargo" "$interp" -e "
        for t in package.cpath:gmatch('[^;]+') do
            local f = t:gsub('?', 'protolua')
            local h = io.open(f) if h then h:close() io.write(f) os.exit(0) end
        end
        io.write('nothing') os.exit(0)" 2>&1)"
    if [ "$found" != "$so" ]; then
        echo "rock/pack_test.sh: protolua resolves to '$found', not the installed $so" >&2
        exit 1
    fi
    LUA_CPATH="$cpath" PATH="$nocargo" timeout "$SUITE_TIMEOUT" "$interp" "$SUITE" "$FIX"
}

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
ran=""
for host in $hosts; do
    set -- "$OUT/$host"/protolua-scm-1.*.rock
    # Skipped by rock/pack.sh (a rock left from an earlier run is not tested).
    { [ -f "$1" ] && command -v "$host" >/dev/null; } || continue
    rockfile=$1
    check_rock "$rockfile"
    fresh="$scratch/$host"
    mkdir "$fresh"
    echo "==> $host: installing ${rockfile#"$ROOT"/} into $fresh without cargo"
    case "$host" in
        tarantool)
            if command -v tt >/dev/null; then rocks="tt rocks"; else rocks="tarantoolctl rocks"; fi
            # shellcheck disable=SC2086 # $rocks is a command and its options
            (cd "$fresh" && PATH="$nocargo" $rocks install "$rockfile")
            so="$fresh/.rocks/lib/tarantool/protolua.so"
            # From the scratch dir: box.cfg in the tests writes there.
            (cd "$fresh" && run_suite tarantool "$fresh/.rocks/lib/tarantool/?.so" "$so")
            ;;
        luajit | lua5.1 | lua5.4)
            case "$host" in
                lua5.4) ver=5.4 ;;
                *) ver=5.1 ;;
            esac
            PATH="$nocargo" luarocks --lua-version $ver --tree "$fresh" install "$rockfile"
            so="$fresh/lib/lua/$ver/protolua.so"
            (cd "$fresh" && run_suite "$host" "$fresh/lib/lua/$ver/?.so" "$so")
            ;;
    esac
    ran="$ran $host"
done

echo "rock/pack_test.sh: binary rocks installed without cargo and passed the Lua suite on:${ran:- nothing}"
