//! A whole message parsed the way a Rust user writes it by hand over each
//! crate's public API: the benchmark matrix's `proto2_basic.BenchPayload`
//! (`fixtures/golden/bench_mid.bin`, 600 bytes: 52 fields, 7 sub-messages,
//! packed and unpacked runs) walked field by field, every value folded into
//! a checksum. The same parser twice, once over pbwire's `Reader` and once
//! over `prost::encoding`'s primitives, so the two crates are compared on a
//! realistic mix of tags, varints, lengths and fixed-width values rather
//! than one primitive at a time.

use pbwire::packed::PackedVarints;
use pbwire::zigzag::decode_zigzag64;
use pbwire::{Reader, WireType};
use prost::bytes::Buf;
use prost::encoding as pe;

/// The 600-byte BenchPayload of the matrix.
pub fn bench_mid() -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/golden/bench_mid.bin");
    std::fs::read(path).expect("fixtures/golden/bench_mid.bin")
}

/// BenchPayload over pbwire's `Reader`.
pub fn parse_pbwire(b: &[u8]) -> Option<u64> {
    bench_payload_pbwire(&mut Reader::new(b)).ok()
}

fn bench_payload_pbwire(r: &mut Reader<'_>) -> pbwire::Result<u64> {
    let mut sum = 0u64;
    while !r.is_empty() {
        let tag = r.read_tag()?;
        let v = match (tag.field_number(), tag.wire_type()) {
            (1 | 6 | 13, WireType::Varint) => r.read_varint()? as i32 as u64,
            (3 | 5 | 10, WireType::Varint) => r.read_varint()?,
            (8, WireType::Varint) => decode_zigzag64(r.read_varint()?) as u64,
            (4 | 11, WireType::I64) => r.read_fixed64()?,
            (9, WireType::I32) => u64::from(r.read_fixed32()?),
            (2 | 7 | 12 | 15, WireType::Len) => r.read_len_bytes()?.len() as u64,
            (14, WireType::Len) => {
                let at = r.position();
                let run = r.read_len_bytes()?;
                pbwire::packed::packed_fixed32(run, at)?.fold(0u64, |s, v| s.wrapping_add(u64::from(v)))
            }
            (16 | 17, WireType::Len) => inner_pbwire(&mut r.read_len_reader()?)?,
            _ => {
                r.skip_field(tag, 32)?;
                0
            }
        };
        sum = sum.wrapping_add(v);
    }
    Ok(sum)
}

fn inner_pbwire(r: &mut Reader<'_>) -> pbwire::Result<u64> {
    let mut sum = 0u64;
    while !r.is_empty() {
        let tag = r.read_tag()?;
        let v = match (tag.field_number(), tag.wire_type()) {
            (1, WireType::Varint) => r.read_varint()? as i32 as u64,
            (2, WireType::Len) => r.read_len_bytes()?.len() as u64,
            (3, WireType::Len) => {
                let at = r.position();
                let run = r.read_len_bytes()?;
                let mut s = 0u64;
                for v in PackedVarints::new(run, at) {
                    s = s.wrapping_add(decode_zigzag64(v?) as u64);
                }
                s
            }
            _ => {
                r.skip_field(tag, 32)?;
                0
            }
        };
        sum = sum.wrapping_add(v);
    }
    Ok(sum)
}

/// BenchPayload over `prost::encoding` (`&[u8]` as its `Buf`).
pub fn parse_prost(mut b: &[u8]) -> Option<u64> {
    bench_payload_prost(&mut b)
}

fn varint_prost(b: &mut &[u8]) -> Option<u64> {
    pe::decode_varint(b).ok()
}

fn len_bytes_prost<'a>(b: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = usize::try_from(varint_prost(b)?).ok()?;
    let (head, rest) = b.split_at_checked(len)?;
    *b = rest;
    Some(head)
}

fn skip_prost(b: &mut &[u8], number: u32, wt: pe::WireType) -> Option<u64> {
    pe::skip_field(wt, number, b, pe::DecodeContext::default()).ok()?;
    Some(0)
}

fn bench_payload_prost(b: &mut &[u8]) -> Option<u64> {
    let mut sum = 0u64;
    while b.has_remaining() {
        let (number, wt) = pe::decode_key(b).ok()?;
        let v = match (number, wt) {
            (1 | 6 | 13, pe::WireType::Varint) => varint_prost(b)? as i32 as u64,
            (3 | 5 | 10, pe::WireType::Varint) => varint_prost(b)?,
            (8, pe::WireType::Varint) => decode_zigzag64(varint_prost(b)?) as u64,
            (4 | 11, pe::WireType::SixtyFourBit) if b.len() >= 8 => b.get_u64_le(),
            (9, pe::WireType::ThirtyTwoBit) if b.len() >= 4 => u64::from(b.get_u32_le()),
            (2 | 7 | 12 | 15, pe::WireType::LengthDelimited) => len_bytes_prost(b)?.len() as u64,
            (14, pe::WireType::LengthDelimited) => {
                let run = len_bytes_prost(b)?;
                if run.len() % 4 != 0 {
                    return None;
                }
                run.chunks_exact(4)
                    .fold(0u64, |s, c| s.wrapping_add(u64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]]))))
            }
            (16 | 17, pe::WireType::LengthDelimited) => inner_prost(&mut len_bytes_prost(b)?)?,
            _ => skip_prost(b, number, wt)?,
        };
        sum = sum.wrapping_add(v);
    }
    Some(sum)
}

fn inner_prost(b: &mut &[u8]) -> Option<u64> {
    let mut sum = 0u64;
    while b.has_remaining() {
        let (number, wt) = pe::decode_key(b).ok()?;
        let v = match (number, wt) {
            (1, pe::WireType::Varint) => varint_prost(b)? as i32 as u64,
            (2, pe::WireType::LengthDelimited) => len_bytes_prost(b)?.len() as u64,
            (3, pe::WireType::LengthDelimited) => {
                let mut run = len_bytes_prost(b)?;
                let mut s = 0u64;
                while run.has_remaining() {
                    s = s.wrapping_add(decode_zigzag64(varint_prost(&mut run)?) as u64);
                }
                s
            }
            _ => skip_prost(b, number, wt)?,
        };
        sum = sum.wrapping_add(v);
    }
    Some(sum)
}
