#!/usr/bin/env bash
# CI smoke run of the fuzz targets (fuzz/fuzz_targets/*.rs), for a bare
# Debian 12 machine with rustup. Installs a nightly toolchain and cargo-fuzz
# when missing; if either cannot be installed it says so (`!!`) and exits 0.
#
# Then, for every target:
#   * each file of fuzz/regressions/<target>/ is run once;
#   * the target is fuzzed for a short budget (codec targets, the ones that
#     run protolua in an embedded LuaJIT: PROTOLUA_FUZZ_SMOKE_CODEC_SECS, 20 s;
#     wire targets: PROTOLUA_FUZZ_SMOKE_WIRE_SECS, 10 s), starting from the
#     committed corpus fuzz/corpus/<target>. The first corpus directory given
#     to libFuzzer is where it writes new inputs: a temporary one, so the
#     committed corpus stays as it is.
# Any crash (panic, failed check in a Lua driver, sanitizer report, timeout,
# out-of-memory) fails the run after all targets have run; the crashing
# inputs are in fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }
skip() { echo "!! $*: skipping the fuzz smoke run"; exit 0; }

CODEC_SECS=${PROTOLUA_FUZZ_SMOKE_CODEC_SECS:-20}
WIRE_SECS=${PROTOLUA_FUZZ_SMOKE_WIRE_SECS:-10}
START=$(date +%s)

step "C toolchain (LuaJIT and libFuzzer are built from source)"
if ! command -v cc >/dev/null || ! command -v make >/dev/null; then
    if command -v apt-get >/dev/null; then
        SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
        $SUDO apt-get update -q || true
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends build-essential || true
    fi
    command -v cc >/dev/null && command -v make >/dev/null || skip "no C compiler or make (build-essential)"
fi

step "nightly toolchain and cargo-fuzz"
command -v rustup >/dev/null || skip "rustup not found"
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal || skip "the nightly toolchain could not be installed"
fi
rustup run nightly rustc --version
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked || skip "cargo-fuzz could not be installed"
fi
cargo fuzz --version

cd fuzz
TARGETS=$(for f in fuzz_targets/*.rs; do basename "$f" .rs; done)

step "build: cargo +nightly fuzz build"
cargo +nightly fuzz build

NEW=$(mktemp -d "${TMPDIR:-/tmp}/protolua-fuzz-smoke.XXXXXX")
trap 'rm -rf "$NEW"' EXIT
FAILED=()
# Flags for every libFuzzer run: the justfile's -max_len, and a hang is a
# failure after 60 s (libFuzzer's default is 20 minutes).
FLAGS=(-max_len=4096 -timeout=60)

for t in $TARGETS; do
    case $t in
        codec_* | schema_load | text_decode | proto_parse) secs=$CODEC_SECS ;;
        *) secs=$WIRE_SECS ;;
    esac
    regressions=()
    if [ -d "regressions/$t" ]; then
        for f in "regressions/$t"/*; do [ -f "$f" ] && regressions+=("$f"); done
    fi
    if [ ${#regressions[@]} -gt 0 ]; then
        step "$t: ${#regressions[@]} regression inputs, once each"
        # Files (not directories) as arguments: libFuzzer runs each once.
        cargo +nightly fuzz run "$t" "${regressions[@]}" -- "${FLAGS[@]}" || FAILED+=("$t (regressions)")
    fi
    step "$t: fuzzing ${secs} s from corpus/$t"
    mkdir -p "$NEW/$t"
    corpus=("$NEW/$t")
    [ -d "corpus/$t" ] && corpus+=("corpus/$t")
    cargo +nightly fuzz run "$t" "${corpus[@]}" -- "${FLAGS[@]}" -max_total_time="$secs" -print_final_stats=1 \
        || FAILED+=("$t")
    echo "$t: $(find "$NEW/$t" -type f | wc -l) new corpus inputs (discarded)"
done

step "fuzz smoke: $(( $(date +%s) - START )) s"
if [ ${#FAILED[@]} -gt 0 ]; then
    printf '!! FAILED: %s\n' "${FAILED[@]}"
    echo "crashing inputs: fuzz/artifacts/<target>/ (replay: cd fuzz && cargo +nightly fuzz run <target> <file>)"
    exit 1
fi
echo "ok: $(echo $TARGETS | wc -w) targets"
