//! Packed repeated fields: a LEN value holding back-to-back varints or
//! fixed-width values.

use crate::error::{Error, ErrorKind, Result};
use crate::reader::Reader;

/// Counts the varints in a packed run without decoding them: the number of
/// bytes without the continuation bit. Used to pre-size the destination.
///
/// Cost: one pass of byte compares, which LLVM vectorizes (16 or 32 bytes per
/// step on x86_64 and aarch64). A run that ends inside a varint is not an error
/// here (the count is simply that of the complete varints); decoding reports it.
#[inline]
pub fn count_packed_varints(run: &[u8]) -> usize {
    run.iter().filter(|&&b| b < 0x80).count()
}

/// An iterator over the varints of a packed run, each as `u64`.
///
/// After the first error it yields nothing more.
#[derive(Debug, Clone)]
pub struct PackedVarints<'a> {
    reader: Reader<'a>,
    failed: bool,
}

impl<'a> PackedVarints<'a> {
    /// Iterates over the varints of `run`, whose first byte is at offset
    /// `base` of the enclosing buffer (for error offsets).
    #[inline]
    pub const fn new(run: &'a [u8], base: usize) -> Self {
        PackedVarints { reader: Reader::with_offset(run, base), failed: false }
    }
}

impl Iterator for PackedVarints<'_> {
    type Item = Result<u64>;

    #[inline]
    fn next(&mut self) -> Option<Result<u64>> {
        if self.reader.is_empty() || self.failed {
            return None;
        }
        let item = self.reader.read_varint();
        self.failed = item.is_err();
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.reader.remaining()))
    }
}

/// Decodes a packed varint run into `out`, returning how many values were
/// written. `out` must have room for [`count_packed_varints`] values; a run
/// with more values than `out` holds is decoded as far as `out` goes and then
/// reported as [`ErrorKind::Truncated`] at the first value that did not fit.
pub fn decode_packed_varints(run: &[u8], base: usize, out: &mut [u64]) -> Result<usize> {
    let mut reader = Reader::with_offset(run, base);
    let mut n = 0;
    while !reader.is_empty() {
        let slot = match out.get_mut(n) {
            Some(slot) => slot,
            None => return Err(Error::new(ErrorKind::Truncated, reader.position())),
        };
        *slot = reader.read_varint()?;
        n += 1;
    }
    Ok(n)
}

/// The 4-byte values of a packed `fixed32`/`sfixed32`/`float` run, as `u32`.
///
/// Errors with [`ErrorKind::PackedLengthMisaligned`] (at `base`) when the
/// run's length is not a multiple of 4.
#[inline]
pub fn packed_fixed32(run: &[u8], base: usize) -> Result<impl ExactSizeIterator<Item = u32> + '_> {
    if !run.len().is_multiple_of(4) {
        return Err(Error::new(ErrorKind::PackedLengthMisaligned { len: run.len(), width: 4 }, base));
    }
    Ok(run.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
}

/// The 8-byte values of a packed `fixed64`/`sfixed64`/`double` run, as `u64`.
///
/// Errors with [`ErrorKind::PackedLengthMisaligned`] (at `base`) when the
/// run's length is not a multiple of 8.
#[inline]
pub fn packed_fixed64(run: &[u8], base: usize) -> Result<impl ExactSizeIterator<Item = u64> + '_> {
    if !run.len().is_multiple_of(8) {
        return Err(Error::new(ErrorKind::PackedLengthMisaligned { len: run.len(), width: 8 }, base));
    }
    Ok(run.chunks_exact(8).map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])))
}
