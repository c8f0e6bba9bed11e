#!/usr/bin/env bash
# Instructions per op for every matrix cell, for one or more builds of
# protolua.so, under callgrind (stable on noisy machines, unlike wall clock).
#
#   bench-harness/icount.sh REV_OR_DIR...      e.g. icount.sh 96a4d01 HEAD .
#
# Each argument is a git revision (built in a temporary worktree) or `.` for
# the working tree as it is. Needs system `luajit` and `valgrind`. Prints one
# markdown table with a column per build: (instr with N iters - instr with 0) / N.
# ICOUNT_LOAD_OPTS="{ serialize = true }" passes load options to every run.
# ICOUNT_LUA=lua54 measures Lua 5.4 instead: the builds use
# --features lua54,module and system `lua5.4` runs icount.lua under
# `setarch -R` (no ASLR) with time() fixed by a small LD_PRELOAD shim, so
# 5.4's string-hash seed (time, heap and stack addresses) is the same in
# every run and the walked cells are not bimodal; and only the instructions
# inside the measured method (Msg:encode, Msg:decode, Msg:encode_json ...)
# are counted (callgrind --toggle-collect),
# since schema loading varies by tens of thousands of instructions run to
# run (prost-reflect's randomly seeded hash maps), ±25 per op at 2,000 ops.
# (Each build is run from the same directory, so the seed does not move with
# the build's path either.)
# ICOUNT_CELLS="person:10B bench:min" and ICOUNT_OPS=encode restrict the
# cells (default: all 7 sizes, both ops); ICOUNT_OPS also takes the JSON
# methods (encode_json, decode_json, binary_to_json, json_to_binary).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
N="${ICOUNT_ITERS:-200}"
WORK="${ICOUNT_WORK:-/tmp/protolua-icount}"
mkdir -p "$WORK"
LUA=luajit; FEATURES=luajit,module; SUFFIX=; RUN=(); TOGGLE=0
if [ "${ICOUNT_LUA:-luajit}" = lua54 ]; then
    LUA=lua5.4; FEATURES=lua54,module; SUFFIX=-lua54
    command -v cc >/dev/null || { echo "icount.sh: ICOUNT_LUA=lua54 needs cc" >&2; exit 2; }
    printf '#include <time.h>\ntime_t time(time_t *t) { if (t) *t = 1; return 1; }\n' >"$WORK/fixtime.c"
    cc -shared -fPIC -O2 -o "$WORK/fixtime.so" "$WORK/fixtime.c"
    RUN=(setarch "$(uname -m)" -R env LD_PRELOAD="$WORK/fixtime.so"); TOGGLE=1
fi
command -v "$LUA" >/dev/null || { echo "icount.sh: needs system $LUA (apt install $LUA)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "icount.sh: needs valgrind (apt install valgrind)" >&2; exit 2; }

build() { # $1 = rev or '.', prints the directory holding protolua.so
    local rev="$1" src tag
    if [ "$rev" = . ]; then
        src="$ROOT"; tag=worktree
    else
        tag="$(git -C "$ROOT" rev-parse --short "$rev")"
        src="$WORK/src-$tag"
        [ -d "$src" ] || git -C "$ROOT" worktree add -q --detach "$src" "$rev" >&2
    fi
    (cd "$src" && CARGO_TARGET_DIR="$WORK/target-$tag$SUFFIX" cargo build -q --release -p protolua \
        --no-default-features --features "$FEATURES" >&2)
    mkdir -p "$WORK/so-$tag$SUFFIX"
    cp "$WORK/target-$tag$SUFFIX/release/libprotolua.so" "$WORK/so-$tag$SUFFIX/protolua.so"
    echo "$WORK/so-$tag$SUFFIX"
}

count() { # $1 so-dir $2 person|bench $3 label $4 op $5 iters
    local out="$WORK/cg.out" vg=(valgrind --tool=callgrind)
    local so="$1"
    if [ "$TOGGLE" = 1 ]; then
        local module=message; case "$4" in *json*) module=json ;; esac
        vg+=(--toggle-collect="protolua::api::$module::message_$4")
        # One path for every build: package.cpath's length moves the heap,
        # and with it 5.4's hash seed and the walked tables' key order.
        mkdir -p "$WORK/so-run"; cp "$1/protolua.so" "$WORK/so-run/protolua.so"; so="$WORK/so-run"
    fi
    PROTOLUA_FIXTURES="$ROOT/fixtures" "${RUN[@]}" "${vg[@]}" --callgrind-out-file="$out" \
        "$LUA" "$ROOT/bench-harness/lua/icount.lua" "$so" "$2" "$3" "$4" "$5" >/dev/null 2>&1
    awk '/^summary:/ {print $2}' "$out"
}

dirs=(); names=()
for rev in "$@"; do dirs+=("$(build "$rev")"); names+=("$rev"); done

printf '| message | size | op |'; for n in "${names[@]}"; do printf ' %s |' "$n"; done; echo
printf '|---|---|---|'; for _ in "${names[@]}"; do printf -- '---:|'; done; echo
cells="${ICOUNT_CELLS:-person:10B person:100B person:1KB person:10KB person:100KB bench:min bench:mid}"
for cell in $cells; do
    which="${cell%%:*}"; label="${cell#*:}"
    for op in ${ICOUNT_OPS:-encode decode}; do
        msg=Person; [ "$which" = bench ] && msg=BenchPayload
        printf '| %s | %s | %s |' "$msg" "$label" "$op"
        for d in "${dirs[@]}"; do
            z=$(count "$d" "$which" "$label" "$op" 0)
            k=$(count "$d" "$which" "$label" "$op" "$N")
            printf ' %s |' "$(( (k - z) / N ))"
        done
        echo
    done
done
