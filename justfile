# protolua perf loop and checks. `cargo install just` to get `just`.

aarch64_env := "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER='qemu-aarch64-static -L /usr/aarch64-linux-gnu'"
all_cells := "Person/10B,Person/100B,Person/1KB,Person/10KB,Person/100KB,BenchPayload/min,BenchPayload/mid"
# A lua-protobuf checkout for bench-peers (the project does not ship its code).
PB_SRC := env_var_or_default("PB_SRC", "")

default:
    @just --list

# All tests: workspace (vendored LuaJIT) and the Lua suite on Lua 5.4.
test:
    cargo test --workspace
    cargo test -p protolua --no-default-features --features lua54,vendored --test lua_suite

# Lua suite on Lua 5.4 only.
test-lua54:
    cargo test -p protolua --no-default-features --features lua54,vendored --test lua_suite

# fmt check, clippy with warnings denied, docs with warnings denied.
lint:
    cargo fmt --all --check
    cargo clippy --workspace --all-targets -- -D warnings
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
    cargo clippy -p protolua --no-default-features --features lua54,vendored --all-targets -- -D warnings
    RUSTDOCFLAGS="-D warnings" cargo doc -p protolua --no-deps --no-default-features --features lua54,vendored

# The wire micro-benchmarks and the matrix.
bench: bench-wire matrix

# The benchmark matrix on embedded LuaJIT (the README's main job).
matrix:
    cargo run --release -p protolua-bench

# Draw docs/matrix.svg from bench-harness/results/matrix-*.json, peers-*.json and json-*.json (after `just matrix`,
# `bench-lua54`, `bench-tarantool`, `bench-peers`, `bench-json`: docs/BENCHMARKS.md, The chart).
bench-plot:
    cargo run --release -p protolua-bench --bin plot

# The text format on the matrix (ops/s beside encode/decode), embedded LuaJIT.
bench-text:
    cargo run --release -p protolua-bench --bin text

# The JSON methods on the matrix (#29): Rust allocations and Lua bytes per call on embedded
# LuaJIT and Lua 5.4, then speed against lua-cjson (LuaJIT, Lua 5.4: apt install lua-cjson) and
# Tarantool's json, interleaved in one process per host (bench-harness/json/run.sh; tables to
# /tmp/protolua-json/json.md, JSON to bench-harness/results/json-<host>.json for bench-plot).
bench-json:
    cargo run --release -p protolua-bench --bin json
    cargo run --release -p protolua-bench --bin json --no-default-features --features lua54
    bench-harness/json/run.sh

# The matrix on embedded Lua 5.4 (writes results/matrix-lua54.json).
bench-lua54:
    cargo run --release -p protolua-bench --no-default-features --features lua54

# The matrix with the strict-key encode floors (walk, count) timed too, on
# LuaJIT and Lua 5.4: the lower bound a codec that must find a table's keys
# can reach (see bench-harness/src/floor.rs). Writes results/cells-*.json.
bench-strict:
    PROTOLUA_BENCH_STRICT=1 PROTOLUA_BENCH_CELLS={{all_cells}} cargo run --release -p protolua-bench
    PROTOLUA_BENCH_STRICT=1 PROTOLUA_BENCH_CELLS={{all_cells}} cargo run --release -p protolua-bench --no-default-features --features lua54

# The matrix inside tarantool (Debian package) with the rock-installed module,
# Tarantool's msgpack on the same tables as the reference column.
bench-tarantool: rock
    tarantool bench-harness/tarantool/run.lua "$(pwd)"

# Decode instructions per op inside tarantool: msgpack vs each protolua.so dir given (default: the rock).
icount-tarantool *dirs:
    bench-harness/tarantool/icount.sh {{dirs}}

# bench-tarantool plus the floors (bench-only module, bench-harness/tarantool-floors):
# floor/msgpack (the best any codec building the same tables reaches) and protolua time/floor.
bench-tarantool-floor: rock
    PROTOLUA_FLOORS="$(bench-harness/tarantool/floors.sh)" tarantool bench-harness/tarantool/run.lua "$(pwd)"

# Every decode floor (C API, constructor, parse + constructor, tree constructor, parse + tree)
# and protolua against msgpack inside Tarantool, in slices of one process (ctor_floor.lua).
bench-tarantool-floors-ab slices="9": rock
    PROTOLUA_FLOORS="$(bench-harness/tarantool/floors.sh)" tarantool bench-harness/tarantool/ctor_floor.lua "$(pwd)" {{slices}}

# icount-tarantool with a decode-floor column (msgpack ÷ floor in instructions).
icount-tarantool-floor *dirs:
    ICOUNT_FLOORS="$(bench-harness/tarantool/floors.sh)" bench-harness/tarantool/icount.sh {{dirs}}

# protolua against lua-protobuf (starwing's pb) on LuaJIT, Lua 5.4 and Tarantool, interleaved in one
# process per host: builds pb.so from the checkout PB_SRC points at (not shipped here) and protolua.so per host;
# tables to /tmp/protolua-peers/peers.md, JSON to bench-harness/results/peers-<host>.json (for bench-plot).
# `just bench-peers PB_SRC=<dir>`, `just PB_SRC=<dir> bench-peers` and `PB_SRC=<dir> just bench-peers` all work.
bench-peers *args:
    PB_SRC="{{PB_SRC}}" bench-harness/peers/run.sh {{args}}

