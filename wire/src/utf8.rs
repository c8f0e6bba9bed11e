//! UTF-8 validation for `string` fields.
//!
//! Short strings take an ASCII fast path (word-at-a-time check from `core`)
//! and fall back to `core::str::from_utf8`; strings of at least
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
#[inline]
pub fn validate_utf8(bytes: &[u8], base: usize) -> Result<()> {
    #[cfg(feature = "simdutf8")]
    if bytes.len() >= SIMD_THRESHOLD {
        return match simdutf8::basic::from_utf8(bytes) {
            Ok(_) => Ok(()),
            Err(_) => Err(invalid_at(bytes, base)),
        };
    }
    if bytes.is_ascii() {
        return Ok(());
    }
    match core::str::from_utf8(bytes) {
        Ok(_) => Ok(()),
        Err(e) => Err(Error::new(ErrorKind::InvalidUtf8, base + e.valid_up_to())),
    }
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
