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
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
N="${ICOUNT_ITERS:-200}"
WORK="${ICOUNT_WORK:-/tmp/protolua-icount}"
mkdir -p "$WORK"
command -v luajit >/dev/null || { echo "icount.sh: needs system luajit (apt install luajit)" >&2; exit 2; }
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
    (cd "$src" && CARGO_TARGET_DIR="$WORK/target-$tag" cargo build -q --release -p protolua \
        --no-default-features --features luajit,module >&2)
    mkdir -p "$WORK/so-$tag"
    cp "$WORK/target-$tag/release/libprotolua.so" "$WORK/so-$tag/protolua.so"
    echo "$WORK/so-$tag"
}

count() { # $1 so-dir $2 person|bench $3 label $4 op $5 iters
    local out="$WORK/cg.out"
    PROTOLUA_FIXTURES="$ROOT/fixtures" valgrind --tool=callgrind --callgrind-out-file="$out" \
        luajit "$ROOT/bench-harness/lua/icount.lua" "$1" "$2" "$3" "$4" "$5" >/dev/null 2>&1
    awk '/^summary:/ {print $2}' "$out"
}

dirs=(); names=()
for rev in "$@"; do dirs+=("$(build "$rev")"); names+=("$rev"); done

printf '| message | size | op |'; for n in "${names[@]}"; do printf ' %s |' "$n"; done; echo
printf '|---|---|---|'; for _ in "${names[@]}"; do printf -- '---:|'; done; echo
cells="person:10B person:100B person:1KB person:10KB person:100KB bench:min bench:mid"
for cell in $cells; do
    which="${cell%%:*}"; label="${cell#*:}"
    for op in encode decode; do
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
