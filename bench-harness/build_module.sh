# Sourced by the bench runners (json/run.sh, peers/run.sh); needs ROOT and WORK.
# build_protolua FLAVOR: protolua.so as a loadable module for one host flavor
# (luajit, lua54, ...), in a target directory of its own under $WORK; prints
# the directory holding protolua.so.
build_protolua() {
    local out="$WORK/protolua-$1"
    (cd "$ROOT" && CARGO_TARGET_DIR="$WORK/target-$1" cargo build -q --release --locked -p protolua \
        --no-default-features --features "$1,module" >&2) || return 1
    mkdir -p "$out"
    cp "$WORK/target-$1/release/libprotolua.so" "$out/protolua.so" || return 1
    echo "$out"
}
