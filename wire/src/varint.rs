//! Base-128 varints: the integer encoding behind wire type 0, tags and lengths.
//!
//! Protobuf semantics, exactly:
//! - a varint is at most [`MAX_VARINT_LEN`] (10) bytes, and its 10th byte may
//!   only be 0 or 1 (bits 63 and above); anything longer is an error;
//! - 32-bit fields decode the full 64-bit varint and truncate it (so a
//!   negative `int32`, written sign-extended as 10 bytes, round-trips);
//! - encoders write the shortest form.
//!
//! Cost: decoding a 1-byte varint is one load and one compare. Longer varints
//! take the unrolled path when 10 bytes remain (no per-byte bounds checks),
//! and a bounds-checked loop near the end of the buffer.

use crate::error::{Error, ErrorKind, Result};

/// The longest a varint can be: 10 bytes hold 64 bits.
pub const MAX_VARINT_LEN: usize = 10;

/// How many bytes [`encode_varint`] writes for `value` (1..=10).
#[inline]
pub const fn encoded_len_varint(value: u64) -> usize {
    // 1 + floor(bits/7), computed without a branch or a loop: for the
    // highest set bit h (0..=63), (h * 9 + 73) / 64 == h / 7 + 1.
    let highest_bit = 63 - (value | 1).leading_zeros() as usize;
    (highest_bit * 9 + 73) / 64
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

/// Skips the varint at the start of `buf` without computing its value;
/// returns its length. Same errors as [`decode_varint`].
#[inline]
pub fn skip_varint(buf: &[u8]) -> Result<usize> {
    // The same checks as decoding (the 10th byte must be 0 or 1), so that
    // skipping accepts exactly what decoding accepts.
    for (i, &byte) in buf.iter().take(MAX_VARINT_LEN).enumerate() {
        if byte < 0x80 {
            if i == MAX_VARINT_LEN - 1 && byte > 1 {
                return Err(Error::new(ErrorKind::VarintOverflow, 0));
            }
            return Ok(i + 1);
        }
    }
    if buf.len() >= MAX_VARINT_LEN {
        Err(Error::new(ErrorKind::VarintOverflow, 0))
    } else {
        Err(Error::new(ErrorKind::Truncated, 0))
    }
}

/// Encodes `value` into `out` in its shortest form; returns the length (1..=10).
#[inline]
pub fn encode_varint(mut value: u64, out: &mut [u8; MAX_VARINT_LEN]) -> usize {
    let mut i = 0;
    while value >= 0x80 {
        out[i] = (value as u8) | 0x80;
        value >>= 7;
        i += 1;
    }
    out[i] = value as u8;
    i + 1
}

/// The varint of an `int32` value: negative values are sign-extended to 64
/// bits and so take 10 bytes, as protobuf specifies.
#[inline]
pub const fn int32_to_varint(value: i32) -> u64 {
    value as i64 as u64
}

/// The `int32` a varint carries: the low 32 bits, as protobuf specifies.
#[inline]
pub const fn varint_to_int32(varint: u64) -> i32 {
    varint as u32 as i32
}

/// The `uint32` a varint carries: the low 32 bits, as protobuf specifies.
#[inline]
pub const fn varint_to_uint32(varint: u64) -> u32 {
    varint as u32
}

/// The `bool` a varint carries: any non-zero value is `true`.
#[inline]
pub const fn varint_to_bool(varint: u64) -> bool {
    varint != 0
}
