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
# host. Prints one markdown table per host (also saved to $JSON_WORK/json.md).
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
CELLS="${JSON_CELLS:-person:10B,person:100B,person:1KB,person:10KB,person:100KB,bench:min,bench:mid}"
mkdir -p "$WORK"

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
    (cd "$WORK" && "$interp" "$ROOT/bench-harness/json/json.lua" "$ROOT" "$dir" "$SLICES" "$SLICE_S" "$CELLS") |
        tee -a "$WORK/json.md"
    echo | tee -a "$WORK/json.md"
done
echo "bench-json: $((SECONDS - start)) s; tables in $WORK/json.md"
