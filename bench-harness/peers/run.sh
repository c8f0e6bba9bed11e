#!/usr/bin/env bash
# protolua against lua-protobuf (starwing's `pb`) on LuaJIT, Lua 5.4 and
# Tarantool: `just bench-peers PB_SRC=<lua-protobuf checkout>`.
#
#   bench-harness/peers/run.sh [PB_SRC=]<lua-protobuf checkout>
#
# protolua does not ship lua-protobuf's code: this builds the pb.so of the
# checkout it is given (its one C file, pb.c, with each host's Lua headers,
# -O2 as LuaRocks builds it), builds protolua.so as a module for each host
# (a target directory of its own, as rock/build.sh does), and runs
# bench-harness/peers/peers.lua in each host: both modules in one process,
# every matrix cell checked for equal results, then timed in interleaved
# slices. Prints one markdown table per host (also saved to
# $PEERS_WORK/peers.md) and writes each host's results as JSON to
# bench-harness/results/peers-<host>.json (<host>: luajit, lua54,
# tarantool, the stems of the matrix runner's matrix-<host>.json; a run of
# some PEERS_CELLS only writes cells-peers-<host>.json instead, so it does
# not replace the full run `just bench-plot` draws). The JSON is an array
# of flat objects, one per cell and direction:
#   message, size, bytes, direction   the cell, as in matrix-<host>.json
#   host                              the interpreter's version string
#   rounds                            PEERS_SLICES
#   protolua_ns_per_op, pb_nodef_ns_per_op, pb_default_ns_per_op
#                                     median ns per op of each contender
#   pb_nodef_ratio, pb_default_ratio  median over the rounds of protolua's
#                                     ops/s / pb's (pb time / protolua time:
#                                     > 1 is protolua faster; the inverse of
#                                     the table's column), against pb with
#                                     'no_default_values' and with its
#                                     default options
#   <that>_min, <that>_max            the rounds' smallest and largest
#   <that>_spread                     (max - min) / median
#
# Environment: PEERS_HOSTS ("luajit lua54 tarantool"; a host whose
# interpreter is missing is skipped with a note), PEERS_SLICES (rounds, 9),
# PEERS_SLICE_S (seconds per slice, 0.05), PEERS_CELLS (e.g.
# "person:10B,bench:mid"; default all seven), PEERS_WORK
# (/tmp/protolua-peers), CC (cc), and the header directories LUAJIT_INC
# (/usr/include/luajit-2.1: apt install libluajit-5.1-dev), LUA54_INC
# (/usr/include/lua5.4: liblua5.4-dev), TARANTOOL_INC
# (/usr/include/tarantool: tarantool-dev).
# At the defaults the timing takes one to two minutes per host (5 min for the
# three on a loaded 2-core machine); each flavor's first protolua build adds
# a few minutes (later runs are incremental).
set -euo pipefail
shopt -s inherit_errexit
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
# The checkout: the first argument (a path, or PB_SRC=<path> as `just
# bench-peers PB_SRC=<path>` passes it), else $PB_SRC.
case "${1:-}" in
    PB_SRC=*) PB_SRC="${1#PB_SRC=}" ;;
    ?*) PB_SRC="$1" ;;
    *) PB_SRC="${PB_SRC:-}" ;;
esac
if [ -z "$PB_SRC" ]; then
    cat >&2 <<'EOF'
bench-peers: PB_SRC is not set. protolua does not ship lua-protobuf; point the
recipe at a checkout of it, e.g.:
    git clone https://github.com/starwing/lua-protobuf /tmp/lua-protobuf
    just bench-peers PB_SRC=/tmp/lua-protobuf
EOF
    exit 2
fi
if [ ! -f "$PB_SRC/pb.c" ]; then
    echo "bench-peers: $PB_SRC/pb.c not found: PB_SRC must be a lua-protobuf checkout (github.com/starwing/lua-protobuf)" >&2
    exit 2
fi
PB_SRC="$(cd "$PB_SRC" && pwd)"
WORK="${PEERS_WORK:-/tmp/protolua-peers}"
HOSTS="${PEERS_HOSTS:-luajit lua54 tarantool}"
SLICES="${PEERS_SLICES:-9}"
SLICE_S="${PEERS_SLICE_S:-0.05}"
ALL_CELLS="person:10B,person:100B,person:1KB,person:10KB,person:100KB,bench:min,bench:mid"
CELLS="${PEERS_CELLS:-$ALL_CELLS}"
RESULTS="$ROOT/bench-harness/results"
json_prefix=peers
[ "$CELLS" = "$ALL_CELLS" ] || json_prefix=cells-peers
mkdir -p "$WORK" "$RESULTS"

# host -> interpreter, Lua headers, protolua feature flavor, header package
host_info() {
    case "$1" in
        luajit) echo "luajit ${LUAJIT_INC:-/usr/include/luajit-2.1} luajit libluajit-5.1-dev" ;;
        lua54) echo "lua5.4 ${LUA54_INC:-/usr/include/lua5.4} lua54 liblua5.4-dev" ;;
        tarantool) echo "tarantool ${TARANTOOL_INC:-/usr/include/tarantool} luajit tarantool-dev" ;;
    esac
}
for host in $HOSTS; do
    case "$host" in
        luajit | lua54 | tarantool) ;;
        *) echo "bench-peers: unknown host '$host' in PEERS_HOSTS (luajit, lua54, tarantool)" >&2; exit 2 ;;
    esac
done

build_pb() { # $1 host $2 include dir $3 header package: prints the directory holding pb.so
    local out="$WORK/pb-$1"
    if [ ! -f "$2/lua.h" ]; then
        echo "bench-peers: no lua.h in $2 for $1 (apt install $3, or set the host's *_INC variable)" >&2
        return 1
    fi
    mkdir -p "$out"
    "${CC:-cc}" -O2 -shared -fPIC -I"$2" -I"$PB_SRC" -o "$out/pb.so" "$PB_SRC/pb.c" >&2 || return 1
    echo "$out"
}

# shellcheck source=../build_module.sh
. "$ROOT/bench-harness/build_module.sh"

pb_rev="$(git -C "$PB_SRC" describe --always --dirty 2>/dev/null || echo 'not a git checkout')"
our_rev="$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
{
    echo "# protolua ($our_rev) vs lua-protobuf ($PB_SRC, $pb_rev), $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
} | tee "$WORK/peers.md"
start=$SECONDS
for host in $HOSTS; do
    read -r interp inc flavor pkg <<<"$(host_info "$host")"
    if ! command -v "$interp" >/dev/null; then
        echo "bench-peers: skipping $host: $interp is not installed" | tee -a "$WORK/peers.md"
        continue
    fi
    pbdir="$(build_pb "$host" "$inc" "$pkg")" || exit 1
    pldir="$(build_protolua "$flavor")" || exit 1
    echo "## $host" | tee -a "$WORK/peers.md"
    echo | tee -a "$WORK/peers.md"
    # A scratch directory: nothing a host might write lands in the tree.
    (cd "$WORK" && "$interp" "$ROOT/bench-harness/peers/peers.lua" "$ROOT" "$pldir" "$pbdir" "$SLICES" "$SLICE_S" \
        "$CELLS" "$RESULTS/$json_prefix-$host.json") | tee -a "$WORK/peers.md"
    echo | tee -a "$WORK/peers.md"
done
echo "bench-peers: $((SECONDS - start)) s; tables in $WORK/peers.md, JSON in $RESULTS/$json_prefix-<host>.json"
