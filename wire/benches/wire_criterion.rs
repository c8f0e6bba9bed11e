//! Wall-clock benches of the wire primitives, pbwire against its peers in
//! one process (one run, same machine state): `prost::encoding`,
//! `integer-encoding` and, on x86_64, `varint-simd`.
//!
//! `cargo bench -p pbwire --bench wire_criterion` (add `-- --quick` for a
//! fast pass, or a filter such as `-- varint_decode`).
//!
//! Peers are compared on the same bytes and the same work: every decode
//! loop walks a buffer of `N` varints with the library's own cursor/slice
//! API and sums the values (so nothing is optimised away); every encode
//! loop appends `N` values to a cleared, pre-grown `Vec`.
// The harness macros generate undocumented public items.
#![allow(missing_docs)]

mod common;
#[path = "common/message.rs"]
mod message;

use std::hint::black_box;
use std::time::Duration;

use common::*;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use integer_encoding::VarInt;
use pbwire::packed::{count_packed_varints, decode_packed_varints};
use pbwire::utf8::validate_utf8;
use pbwire::varint::{MAX_VARINT_LEN, decode_varint, encode_varint};
use pbwire::zigzag::{decode_zigzag64, encode_zigzag64};
use pbwire::{Reader, Tag, WireType, Writer};
use prost::encoding as pe;

// ---------------------------------------------------------------- decode loops

#[inline(never)]
fn pbwire_decode_all(mut buf: &[u8]) -> u64 {
    let mut sum = 0u64;
    while !buf.is_empty() {
        match decode_varint(buf) {
            Ok((v, n)) => {
                sum = sum.wrapping_add(v);
                buf = &buf[n..];
            }
            Err(_) => break,
        }
    }
    sum
}

#[inline(never)]
fn pbwire_reader_decode_all(buf: &[u8]) -> u64 {
    let mut r = Reader::new(buf);
    let mut sum = 0u64;
    while !r.is_empty() {
        match r.read_varint() {
            Ok(v) => sum = sum.wrapping_add(v),
            Err(_) => break,
        }
    }
    sum
}

#[inline(never)]
fn prost_decode_all(mut buf: &[u8]) -> u64 {
    let mut sum = 0u64;
    while !buf.is_empty() {
        match pe::decode_varint(&mut buf) {
            Ok(v) => sum = sum.wrapping_add(v),
            Err(_) => break,
        }
    }
    sum
}

#[inline(never)]
fn integer_encoding_decode_all(mut buf: &[u8]) -> u64 {
    let mut sum = 0u64;
    while !buf.is_empty() {
        match u64::decode_var(buf) {
            Some((v, n)) => {
                sum = sum.wrapping_add(v);
                buf = &buf[n..];
            }
            None => break,
        }
    }
    sum
}

#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn varint_simd_decode_all(mut buf: &[u8]) -> u64 {
    let mut sum = 0u64;
    while !buf.is_empty() {
        match varint_simd::decode::<u64>(buf) {
            Ok((v, n)) => {
                sum = sum.wrapping_add(v);
                buf = &buf[n..];
            }
            Err(_) => break,
        }
    }
    sum
}

fn decode_peers(c: &mut Criterion, group_name: &str, cases: &[(String, Vec<u8>, usize)]) {
    let mut g = c.benchmark_group(group_name);
    for (id, bytes, count) in cases {
        // All peers agree on the input before anything is timed.
        let expected = pbwire_decode_all(bytes);
        assert_eq!(prost_decode_all(bytes), expected);
        assert_eq!(integer_encoding_decode_all(bytes), expected);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(varint_simd_decode_all(bytes), expected);
        g.throughput(Throughput::Elements(*count as u64));
        g.bench_with_input(BenchmarkId::new("pbwire", id), bytes, |b, x| b.iter(|| pbwire_decode_all(black_box(x))));
        g.bench_with_input(BenchmarkId::new("pbwire_reader", id), bytes, |b, x| {
            b.iter(|| pbwire_reader_decode_all(black_box(x)))
        });
        g.bench_with_input(BenchmarkId::new("prost", id), bytes, |b, x| b.iter(|| prost_decode_all(black_box(x))));
        g.bench_with_input(BenchmarkId::new("integer_encoding", id), bytes, |b, x| {
            b.iter(|| integer_encoding_decode_all(black_box(x)))
        });
        #[cfg(target_arch = "x86_64")]
        g.bench_with_input(BenchmarkId::new("varint_simd", id), bytes, |b, x| {
            b.iter(|| varint_simd_decode_all(black_box(x)))
        });
    }
    g.finish();
}

