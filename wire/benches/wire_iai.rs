//! Instruction counts (callgrind) of the wire primitives, pbwire against
//! `prost::encoding`, on the same inputs as `wire_criterion`.
//!
//! Needs valgrind and the runner of the same version as the library:
//! `cargo install iai-callgrind-runner --version 0.16.1`, then
//! `cargo bench -p pbwire --bench wire_iai`.
//!
//! Each benchmark handles `common::N` (256) values (or the stated run/string
//! length); divide by it for a per-value figure. Input construction happens
//! in `setup` functions and is not counted.
// The harness macros generate undocumented public items.
#![allow(missing_docs)]

mod common;

use std::hint::black_box;

use common::*;
use iai_callgrind::{library_benchmark, library_benchmark_group, main};
use pbwire::packed::{count_packed_varints, decode_packed_varints};
use pbwire::utf8::validate_utf8;
use pbwire::varint::decode_varint;
use pbwire::{Reader, Writer};
use prost::encoding as pe;

fn varint_input(len: usize) -> Vec<u8> {
    if len == 0 { encode_all(&mixed_values(N)) } else { encode_all(&values_of_len(len, N)) }
}

fn encode_input(len: usize) -> (Vec<u64>, Vec<u8>) {
    let values = if len == 0 { mixed_values(N) } else { values_of_len(len, N) };
    (values, Vec::with_capacity(N * 10))
}

fn packed_input(n: usize) -> (Vec<u8>, Vec<u64>) {
    (packed_run(n, true).1, Vec::with_capacity(n))
}

fn packed_input_1byte(n: usize) -> (Vec<u8>, Vec<u64>) {
    (packed_run(n, false).1, Vec::with_capacity(n))
}

fn packed_input_prefixed(n: usize) -> (Vec<u8>, Vec<u64>) {
    (with_len_prefix(&packed_run(n, true).1), Vec::with_capacity(n))
}

// Argument 0 stands for the mixed distribution; 1..=10 for that many bytes.

#[library_benchmark]
#[benches::len(args = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0], setup = varint_input)]
fn varint_decode_pbwire(buf: Vec<u8>) -> u64 {
    let mut rest = &buf[..];
    let mut sum = 0u64;
    while !rest.is_empty() {
        match decode_varint(rest) {
            Ok((v, n)) => {
                sum = sum.wrapping_add(v);
                rest = &rest[n..];
            }
            Err(_) => break,
        }
    }
    black_box(sum)
}

#[library_benchmark]
#[benches::len(args = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0], setup = varint_input)]
fn varint_decode_pbwire_reader(buf: Vec<u8>) -> u64 {
    let mut r = Reader::new(&buf);
    let mut sum = 0u64;
    while !r.is_empty() {
        match r.read_varint() {
            Ok(v) => sum = sum.wrapping_add(v),
            Err(_) => break,
        }
    }
    black_box(sum)
}

#[library_benchmark]
#[benches::len(args = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0], setup = varint_input)]
fn varint_decode_prost(buf: Vec<u8>) -> u64 {
    let mut rest = &buf[..];
    let mut sum = 0u64;
    while !rest.is_empty() {
        match pe::decode_varint(&mut rest) {
            Ok(v) => sum = sum.wrapping_add(v),
            Err(_) => break,
        }
    }
    black_box(sum)
}

#[library_benchmark]
#[benches::len(args = [1, 2, 5, 10, 0], setup = encode_input)]
fn varint_encode_pbwire(input: (Vec<u64>, Vec<u8>)) -> usize {
    let (values, out) = input;
    let mut w = Writer::from_vec(out);
    for &v in &values {
        w.put_varint(v);
    }
    black_box(w.len())
}

#[library_benchmark]
#[benches::len(args = [1, 2, 5, 10, 0], setup = encode_input)]
fn varint_encode_prost(input: (Vec<u64>, Vec<u8>)) -> usize {
    let (values, mut out) = input;
    for &v in &values {
        pe::encode_varint(v, &mut out);
    }
    black_box(out.len())
}

fn tag_input() -> Vec<u8> {
    tag_bytes(&tag_values(N))
}

#[library_benchmark]
#[bench::mixed(setup = tag_input)]
fn tag_decode_pbwire(buf: Vec<u8>) -> u32 {
    let mut r = Reader::new(&buf);
    let mut acc = 0u32;
    while !r.is_empty() {
        match r.read_tag() {
            Ok(t) => acc = acc.wrapping_add(t.field_number() ^ t.wire_type() as u32),
            Err(_) => break,
        }
    }
    black_box(acc)
}

#[library_benchmark]
#[bench::mixed(setup = tag_input)]
fn tag_decode_prost(buf: Vec<u8>) -> u32 {
    let mut rest = &buf[..];
    let mut acc = 0u32;
    while !rest.is_empty() {
        match pe::decode_key(&mut rest) {
            Ok((f, w)) => acc = acc.wrapping_add(f ^ w as u32),
            Err(_) => break,
        }
    }
    black_box(acc)
}

