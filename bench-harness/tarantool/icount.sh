#!/usr/bin/env bash
# Decode instructions per op inside Tarantool, for every matrix cell:
# msgpack.decode and one column per protolua.so build, under callgrind.
#
#   bench-harness/tarantool/icount.sh [DIR...]
#
# Each DIR holds a protolua.so built for Tarantool (`just rock` puts one in
# .rocks/lib/tarantool; `cargo build --release -p protolua
# --no-default-features --features luajit,module --target-dir target/module`
# gives target/module/release/libprotolua.so, to copy as protolua.so: not
# the workspace's target/, see rock/build.sh). No DIR:
# the rock in ./.rocks. Per cell: (instr with N decodes - instr with 0) / N,
# N from the cell's size; GC steps make small N read low, so compare
# columns of one run. ~10 min; ICOUNT_CELLS="bench:mid person:100B" runs
# only the cells named.
#
# ICOUNT_FLOORS=<dir> (`just icount-tarantool-floor`): <dir> holds the
# bench-only protolua_floors.so (floors.sh); a floor column is added after
# msgpack: the decode floor building the table protolua decodes (first DIR's
# build), and msgpack ÷ floor, the instruction ratio the best codec building
# these tables reaches against msgpack.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="${ICOUNT_WORK:-/tmp/protolua-icount-tnt}"
mkdir -p "$WORK"
[ $# -gt 0 ] || set -- "$ROOT/.rocks/lib/tarantool"
cells=("person 10B 20000" "person 100B 5000" "person 1KB 2000" "person 10KB 200" "person 100KB 20"
    "bench min 20000" "bench mid 500")
FLOORS="${ICOUNT_FLOORS:+$(realpath "$ICOUNT_FLOORS")}"
# ICOUNT_CELLS="bench:mid person:100B": only those cells.
if [ -n "${ICOUNT_CELLS:-}" ]; then
    keep=()
    for c in "${cells[@]}"; do
        read -r which label _ <<<"$c"
        [[ " $ICOUNT_CELLS " == *" $which:$label "* ]] && keep+=("$c")
    done
    cells=("${keep[@]}")
fi
count() { # tag so-dir-or-empty codec which label n
    local tag=$1 so=$2 codec=$3 which=$4 label=$5 n=$6 k z
    for i in 0 "$n"; do
        (cd "$WORK" && PROTOLUA_SO="$so" PROTOLUA_FLOORS="$FLOORS" valgrind --tool=callgrind --callgrind-out-file="$WORK/$tag-$i.out" \
            tarantool "$ROOT/bench-harness/tarantool/loop.lua" "$ROOT/fixtures" "$which" "$label" "$codec" "$i" \
            >/dev/null 2>&1)
    done
    z=$(awk '/^summary:/ {print $2}' "$WORK/$tag-0.out"); k=$(awk '/^summary:/ {print $2}' "$WORK/$tag-$n.out")
    echo $(( (k - z) / n ))
}
DIRS=()
for d in "$@"; do DIRS+=("$(realpath "$d")"); done
head="| message | size | msgpack |"; sep="|---|---|---:|"
[ -z "$FLOORS" ] || { head="$head floor | msgpack ÷ floor |"; sep="$sep---:|---:|"; }
for d in "${DIRS[@]}"; do head="$head $d | msgpack ÷ |"; sep="$sep---:|---:|"; done
echo "$head"; echo "$sep"
for c in "${cells[@]}"; do
    read -r which label n <<<"$c"
    # loop.lua loads protolua either way; msgpack's count does not depend on the build.
    mp=$(count "mp-$which-$label" "${DIRS[0]}" mp "$which" "$label" "$n")
    row="| $which | $label | $mp |"
    if [ -n "$FLOORS" ]; then
        fl=$(count "floor-$which-$label" "${DIRS[0]}" floor "$which" "$label" "$n")
        row="$row $fl | $(awk -v a="$mp" -v b="$fl" 'BEGIN { printf "%.2f", a / b }') |"
    fi
    for d in "${DIRS[@]}"; do
        p=$(count "proto-$(echo "$d" | tr / _)-$which-$label" "$d" proto "$which" "$label" "$n")
        row="$row $p | $(awk -v a="$mp" -v b="$p" 'BEGIN { printf "%.2f", a / b }') |"
    done
    echo "$row"
done