fn bench_varint_decode(c: &mut Criterion) {
    let mut cases: Vec<(String, Vec<u8>, usize)> =
        (1..=MAX_VARINT_LEN).map(|len| (format!("len{len:02}"), encode_all(&values_of_len(len, N)), N)).collect();
    cases.push(("mixed".into(), encode_all(&mixed_values(N)), N));
    decode_peers(c, "varint_decode", &cases);
}

// ---------------------------------------------------------------- encode loops

#[inline(never)]
fn pbwire_writer_encode_all(w: &mut Writer, values: &[u64]) {
    w.clear();
    for &v in values {
        w.put_varint(v);
    }
}

#[inline(never)]
fn pbwire_free_encode_all(out: &mut Vec<u8>, values: &[u64]) {
    out.clear();
    for &v in values {
        let mut b = [0u8; MAX_VARINT_LEN];
        let n = encode_varint(v, &mut b);
        out.extend_from_slice(&b[..n]);
    }
}

#[inline(never)]
fn prost_encode_all(out: &mut Vec<u8>, values: &[u64]) {
    out.clear();
    for &v in values {
        pe::encode_varint(v, out);
    }
}

#[inline(never)]
fn integer_encoding_encode_all(out: &mut Vec<u8>, values: &[u64]) {
    out.clear();
    for &v in values {
        let mut b = [0u8; MAX_VARINT_LEN];
        let n = v.encode_var(&mut b);
        out.extend_from_slice(&b[..n]);
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn varint_simd_encode_all(out: &mut Vec<u8>, values: &[u64]) {
    out.clear();
    for &v in values {
        let (b, n) = varint_simd::encode::<u64>(v);
        out.extend_from_slice(&b[..n as usize]);
    }
}

fn bench_varint_encode(c: &mut Criterion) {
    let mut cases: Vec<(String, Vec<u64>)> =
        (1..=MAX_VARINT_LEN).map(|len| (format!("len{len:02}"), values_of_len(len, N))).collect();
    cases.push(("mixed".into(), mixed_values(N)));
    let mut g = c.benchmark_group("varint_encode");
    for (id, values) in &cases {
        let expected = encode_all(values);
        let mut w = Writer::with_capacity(N * 10);
        let mut out = Vec::with_capacity(N * 10);
        pbwire_writer_encode_all(&mut w, values);
        assert_eq!(w.as_slice(), expected);
        prost_encode_all(&mut out, values);
        assert_eq!(out, expected);
        integer_encoding_encode_all(&mut out, values);
        assert_eq!(out, expected);
        #[cfg(target_arch = "x86_64")]
        {
            varint_simd_encode_all(&mut out, values);
            assert_eq!(out, expected);
        }
        g.throughput(Throughput::Elements(values.len() as u64));
        g.bench_with_input(BenchmarkId::new("pbwire_writer", id), values, |b, x| {
            b.iter(|| pbwire_writer_encode_all(&mut w, black_box(x)))
        });
        g.bench_with_input(BenchmarkId::new("pbwire_free", id), values, |b, x| {
            b.iter(|| pbwire_free_encode_all(&mut out, black_box(x)))
        });
        g.bench_with_input(BenchmarkId::new("prost", id), values, |b, x| {
            b.iter(|| prost_encode_all(&mut out, black_box(x)))
        });
        g.bench_with_input(BenchmarkId::new("integer_encoding", id), values, |b, x| {
            b.iter(|| integer_encoding_encode_all(&mut out, black_box(x)))
        });
        #[cfg(target_arch = "x86_64")]
        g.bench_with_input(BenchmarkId::new("varint_simd", id), values, |b, x| {
            b.iter(|| varint_simd_encode_all(&mut out, black_box(x)))
        });
    }
    g.finish();
}

// ---------------------------------------------------------------- tags

#[inline(never)]
fn pbwire_tags_decode(buf: &[u8]) -> u32 {
    let mut r = Reader::new(buf);
    let mut acc = 0u32;
    while !r.is_empty() {
        match r.read_tag() {
            Ok(t) => acc = acc.wrapping_add(t.field_number() ^ t.wire_type() as u32),
            Err(_) => break,
        }
    }
    acc
}

#[inline(never)]
fn prost_tags_decode(mut buf: &[u8]) -> u32 {
    let mut acc = 0u32;
    while !buf.is_empty() {
        match pe::decode_key(&mut buf) {
            Ok((f, w)) => acc = acc.wrapping_add(f ^ w as u32),
            Err(_) => break,
        }
    }
    acc
}

#[inline(never)]
fn pbwire_tags_encode(w: &mut Writer, tags: &[(u32, u8)]) {
    w.clear();
    for &(f, wt) in tags {
        if let Ok(t) = Tag::new(f, WireType::from_bits(wt).unwrap()) {
            w.put_tag(t);
        }
    }
}

#[inline(never)]
fn prost_tags_encode(out: &mut Vec<u8>, tags: &[(u32, u8)]) {
    out.clear();
    for &(f, wt) in tags {
        pe::encode_key(f, pe::WireType::try_from(u64::from(wt)).unwrap(), out);
    }
}

fn bench_tags(c: &mut Criterion) {
    let tags = tag_values(N);
    let bytes = tag_bytes(&tags);
    assert_eq!(pbwire_tags_decode(&bytes), prost_tags_decode(&bytes));
    let mut g = c.benchmark_group("tag");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("decode/pbwire", |b| b.iter(|| pbwire_tags_decode(black_box(&bytes))));
    g.bench_function("decode/prost", |b| b.iter(|| prost_tags_decode(black_box(&bytes))));
    let mut w = Writer::with_capacity(N * 5);
    let mut out = Vec::with_capacity(N * 5);
    pbwire_tags_encode(&mut w, &tags);
    prost_tags_encode(&mut out, &tags);
    assert_eq!(w.as_slice(), out);
    g.bench_function("encode/pbwire", |b| b.iter(|| pbwire_tags_encode(&mut w, black_box(&tags))));
    g.bench_function("encode/prost", |b| b.iter(|| prost_tags_encode(&mut out, black_box(&tags))));
    g.finish();
}

// ---------------------------------------------------------------- zigzag (sint64)

#[inline(never)]
fn pbwire_sint64_decode(buf: &[u8]) -> i64 {
    let mut r = Reader::new(buf);
    let mut acc = 0i64;
    while !r.is_empty() {
        match r.read_varint() {
            Ok(v) => acc = acc.wrapping_add(decode_zigzag64(v)),
            Err(_) => break,
        }
    }
    acc
}

#[inline(never)]
fn prost_sint64_decode(mut buf: &[u8]) -> i64 {
    let mut acc = 0i64;
    let mut v = 0i64;
    while !buf.is_empty() {
        match pe::sint64::merge(pe::WireType::Varint, &mut v, &mut buf, pe::DecodeContext::default()) {
            Ok(()) => acc = acc.wrapping_add(v),
            Err(_) => break,
        }
    }
    acc
}

#[inline(never)]
fn integer_encoding_sint64_decode(mut buf: &[u8]) -> i64 {
    let mut acc = 0i64;
    while !buf.is_empty() {
        match i64::decode_var(buf) {
            Some((v, n)) => {
                acc = acc.wrapping_add(v);
                buf = &buf[n..];
            }
            None => break,
        }
    }
    acc
}

#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn varint_simd_sint64_decode(mut buf: &[u8]) -> i64 {
    let mut acc = 0i64;
    while !buf.is_empty() {
        match varint_simd::decode_zigzag::<i64>(buf) {
            Ok((v, n)) => {
                acc = acc.wrapping_add(v);
                buf = &buf[n..];
            }
            Err(_) => break,
        }
    }
    acc
}

#[inline(never)]
fn pbwire_sint64_encode(w: &mut Writer, values: &[i64]) {
    w.clear();
    for &v in values {
        w.put_varint(encode_zigzag64(v));
    }
}

#[inline(never)]
fn prost_sint64_encode(out: &mut Vec<u8>, values: &[i64]) {
    out.clear();
    for &v in values {
        // What prost's `sint64::encode` does after the tag.
        pe::encode_varint(((v << 1) ^ (v >> 63)) as u64, out);
    }
}

#[inline(never)]
fn integer_encoding_sint64_encode(out: &mut Vec<u8>, values: &[i64]) {
    out.clear();
    for &v in values {
        let mut b = [0u8; MAX_VARINT_LEN];
        let n = v.encode_var(&mut b);
        out.extend_from_slice(&b[..n]);
    }
}

fn bench_zigzag(c: &mut Criterion) {
    let values = sint_values(N);
    let bytes = zigzag_bytes(&values);
    let expected: i64 = values.iter().fold(0i64, |a, &v| a.wrapping_add(v));
    assert_eq!(pbwire_sint64_decode(&bytes), expected);
    assert_eq!(prost_sint64_decode(&bytes), expected);
    assert_eq!(integer_encoding_sint64_decode(&bytes), expected);
    #[cfg(target_arch = "x86_64")]
    assert_eq!(varint_simd_sint64_decode(&bytes), expected);
    let mut g = c.benchmark_group("sint64");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("decode/pbwire", |b| b.iter(|| pbwire_sint64_decode(black_box(&bytes))));
    g.bench_function("decode/prost", |b| b.iter(|| prost_sint64_decode(black_box(&bytes))));
    g.bench_function("decode/integer_encoding", |b| b.iter(|| integer_encoding_sint64_decode(black_box(&bytes))));
    #[cfg(target_arch = "x86_64")]
    g.bench_function("decode/varint_simd", |b| b.iter(|| varint_simd_sint64_decode(black_box(&bytes))));
    let mut w = Writer::with_capacity(N * 10);
    let mut out = Vec::with_capacity(N * 10);
    pbwire_sint64_encode(&mut w, &values);
    assert_eq!(w.as_slice(), bytes);
    integer_encoding_sint64_encode(&mut out, &values);
    assert_eq!(out, bytes);
    g.bench_function("encode/pbwire", |b| b.iter(|| pbwire_sint64_encode(&mut w, black_box(&values))));
    g.bench_function("encode/prost", |b| b.iter(|| prost_sint64_encode(&mut out, black_box(&values))));
    g.bench_function("encode/integer_encoding", |b| {
        b.iter(|| integer_encoding_sint64_encode(&mut out, black_box(&values)))
    });
    g.finish();
}

// ---------------------------------------------------------------- packed runs

/// pbwire as a decoder uses it: count (to pre-size), then decode into the slice.
#[inline(never)]
fn pbwire_packed(out: &mut Vec<u64>, run: &[u8]) -> usize {
    out.clear();
    out.resize(count_packed_varints(run), 0);
    decode_packed_varints(run, 0, out).unwrap_or(0)
}

/// The decode alone, into a slice already sized (as the codec does with
/// its fixed stack buffer): no count, no zeroing.
#[inline(never)]
fn pbwire_packed_into(out: &mut [u64], run: &[u8]) -> usize {
    decode_packed_varints(run, 0, out).unwrap_or(0)
}

#[inline(never)]
fn pbwire_packed_count(run: &[u8]) -> usize {
    count_packed_varints(run)
}

/// The same with the one-at-a-time decoder and per-byte count this
/// replaced (A/B peer in the same run).
#[inline(never)]
fn pbwire_packed_scalar(out: &mut Vec<u64>, run: &[u8]) -> usize {
    out.clear();
    out.resize(scalar_ref::count_packed_varints(run), 0);
    scalar_ref::decode_packed_varints(run, 0, out).unwrap_or(0)
}

#[inline(never)]
fn pbwire_packed_count_scalar(run: &[u8]) -> usize {
    scalar_ref::count_packed_varints(run)
}

/// prost's packed path: `merge_repeated` on the length-prefixed run, pushing.
#[inline(never)]
fn prost_packed(out: &mut Vec<u64>, prefixed: &[u8]) -> usize {
    out.clear();
    let mut buf = prefixed;
    let _ = pe::uint64::merge_repeated(pe::WireType::LengthDelimited, out, &mut buf, pe::DecodeContext::default());
    out.len()
}

#[inline(never)]
fn integer_encoding_packed(out: &mut Vec<u64>, mut run: &[u8]) -> usize {
    out.clear();
    while let Some((v, n)) = u64::decode_var(run) {
        out.push(v);
        run = &run[n..];
        if run.is_empty() {
            break;
        }
    }
    out.len()
}

#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn varint_simd_packed(out: &mut Vec<u64>, mut run: &[u8]) -> usize {
    out.clear();
    while let Ok((v, n)) = varint_simd::decode::<u64>(run) {
        out.push(v);
        run = &run[n..];
        if run.is_empty() {
            break;
        }
    }
    out.len()
}