fn sint_input() -> Vec<u8> {
    zigzag_bytes(&sint_values(N))
}

#[library_benchmark]
#[bench::mixed(setup = sint_input)]
fn sint64_decode_pbwire(buf: Vec<u8>) -> i64 {
    let mut r = Reader::new(&buf);
    let mut acc = 0i64;
    while !r.is_empty() {
        match r.read_varint() {
            Ok(v) => acc = acc.wrapping_add(pbwire::zigzag::decode_zigzag64(v)),
            Err(_) => break,
        }
    }
    black_box(acc)
}

#[library_benchmark]
#[bench::mixed(setup = sint_input)]
fn sint64_decode_prost(buf: Vec<u8>) -> i64 {
    let mut rest = &buf[..];
    let mut acc = 0i64;
    let mut v = 0i64;
    while !rest.is_empty() {
        match pe::sint64::merge(pe::WireType::Varint, &mut v, &mut rest, pe::DecodeContext::default()) {
            Ok(()) => acc = acc.wrapping_add(v),
            Err(_) => break,
        }
    }
    black_box(acc)
}

#[library_benchmark]
#[benches::n(args = [1_000, 100_000], setup = packed_input)]
fn packed_mixed_pbwire(input: (Vec<u8>, Vec<u64>)) -> usize {
    let (run, mut out) = input;
    out.resize(count_packed_varints(&run), 0);
    black_box(decode_packed_varints(&run, 0, &mut out).unwrap_or(0))
}

// The one-at-a-time decoder and per-byte count this replaced (A/B peer).
#[library_benchmark]
#[benches::n(args = [1_000, 100_000], setup = packed_input)]
fn packed_mixed_pbwire_scalar(input: (Vec<u8>, Vec<u64>)) -> usize {
    let (run, mut out) = input;
    out.resize(scalar_ref::count_packed_varints(&run), 0);
    black_box(scalar_ref::decode_packed_varints(&run, 0, &mut out).unwrap_or(0))
}

#[library_benchmark]
#[benches::n(args = [1_000, 100_000], setup = packed_input_1byte)]
fn packed_1byte_pbwire(input: (Vec<u8>, Vec<u64>)) -> usize {
    let (run, mut out) = input;
    out.resize(count_packed_varints(&run), 0);
    black_box(decode_packed_varints(&run, 0, &mut out).unwrap_or(0))
}

#[library_benchmark]
#[benches::n(args = [1_000, 100_000], setup = packed_input_1byte)]
fn packed_1byte_pbwire_scalar(input: (Vec<u8>, Vec<u64>)) -> usize {
    let (run, mut out) = input;
    out.resize(scalar_ref::count_packed_varints(&run), 0);
    black_box(scalar_ref::decode_packed_varints(&run, 0, &mut out).unwrap_or(0))
}

#[library_benchmark]
#[benches::n(args = [1_000, 100_000], setup = packed_input_prefixed)]
fn packed_mixed_prost(input: (Vec<u8>, Vec<u64>)) -> usize {
    let (prefixed, mut out) = input;
    let mut rest = &prefixed[..];
    let _ =
        pe::uint64::merge_repeated(pe::WireType::LengthDelimited, &mut out, &mut rest, pe::DecodeContext::default());
    black_box(out.len())
}

fn utf8_ascii(len: usize) -> Vec<u8> {
    ascii_string(len)
}

fn utf8_multibyte(len: usize) -> Vec<u8> {
    multibyte_string(len)
}

#[library_benchmark]
#[benches::ascii(args = [8, 33, 1024, 65_536], setup = utf8_ascii)]
#[benches::multibyte(args = [8, 33, 1024, 65_536], setup = utf8_multibyte)]
fn utf8_pbwire(bytes: Vec<u8>) -> bool {
    black_box(validate_utf8(&bytes, 0).is_ok())
}

#[library_benchmark]
#[benches::ascii(args = [8, 33, 1024, 65_536], setup = utf8_ascii)]
#[benches::multibyte(args = [8, 33, 1024, 65_536], setup = utf8_multibyte)]
fn utf8_core_from_utf8(bytes: Vec<u8>) -> bool {
    // What prost does for `string` fields.
    black_box(core::str::from_utf8(&bytes).is_ok())
}

library_benchmark_group!(
    name = varint;
    benchmarks = varint_decode_pbwire, varint_decode_pbwire_reader, varint_decode_prost,
        varint_encode_pbwire, varint_encode_prost
);
library_benchmark_group!(
    name = tags_zigzag;
    benchmarks = tag_decode_pbwire, tag_decode_prost, sint64_decode_pbwire, sint64_decode_prost
);
library_benchmark_group!(
    name = packed;
    benchmarks = packed_mixed_pbwire, packed_mixed_pbwire_scalar, packed_mixed_prost, packed_1byte_pbwire,
        packed_1byte_pbwire_scalar
);
library_benchmark_group!(
    name = utf8;
    benchmarks = utf8_pbwire, utf8_core_from_utf8
);

main!(library_benchmark_groups = varint, tags_zigzag, packed, utf8);
