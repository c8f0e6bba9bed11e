#!/usr/bin/env bash
# Runs Google's protobuf conformance suite against protolua (`just conformance`,
# CI). See docs/CONFORMANCE.md.
#
#   1. conformance/setup.sh: the patched conformance_test_runner;
#   2. cargo build --release -p protolua-conformance: the testee, printed as
#      TESTEE=<absolute path>;
#   3. the runner over the binary+JSON suite for proto2, proto3 and editions
#      (--maximum_edition 2023), recommended tests enforced, with
#      conformance/failure_list.txt as the expected failures;
#   4. the pass/fail/skip counts.
#
# Exit status: 0 when every test passes or is listed in failure_list.txt
# (text-format tests are `skipped` by the testee and never fail);
# non-zero when a test outside the list fails, or when a listed test passes
# (the runner then asks for its line to be removed), or on setup errors.
#
# Environment: CARGO_TARGET_DIR (where the testee is built), TESTEE (run this
# testee instead of building protolua-testee), CONF_DIR
# (default target/conformance: the runner and the output), CONFORMANCE_ARGS
# (extra runner flags, e.g. "--test Required.Proto3.ProtobufInput.UnknownVarint").
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
export CONF_DIR="${CONF_DIR:-$ROOT/target/conformance}"
FAILURE_LIST="$HERE/failure_list.txt"
OUT="$CONF_DIR/out"

die() { printf 'conformance/run.sh: error: %s\n' "$*" >&2; exit 1; }

# --- 1. runner ---------------------------------------------------------------
RUNNER="$("$HERE/setup.sh" | sed -n 's/^RUNNER=//p' | tail -n1)" || die "conformance/setup.sh failed"
[ -x "$RUNNER" ] || die "conformance/setup.sh gave no runner"

# --- 2. testee ---------------------------------------------------------------
cd "$ROOT"
if [ -n "${TESTEE:-}" ]; then
    # A testee given by the caller (any conformance testee works): no build.
    [ -x "$TESTEE" ] || die "TESTEE=$TESTEE is not an executable"
    TESTEE="$(cd "$(dirname "$TESTEE")" && pwd)/$(basename "$TESTEE")"
else
BUILD_JSON="$(cargo build --release -p protolua-conformance --bin protolua-testee --message-format=json-render-diagnostics)" \
    || die "cannot build the testee (cargo build --release -p protolua-conformance)"
TESTEE="$(printf '%s\n' "$BUILD_JSON" | grep '"executable":"[^"]*protolua-testee"' \
    | sed 's/.*"executable":"\([^"]*\)".*/\1/' | tail -n1)"
[ -n "$TESTEE" ] && [ -x "$TESTEE" ] || die "cargo did not report the protolua-testee executable"
fi
echo "TESTEE=$TESTEE"

# --- 3. the suite ------------------------------------------------------------
[ -f "$FAILURE_LIST" ] || die "missing $FAILURE_LIST"
rm -rf "$OUT"; mkdir -p "$OUT"
LOG="$OUT/runner.log"
set +e
# shellcheck disable=SC2086 # CONFORMANCE_ARGS is a list of flags
"$RUNNER" --enforce_recommended --maximum_edition 2023 \
    --failure_list "$FAILURE_LIST" --output_dir "$OUT" ${CONFORMANCE_ARGS:-} "$TESTEE" > "$LOG" 2>&1
RC=$?
set -e
# The loader's "weak version `GLIBC_2.38' not found" notes are expected (setup.sh).
grep -v "weak version \`" "$LOG" | grep -v '^I0000\|^WARNING: All log messages before absl' || true

# --- 4. counts ---------------------------------------------------------------
SUMMARY="$(grep -E '^CONFORMANCE SUITE (PASSED|FAILED):' "$LOG" || true)"
[ -n "$SUMMARY" ] || die "the runner printed no summary (exit status $RC); see $LOG"
read -r PASS SKIP XFAIL UFAIL < <(printf '%s\n' "$SUMMARY" | sed -E \
    's/.*: ([0-9]+) successes, ([0-9]+) skipped, ([0-9]+) expected failures, ([0-9]+) unexpected failures\..*/\1 \2 \3 \4/' \
    | awk '{p+=$1; s+=$2; x+=$3; u+=$4} END {print p, s, x, u}')
echo
echo "conformance: pass=$PASS fail=$((XFAIL + UFAIL)) (listed=$XFAIL unlisted=$UFAIL) skip=$SKIP"
echo "conformance: failing tests of this run: $OUT/failing_tests.txt; full log: $LOG"
if [ "$RC" -ne 0 ]; then
    echo "conformance: FAILED (runner exit status $RC): fix the tests above, or update conformance/failure_list.txt" >&2
    exit "$RC"
fi
echo "conformance: ok"
