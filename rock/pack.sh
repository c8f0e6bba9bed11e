#!/bin/sh
# Binary rocks: protolua.so already built, so installing needs no Rust
# toolchain. For each host (default: every one installed, as rock/test.sh):
#   tarantool  -> tarantoolctl rocks (or tt rocks) make + pack, tree ./.rocks
#   luajit     -> luarocks --lua-version 5.1, LuaJIT feature set, tree target/rocks/luajit
#   lua5.1     -> luarocks --lua-version 5.1, tree target/rocks/lua5.1
#   lua5.4     -> luarocks --lua-version 5.4, tree target/rocks/lua5.4
# it builds the module through the rockspec into the host's tree (the trees
# rock/test.sh uses), then packs the installed rock into
#   target/rock-pack/<host>/protolua-scm-1.<arch>.rock
# LuaRocks reads the name, version and arch from the file name and refuses
# any other form, so the host is the directory, not part of the name.
#
#   rock/pack.sh [--reuse] [host...]
# --reuse packs what is already installed in a host's tree (rock/test.sh has
# just built it) and builds only where nothing is installed. A missing host is
# skipped, or an error if it is in PROTOLUA_REQUIRE_HOSTS.
set -eu
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
ROCKSPEC=protolua-scm-1.rockspec
OUT="$ROOT/target/rock-pack"
reuse=0
if [ "${1:-}" = --reuse ]; then reuse=1; shift; fi
hosts="${*:-tarantool luajit lua5.1 lua5.4}"

missing() {
    case " ${PROTOLUA_REQUIRE_HOSTS:-} " in
        *" $1 "*) echo "rock/pack.sh: $1 is required but $2" >&2; exit 1 ;;
    esac
    echo "rock/pack.sh: skipping $1: $2"
}

# slim rock: the library without its debug info (16 MB -> 3 MB; the symbols
# stay), and rock_manifest's checksum of it to match.
slim() {
    if ! command -v strip >/dev/null; then
        echo "rock/pack.sh: strip (binutils) not found: $1 keeps its debug info"
        return
    fi
    tmp="$(mktemp -d)"
    (cd "$tmp" && unzip -q "$1")
    strip --strip-debug "$tmp/lib/protolua.so"
    sum="$(md5sum "$tmp/lib/protolua.so" | cut -d' ' -f1)"
    sed -i "s/\(\[\"protolua\.so\"\] = \"\)[0-9a-f]*\"/\1$sum\"/" "$tmp/rock_manifest"
    grep -q "\"$sum\"" "$tmp/rock_manifest" || { echo "rock/pack.sh: cannot update rock_manifest in $1" >&2; exit 1; }
    rm "$1"
    (cd "$tmp" && zip -q -r -X "$1" .)
    rm -rf "$tmp"
}

# pack_host host tree installed-module make-command... : build unless reused, then pack.
pack_host() {
    host=$1 rocks=$2 tree=$3 so=$4
    shift 4
    if [ "$reuse" = 1 ] && [ -f "$so" ]; then
        echo "==> $host: packing the rock installed in $tree"
    else
        echo "==> $host: building into $tree"
        "$@"
    fi
    rm -rf "${OUT:?}/$host"
    mkdir -p "$OUT/$host"
    # shellcheck disable=SC2086 # $rocks is a command and its options
    (cd "$OUT/$host" && $rocks --tree "$tree" pack protolua scm-1)
    set -- "$OUT/$host"/protolua-scm-1.*.rock
    [ -f "$1" ] || { echo "rock/pack.sh: $host: no rock written in $OUT/$host" >&2; exit 1; }
    slim "$1"
    echo "rock/pack.sh: $host -> ${1#"$ROOT"/}"
}

for host in $hosts; do
    case "$host" in
        tarantool)
            if ! command -v tarantool >/dev/null; then missing tarantool "not installed (apt install tarantool)"; continue; fi
            if command -v tt >/dev/null; then rocks="tt rocks"; else rocks="tarantoolctl rocks"; fi
            pack_host tarantool "$rocks" "$ROOT/.rocks" "$ROOT/.rocks/lib/tarantool/protolua.so" \
                $rocks make "$ROCKSPEC"
            ;;
        luajit | lua5.1 | lua5.4)
            case "$host" in
                luajit) ver=5.1 flavor=luajit ;;
                lua5.1) ver=5.1 flavor=lua51 ;;
                lua5.4) ver=5.4 flavor=lua54 ;;
            esac
            if ! command -v "$host" >/dev/null; then missing "$host" "$host is not installed"; continue; fi
            if ! command -v luarocks >/dev/null; then missing "$host" "luarocks is not installed (apt install luarocks)"; continue; fi
            tree="$ROOT/target/rocks/$host"
            pack_host "$host" "luarocks --lua-version $ver" "$tree" "$tree/lib/lua/$ver/protolua.so" \
                env PROTOLUA_LUA_FLAVOR=$flavor luarocks --lua-version $ver --tree "$tree" make "$ROCKSPEC"
            ;;
        *) echo "rock/pack.sh: unknown host '$host' (tarantool, luajit, lua5.1, lua5.4)" >&2; exit 1 ;;
    esac
done
