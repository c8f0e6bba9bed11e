#!/bin/bash
# Walked-encode differential of two protolua builds (review-6): runs
# walkdiff.lua on both (each directory holding protolua.so) per seed and
# compares the results; prints each build's count of walked/probed
# disagreements (0 expected) and how many cases differ between the builds.
# usage: tests/build-diff/walk.sh INTERP NEWDIR OLDDIR "SEEDS" COUNT [OUTDIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
I=$1; N=$2; O=$3; SEEDS=$4; C=$5; OUT=${6:-/tmp/protolua-walkdiff}
mkdir -p "$OUT"
for s in $SEEDS; do
  $I "$here/walkdiff.lua" "$N" "$OUT/n-$s.txt" "$s" "$C" | sed 's/^/new: /' &
  $I "$here/walkdiff.lua" "$O" "$OUT/o-$s.txt" "$s" "$C" | sed 's/^/old: /'
  wait
  d=$(diff <(grep -v '^WP' "$OUT/n-$s.txt" | sed 's/.* => //') <(grep -v '^WP' "$OUT/o-$s.txt" | sed 's/.* => //') | grep -ac '^<')
  echo "seed $s: $d of $C cases differ"
done
