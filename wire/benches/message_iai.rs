//! Instruction counts (callgrind) of a whole message parsed by hand over
//! pbwire's `Reader` and over `prost::encoding` (`common/message.rs`): the
//! matrix's 600-byte BenchPayload, the realistic mix of tags, varints,
//! lengths and fixed-width values that one-primitive benchmarks
//! (`wire_iai`) leave out. `cargo bench -p pbwire --bench message_iai`
//! (iai-callgrind-runner 0.16.1, valgrind).
// The harness macros generate undocumented public items.
#![allow(missing_docs)]

#[path = "common/message.rs"]
mod message;

use std::hint::black_box;

use iai_callgrind::{library_benchmark, library_benchmark_group, main};

/// The message's bytes, after checking that both parsers agree on them.
fn message_input() -> Vec<u8> {
    let b = message::bench_mid();
    let sum = message::parse_pbwire(&b);
    assert!(sum.is_some() && sum == message::parse_prost(&b), "the two BenchPayload parsers disagree");
    b
}

#[library_benchmark]
#[bench::bench_mid(setup = message_input)]
fn message_parse_pbwire(buf: Vec<u8>) -> Option<u64> {
    black_box(message::parse_pbwire(black_box(&buf)))
}

#[library_benchmark]
#[bench::bench_mid(setup = message_input)]
fn message_parse_prost(buf: Vec<u8>) -> Option<u64> {
    black_box(message::parse_prost(black_box(&buf)))
}

library_benchmark_group!(
    name = messages;
    benchmarks = message_parse_pbwire, message_parse_prost
);

main!(library_benchmark_groups = messages);