fn bench_packed(c: &mut Criterion) {
    let mut g = c.benchmark_group("packed_decode");
    for &n in &[1_000usize, 100_000] {
        for mixed in [false, true] {
            let (values, run) = packed_run(n, mixed);
            let prefixed = with_len_prefix(&run);
            let id = format!("{}_{n}", if mixed { "mixed" } else { "1byte" });
            let mut out = Vec::with_capacity(n);
            assert_eq!(pbwire_packed(&mut out, &run), n);
            assert_eq!(out, values);
            assert_eq!(pbwire_packed_scalar(&mut out, &run), n);
            assert_eq!(out, values);
            assert_eq!(prost_packed(&mut out, &prefixed), n);
            assert_eq!(out, values);
            assert_eq!(integer_encoding_packed(&mut out, &run), n);
            assert_eq!(out, values);
            #[cfg(target_arch = "x86_64")]
            {
                assert_eq!(varint_simd_packed(&mut out, &run), n);
                assert_eq!(out, values);
            }
            g.throughput(Throughput::Bytes(run.len() as u64));
            g.bench_with_input(BenchmarkId::new("pbwire", &id), &run, |b, x| {
                b.iter(|| pbwire_packed(&mut out, black_box(x)))
            });
            let mut sized = vec![0u64; n];
            assert_eq!(pbwire_packed_into(&mut sized, &run), n);
            g.bench_with_input(BenchmarkId::new("pbwire_decode_only", &id), &run, |b, x| {
                b.iter(|| pbwire_packed_into(&mut sized, black_box(x)))
            });
            g.bench_with_input(BenchmarkId::new("pbwire_scalar", &id), &run, |b, x| {
                b.iter(|| pbwire_packed_scalar(&mut out, black_box(x)))
            });
            g.bench_with_input(BenchmarkId::new("pbwire_count_only", &id), &run, |b, x| {
                b.iter(|| pbwire_packed_count(black_box(x)))
            });
            g.bench_with_input(BenchmarkId::new("pbwire_count_only_scalar", &id), &run, |b, x| {
                b.iter(|| pbwire_packed_count_scalar(black_box(x)))
            });
            g.bench_with_input(BenchmarkId::new("prost", &id), &prefixed, |b, x| {
                b.iter(|| prost_packed(&mut out, black_box(x)))
            });
            g.bench_with_input(BenchmarkId::new("integer_encoding", &id), &run, |b, x| {
                b.iter(|| integer_encoding_packed(&mut out, black_box(x)))
            });
            #[cfg(target_arch = "x86_64")]
            g.bench_with_input(BenchmarkId::new("varint_simd", &id), &run, |b, x| {
                b.iter(|| varint_simd_packed(&mut out, black_box(x)))
            });
        }
    }
    g.finish();
}

