//! UTF-8 validation for `string` fields.
//!
//! Strings below [`SIMD_THRESHOLD`] bytes take an inline ASCII check (a few
//! overlapping word loads, no loop) and fall back to
//! `core::str::from_utf8`, out of line; strings of at least
//! [`SIMD_THRESHOLD`] bytes go to `simdutf8` when that feature is on. Either
//! way the result is exactly that of `core::str::from_utf8`: overlong forms,
//! surrogates (U+D800..U+DFFF), code points above U+10FFFF and truncated
//! sequences are rejected.

use crate::error::{Error, ErrorKind, Result};

/// Strings at least this long are validated with `simdutf8` (when enabled).
/// Below it, setting up SIMD costs more than the scalar check.
pub const SIMD_THRESHOLD: usize = 64;

/// Validates `bytes` as UTF-8. On failure the error's offset is that of the
/// first invalid byte plus `base`.
///
/// Cost: an ASCII string below [`SIMD_THRESHOLD`] bytes is checked inline,
/// with two to eight word loads and one test; anything else is one call.
#[inline(always)]
pub fn validate_utf8(bytes: &[u8], base: usize) -> Result<()> {
    if bytes.len() < SIMD_THRESHOLD && is_ascii_short(bytes) {
        return Ok(());
    }
    validate_utf8_slow(bytes, base)
}

/// [`validate_utf8`] past its inline ASCII check.
#[inline(never)]
fn validate_utf8_slow(bytes: &[u8], base: usize) -> Result<()> {
    #[cfg(feature = "simdutf8")]
    if bytes.len() >= SIMD_THRESHOLD {
        return match simdutf8::basic::from_utf8(bytes) {
            Ok(_) => Ok(()),
            Err(_) => Err(invalid_at(bytes, base)),
        };
    }
    match core::str::from_utf8(bytes) {
        Ok(_) => Ok(()),
        Err(e) => Err(Error::new(ErrorKind::InvalidUtf8, base + e.valid_up_to())),
    }
}

/// Whether `b` is ASCII, for the strings below [`SIMD_THRESHOLD`]: its
/// first and last 4, 8 or 16 bytes, which overlap to cover it, plus bytes
/// 16..32 and 32..48 when it is longer than 32 and 48, as words OR-ed
/// together and tested once; no loop and no branch on the data (`core`'s
/// `is_ascii` loops by words with a byte-wise head and tail). The length
/// tests go longest tier first: a 33-byte string takes four compares.
/// `false` for longer strings means "not known".
#[inline(always)]
fn is_ascii_short(b: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // In each arm the chunk sizes fit the length, so no `None` is taken.
    let n = b.len();
    let ends = if n >= SIMD_THRESHOLD {
        return false;
    } else if n >= 16 {
        let mut acc = b.first_chunk::<16>().map_or(HIGH, or_words) | b.last_chunk::<16>().map_or(HIGH, or_words);
        if n > 32 {
            acc |= b[16..].first_chunk::<16>().map_or(HIGH, or_words);
            if n > 48 {
                acc |= b[32..].first_chunk::<16>().map_or(HIGH, or_words);
            }
        }
        acc
    } else if n >= 8 {
        b.first_chunk::<8>().map_or(HIGH, or_words) | b.last_chunk::<8>().map_or(HIGH, or_words)
    } else if n >= 4 {
        let word = |c: &[u8; 4]| u64::from(u32::from_le_bytes(*c));
        b.first_chunk().map_or(HIGH, word) | b.last_chunk().map_or(HIGH, word)
    } else {
        return b.iter().fold(0, |acc, &x| acc | x) < 0x80;
    };
    ends & HIGH == 0
}

/// The OR of the little-endian words of `N` bytes (`N` a multiple of 8).
#[inline(always)]
fn or_words<const N: usize>(bytes: &[u8; N]) -> u64 {
    bytes.chunks_exact(8).fold(0, |acc, w| acc | w.first_chunk::<8>().map_or(0, |w| u64::from_le_bytes(*w)))
}

/// Finds where invalid bytes start (the error path only).
#[cold]
#[cfg_attr(not(feature = "simdutf8"), allow(dead_code))]
fn invalid_at(bytes: &[u8], base: usize) -> Error {
    let valid_up_to = match core::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(e) => e.valid_up_to(),
    };
    Error::new(ErrorKind::InvalidUtf8, base + valid_up_to)
}
