//! Fixed-width little-endian values: wire types I32 (`fixed32`, `sfixed32`,
//! `float`) and I64 (`fixed64`, `sfixed64`, `double`).
//!
//! Decoding is a bounds check and an unaligned load; on x86_64 and aarch64
//! (both little endian) the byte swap compiles away.

use crate::error::{Error, ErrorKind, Result};

/// Reads a little-endian `u32` from the start of `buf`.
#[inline]
pub fn decode_fixed32(buf: &[u8]) -> Result<u32> {
    match buf.first_chunk::<4>() {
        Some(bytes) => Ok(u32::from_le_bytes(*bytes)),
        None => Err(Error::new(ErrorKind::Truncated, 0)),
    }
}

/// Reads a little-endian `u64` from the start of `buf`.
#[inline]
pub fn decode_fixed64(buf: &[u8]) -> Result<u64> {
    match buf.first_chunk::<8>() {
        Some(bytes) => Ok(u64::from_le_bytes(*bytes)),
        None => Err(Error::new(ErrorKind::Truncated, 0)),
    }
}

/// The wire form of a `float` (its IEEE-754 bits).
#[inline]
pub const fn float_to_fixed32(value: f32) -> u32 {
    value.to_bits()
}

/// The `float` of a fixed32 wire value.
#[inline]
pub const fn fixed32_to_float(bits: u32) -> f32 {
    f32::from_bits(bits)
}

/// The wire form of a `double` (its IEEE-754 bits).
#[inline]
pub const fn double_to_fixed64(value: f64) -> u64 {
    value.to_bits()
}

/// The `double` of a fixed64 wire value.
#[inline]
pub const fn fixed64_to_double(bits: u64) -> f64 {
    f64::from_bits(bits)
}