// ---------------------------------------------------------------- UTF-8

fn bench_utf8(c: &mut Criterion) {
    let mut g = c.benchmark_group("utf8");
    for &len in &[8usize, 33, 1024, 65_536] {
        for (kind, bytes) in [("ascii", ascii_string(len)), ("multibyte", multibyte_string(len))] {
            assert_eq!(bytes.len(), len);
            assert!(validate_utf8(&bytes, 0).is_ok());
            let id = format!("{kind}_{len}");
            g.throughput(Throughput::Bytes(len as u64));
            g.bench_with_input(BenchmarkId::new("pbwire", &id), &bytes, |b, x| {
                b.iter(|| validate_utf8(black_box(x), 0).is_ok())
            });
            // prost validates `string` fields with `core::str::from_utf8`.
            g.bench_with_input(BenchmarkId::new("prost_core_from_utf8", &id), &bytes, |b, x| {
                b.iter(|| core::str::from_utf8(black_box(x)).is_ok())
            });
            g.bench_with_input(BenchmarkId::new("simdutf8_basic", &id), &bytes, |b, x| {
                b.iter(|| simdutf8::basic::from_utf8(black_box(x)).is_ok())
            });
        }
    }
    g.finish();
}

// ---------------------------------------------------------------- a whole message

fn bench_message(c: &mut Criterion) {
    let bytes = message::bench_mid();
    let sum = message::parse_pbwire(&bytes);
    assert!(sum.is_some() && sum == message::parse_prost(&bytes), "the two BenchPayload parsers disagree");
    let mut g = c.benchmark_group("message_parse");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("bench_mid/pbwire", |b| b.iter(|| message::parse_pbwire(black_box(&bytes))));
    g.bench_function("bench_mid/prost", |b| b.iter(|| message::parse_prost(black_box(&bytes))));
    g.finish();
}

fn config() -> Criterion {
    // Short measurements (the whole binary runs in a few minutes); the
    // comparisons that matter are ratios within one run.
    Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(900))
        .sample_size(30)
        .without_plots()
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_varint_decode, bench_varint_encode, bench_tags, bench_zigzag, bench_packed, bench_utf8,
        bench_message
}
criterion_main!(benches);
