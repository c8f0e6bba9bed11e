# protolua perf loop and checks. `cargo install just` to get `just`.

aarch64_env := "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER='qemu-aarch64-static -L /usr/aarch64-linux-gnu'"

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

# The wire micro-benchmarks and the matrix.
bench: bench-wire matrix

# The benchmark matrix on embedded LuaJIT (the README's main job).
matrix:
    cargo run --release -p protolua-bench

# pbwire criterion (wall clock, peers in one run) and iai-callgrind (instructions).
bench-wire:
    cargo bench -p pbwire --bench wire_criterion
    cargo install iai-callgrind-runner --version 0.16.1 --locked
    cargo bench -p pbwire --bench wire_iai

# Fuzz every target for `secs` seconds each (nightly + cargo-fuzz).
fuzz secs="60":
    cargo install cargo-fuzz --locked
    cd fuzz && for t in wire_reader wire_varint_oracle wire_packed_utf8; do cargo +nightly fuzz run $t -- -max_total_time={{secs}} -max_len=4096; done

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
