//! The packed decoder and counter as they were before the word loop
//! (HEAD 80231f4: `count_packed_varints`, `decode_packed_varints` and the
//! `decode_varint` it inlines), copied verbatim so that the benches can
//! run them as an A/B peer in the same process.
#![allow(dead_code, clippy::all)]

use pbwire::{Error, ErrorKind};

type Result<T> = core::result::Result<T, Error>;

const MAX_VARINT_LEN: usize = 10;

#[inline]
pub fn count_packed_varints(run: &[u8]) -> usize {
    run.iter().filter(|&&b| b < 0x80).count()
}

pub fn decode_packed_varints(run: &[u8], base: usize, out: &mut [u64]) -> Result<usize> {
    // `Reader::with_offset` + `read_varint`, spelled out.
    let mut rest = run;
    let end_offset = base + run.len();
    let mut n = 0;
    while !rest.is_empty() {
        let slot = match out.get_mut(n) {
            Some(slot) => slot,
            None => return Err(Error::new(ErrorKind::Truncated, end_offset - rest.len())),
        };
        match decode_varint(rest) {
            Ok((value, len)) => {
                rest = &rest[len..];
                *slot = value;
            }
            Err(e) => return Err(e.shifted(end_offset - rest.len())),
        }
        n += 1;
    }
    Ok(n)
}

/// Decodes a varint from the start of `buf`: the value and how many bytes it took.
///
/// Errors (offsets relative to `buf`): [`ErrorKind::Truncated`] when `buf`
/// ends inside the varint, [`ErrorKind::VarintOverflow`] for more than 64 bits.
#[inline]
pub fn decode_varint(buf: &[u8]) -> Result<(u64, usize)> {
    match buf.first() {
        Some(&b) if b < 0x80 => Ok((u64::from(b), 1)),
        _ => match buf.first_chunk::<MAX_VARINT_LEN>() {
            Some(chunk) => decode_varint_unrolled(chunk),
            None => decode_varint_slow(buf),
        },
    }
}

/// The fast path: 10 bytes are known to be there, so no byte needs a bounds check.
///
/// Bytes are accumulated whole into three 32-bit parts (bytes 0–3, 4–7,
/// 8–9) and a continuation bit is subtracted only when the varint goes on:
/// one add, one compare and (when continuing) one subtract per byte, in
/// 32-bit registers, and the parts are joined once at the end. This is the
/// classic layout of protobuf's C++ parser; it beats a mask-shift-or loop
/// from about 7 bytes on (measured with iai-callgrind, see PERF_LOG).
#[inline]
fn decode_varint_unrolled(bytes: &[u8; MAX_VARINT_LEN]) -> Result<(u64, usize)> {
    let mut b = bytes[0];
    let mut part0 = u32::from(b);
    if b < 0x80 {
        return Ok((u64::from(part0), 1));
    }
    part0 -= 0x80;
    b = bytes[1];
    part0 += u32::from(b) << 7;
    if b < 0x80 {
        return Ok((u64::from(part0), 2));
    }
    part0 -= 0x80 << 7;
    b = bytes[2];
    part0 += u32::from(b) << 14;
    if b < 0x80 {
        return Ok((u64::from(part0), 3));
    }
    part0 -= 0x80 << 14;
    b = bytes[3];
    part0 += u32::from(b) << 21;
    if b < 0x80 {
        return Ok((u64::from(part0), 4));
    }
    part0 -= 0x80 << 21;
    let low = u64::from(part0);

    b = bytes[4];
    let mut part1 = u32::from(b);
    if b < 0x80 {
        return Ok((low + (u64::from(part1) << 28), 5));
    }
    part1 -= 0x80;
    b = bytes[5];
    part1 += u32::from(b) << 7;
    if b < 0x80 {
        return Ok((low + (u64::from(part1) << 28), 6));
    }
    part1 -= 0x80 << 7;
    b = bytes[6];
    part1 += u32::from(b) << 14;
    if b < 0x80 {
        return Ok((low + (u64::from(part1) << 28), 7));
    }
    part1 -= 0x80 << 14;
    b = bytes[7];
    part1 += u32::from(b) << 21;
    if b < 0x80 {
        return Ok((low + (u64::from(part1) << 28), 8));
    }
    part1 -= 0x80 << 21;
    let mid = low + (u64::from(part1) << 28);

    b = bytes[8];
    let mut part2 = u32::from(b);
    if b < 0x80 {
        return Ok((mid + (u64::from(part2) << 56), 9));
    }
    part2 -= 0x80;
    b = bytes[9];
    // The 10th byte holds bit 63 only: 0 or 1, and no continuation.
    if b > 1 {
        return Err(Error::new(ErrorKind::VarintOverflow, 0));
    }
    part2 += u32::from(b) << 7;
    Ok((mid + (u64::from(part2) << 56), 10))
}

/// The slow path near the end of the buffer: every byte bounds-checked.
#[cold]
fn decode_varint_slow(buf: &[u8]) -> Result<(u64, usize)> {
    let mut value = 0u64;
    for (i, &byte) in buf.iter().take(MAX_VARINT_LEN).enumerate() {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            if i == MAX_VARINT_LEN - 1 && byte > 1 {
                return Err(Error::new(ErrorKind::VarintOverflow, 0));
            }
            return Ok((value, i + 1));
        }
    }
    if buf.len() >= MAX_VARINT_LEN {
        Err(Error::new(ErrorKind::VarintOverflow, 0))
    } else {
        Err(Error::new(ErrorKind::Truncated, 0))
    }
}
