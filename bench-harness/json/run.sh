#!/usr/bin/env bash
# protolua's JSON methods against lua-cjson (LuaJIT, Lua 5.4) and
# Tarantool's built-in `json`, one process per host: the timed part of
# `just bench-json` (bench-harness/json/json.lua; the allocation counts
# come from the embedded runner, bench-harness/src/bin/json.rs).
#
#   bench-harness/json/run.sh
#
# Builds protolua.so as a module for each host flavor (a target directory
# of its own, as bench-harness/peers/run.sh does) and runs json.lua in each
# host. Prints one markdown table per host (also saved to $JSON_WORK/json.md)
# and writes each host's results as JSON to bench-harness/results/
# json-<host>.json (<host>: luajit, lua54, tarantool, the stems of the
# matrix runner's matrix-<host>.json; a run of some JSON_CELLS only writes
# cells-json-<host>.json instead, so it does not replace the full run
# `just bench-plot` draws). The JSON is an array of flat objects, one per
# cell and method:
#   message, size, bytes              the cell, as in matrix-<host>.json
#                                     (bytes: the binary encoding's size)
#   json_bytes                        the size of protolua's JSON of it
#   method                            encode_json, decode_json,
#                                     binary_to_json, json_to_binary
#   host                              the interpreter's version string
#   peer                              cjson (lua-cjson) or json (Tarantool)
#   rounds                            JSON_SLICES
#   protolua_ns_per_op, peer_ns_per_op
#                                     median ns per op of each side
#   speedup                           median over the rounds of peer time /
#                                     protolua time (> 1: protolua faster)
#   speedup_min, speedup_max          the rounds' smallest and largest
#   speedup_spread                    (max - min) / median
#
# Environment: JSON_HOSTS ("luajit lua54 tarantool"; a host whose
# interpreter is missing is skipped with a note), JSON_SLICES (rounds, 9),
# JSON_SLICE_S (seconds per slice, 0.05), JSON_CELLS (e.g.
# "person:10B,bench:mid"; default all seven), JSON_WORK (/tmp/protolua-json).
# lua-cjson for LuaJIT and Lua 5.4: `apt install lua-cjson`.
set -euo pipefail
shopt -s inherit_errexit
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="${JSON_WORK:-/tmp/protolua-json}"
HOSTS="${JSON_HOSTS:-luajit lua54 tarantool}"
SLICES="${JSON_SLICES:-9}"
SLICE_S="${JSON_SLICE_S:-0.05}"
ALL_CELLS="person:10B,person:100B,person:1KB,person:10KB,person:100KB,bench:min,bench:mid"
CELLS="${JSON_CELLS:-$ALL_CELLS}"
RESULTS="$ROOT/bench-harness/results"
json_prefix=json
[ "$CELLS" = "$ALL_CELLS" ] || json_prefix=cells-json
mkdir -p "$WORK" "$RESULTS"

# host -> interpreter, protolua feature flavor
host_info() {
    case "$1" in
        luajit) echo "luajit luajit" ;;
        lua54) echo "lua5.4 lua54" ;;
        tarantool) echo "tarantool luajit" ;;
        *) echo "bench-json: unknown host '$1' in JSON_HOSTS (luajit, lua54, tarantool)" >&2; return 1 ;;
    esac
}

# shellcheck source=../build_module.sh
. "$ROOT/bench-harness/build_module.sh"

our_rev="$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
echo "# protolua ($our_rev) JSON vs cjson / Tarantool json, $(date -u '+%Y-%m-%d %H:%M UTC')" | tee "$WORK/json.md"
echo | tee -a "$WORK/json.md"
start=$SECONDS
for host in $HOSTS; do
    read -r interp flavor <<<"$(host_info "$host")"
    if ! command -v "$interp" >/dev/null; then
        echo "bench-json: skipping $host: $interp is not installed" | tee -a "$WORK/json.md"
        continue
    fi
    dir="$(build_protolua "$flavor")" || exit 1
    echo "## $host" | tee -a "$WORK/json.md"
    echo | tee -a "$WORK/json.md"
    # A scratch directory: nothing a host might write lands in the tree.
    (cd "$WORK" && "$interp" "$ROOT/bench-harness/json/json.lua" "$ROOT" "$dir" "$SLICES" "$SLICE_S" "$CELLS" \
        "$RESULTS/$json_prefix-$host.json") | tee -a "$WORK/json.md"
    echo | tee -a "$WORK/json.md"
done
echo "bench-json: $((SECONDS - start)) s; tables in $WORK/json.md, JSON in $RESULTS/$json_prefix-<host>.json"