# Decode ns/byte of the adversarial shapes at 1 KB..100 MB; flags superlinear ones (docs/ROBUSTNESS.md).
bench-linear:
    cargo run --release -p protolua-bench --bin linear

# Schema load cost: load_proto of the conformance protos against load of protoc's set, bytes held per schema.
bench-load:
    cargo run --release -p protolua-bench --bin load

# pbwire criterion (wall clock, peers in one run) and iai-callgrind (instructions).
bench-wire:
    cargo bench -p pbwire --bench wire_criterion
    cargo install iai-callgrind-runner --version 0.16.1 --locked
    cargo bench -p pbwire --bench wire_iai
    cargo bench -p pbwire --bench message_iai

# Instruction counts (wire_iai, icount matrix) vs bench-harness/baseline: fail if > BENCH_CHECK_TOLERANCE % (2) worse.
bench-check *flags:
    cargo install iai-callgrind-runner --version 0.16.1 --locked
    python3 bench-harness/bench_check.py {{flags}}

# Rewrite bench-harness/baseline/instructions.json from this tree (flags: --wire-only, --matrix-only).
bench-check-update *flags:
    cargo install iai-callgrind-runner --version 0.16.1 --locked
    python3 bench-harness/bench_check.py --update {{flags}}

# Fuzz every target for `secs` seconds each (nightly + cargo-fuzz).
fuzz secs="60":
    cargo install cargo-fuzz --locked
    cd fuzz && for t in wire_reader wire_varint_oracle wire_packed_utf8 codec_decode codec_encode schema_load text_decode codec_json proto_parse; do cargo +nightly fuzz run $t -- -max_total_time={{secs}} -max_len=4096; done

# Differential fuzz of LuaJIT's constructor decode path against the C API path (option
# `constructors = false`), each mode (plain, hooks, nomemo) for `secs` seconds: system luajit.
fuzz-ctor secs="60" seed="1":
    fuzz/ctor_diff.sh {{secs}} {{seed}}

# CI smoke run of every fuzz target: regressions once, then 20 s (codec) / 10 s (wire)
# from the committed corpus, which it does not grow.
fuzz-smoke:
    .ci/fuzz-smoke.sh

# The test suites under AddressSanitizer (nightly). Lua 5.4: Rust and the vendored
# Lua C code instrumented; LuaJIT: the Rust code (LuaJIT's own build is not).
sanitize:
    RUSTFLAGS="-Zsanitizer=address" CFLAGS="-fsanitize=address" CARGO_TARGET_DIR=target/asan-lua54 cargo +nightly test -p protolua --no-default-features --features lua54,vendored --target x86_64-unknown-linux-gnu --tests
    RUSTFLAGS="-Zsanitizer=address" CARGO_TARGET_DIR=target/asan-luajit cargo +nightly test -p protolua --target x86_64-unknown-linux-gnu --tests
    RUSTFLAGS="-Zsanitizer=address" CARGO_TARGET_DIR=target/asan-wire cargo +nightly test -p pbwire --target x86_64-unknown-linux-gnu --lib --tests

# pbwire's tests cross-compiled for aarch64 and run under qemu.
test-aarch64:
    rustup target add aarch64-unknown-linux-gnu
    {{aarch64_env}} cargo test -p pbwire --target aarch64-unknown-linux-gnu

# pbwire under Miri.
miri:
    cargo +nightly miri test -p pbwire --lib --tests

# no_std build check.
nostd:
    cargo build -p pbwire --no-default-features --target thumbv7em-none-eabihf

# Build the Tarantool rock into ./.rocks (tt on 3.x, tarantoolctl on 2.x).
rock:
    if command -v tt >/dev/null; then tt rocks make protolua-scm-1.rockspec; else tarantoolctl rocks make protolua-scm-1.rockspec; fi

# The Lua suite through rock-installed modules: tarantool, luajit, lua5.1, lua5.4.
test-rocks:
    rock/test.sh

# Binary rocks (install with no Rust toolchain), one per installed host: target/rock-pack/<host>/protolua-scm-1.<arch>.rock.
rock-pack *hosts:
    rock/pack.sh {{hosts}}

# Each binary rock installed into a fresh tree with cargo off PATH, and the Lua suite run against it.
test-rock-pack *hosts:
    rock/pack_test.sh {{hosts}}

# Instructions per op for each matrix cell, per git revision (`.` = working tree).
icount +revs=". HEAD":
    bench-harness/icount.sh {{revs}}

# What CI runs.
ci:
    .ci/run

# Google's protobuf conformance suite against protolua (docs/CONFORMANCE.md):
# prints TESTEE=<path> and the pass/fail/skip counts.
conformance:
    conformance/run.sh

# Differential tests against Python's protobuf (upb): `pip install protobuf` first.
differential:
    PROTOLUA_REQUIRE_DIFFERENTIAL=1 cargo test -p protolua --test differential -- --nocapture
