#!/bin/bash
# Differential run of two protolua builds (review-5). Each build directory
# holds the module as protolua.so, e.g.
#   CARGO_TARGET_DIR=/tmp/t-new cargo build --release -p protolua --no-default-features --features luajit,module
#   mkdir new && cp /tmp/t-new/release/libprotolua.so new/protolua.so
# usage: tests/build-diff/run.sh INTERP NEWDIR OLDDIR "SEEDS" COUNT [OUTDIR]
# Compares the result column of every case; prints per seed 'same' or the
# number of differing cases. A few differences can be noise: when a message
# is walked (sparse, see docs/ARCHITECTURE.md) and two of its fields are
# wrong, which one is reported follows the table's key order, which LuaJIT
# and 5.4 randomize per process; the generator injects at most one fault per
# table to keep this rare. Check a difference by running the old build
# twice (diff.lua REPLAY=<line> dumps a case for replay.lua).
set -u
here=$(cd "$(dirname "$0")" && pwd)
I=$1; N=$2; O=$3; SEEDS=$4; C=$5; OUT=${6:-/tmp/protolua-diff}
FDS=$here/../../fixtures/descriptors
mkdir -p "$OUT"
$I "$here/make_fds.lua" "$OUT/gen.fds"
export EXTRA="$OUT/gen.fds"
for s in $SEEDS; do
  $I "$here/diff.lua" "$N" "$FDS" "$OUT/n-$s.txt" "$s" "$C" 2>/dev/null &
  $I "$here/diff.lua" "$O" "$FDS" "$OUT/o-$s.txt" "$s" "$C" 2>/dev/null
  wait
  if cmp -s <(sed 's/.* => //' "$OUT/n-$s.txt") <(sed 's/.* => //' "$OUT/o-$s.txt"); then
    echo "seed $s: same ($(wc -l < "$OUT/n-$s.txt") cases)"
  else
    echo "seed $s: $(diff <(sed 's/.* => //' "$OUT/n-$s.txt") <(sed 's/.* => //' "$OUT/o-$s.txt") | grep -ac '^<') differ"
  fi
  for b in n:"$N" o:"$O"; do
    $I "$here/fastpath.lua" "${b#*:}" "$FDS" "$OUT/gen.fds" "$OUT/f${b%%:*}-$s.txt" "$s" ${FAST_COUNT:-100000} | tail -n 1
  done
  cmp -s "$OUT/fn-$s.txt" "$OUT/fo-$s.txt" && echo "seed $s fast path: same" || echo "seed $s fast path: DIFFER"
done
