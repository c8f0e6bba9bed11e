//! Packed repeated fields: a LEN value holding back-to-back varints or
//! fixed-width values.

use crate::error::{Error, ErrorKind, Result};
use crate::reader::Reader;

mod words;
use words::decode_words;

/// Counts the varints in a packed run without decoding them: the number of
/// bytes without the continuation bit. Used to pre-size the destination.
///
/// Cost: each 128-byte chunk is one pass that LLVM vectorizes to byte adds
/// (16 bytes per step on x86_64 and aarch64): its continuation bits are
/// summed in `u8` lanes, which cannot overflow there. The rest (all of a
/// run shorter than 128 bytes, the commonest: a handful of small values)
/// goes by 8-byte words, one multiply summing the continuation bits of
/// each, the last word overlapping the one before (4-byte words below 8
/// bytes): ~7 instructions per 8 bytes and ~15 for a 4-byte run. (That
/// rest went through the vectorized loop's 4-lane form before: ~50
/// instructions for a 4-byte run, ~90 for 18 bytes.) A run that ends
/// inside a varint is not an error here (the count is simply that of the
/// complete varints); decoding reports it.
#[inline]
pub fn count_packed_varints(run: &[u8]) -> usize {
    let chunks = run.chunks_exact(128);
    let tail = chunks.remainder();
    let mut continuation = 0;
    for chunk in chunks {
        continuation += usize::from(chunk.iter().fold(0u8, |acc, &b| acc.wrapping_add(b >> 7)));
    }
    continuation += continuation_bytes(tail);
    run.len() - continuation
}

/// The bytes of `run` with the continuation bit set, by words: each whole
/// 8-byte word, then the last 8 bytes with those already counted shifted
/// out; below 8 bytes, the first and last 4 the same way; below 4, byte by
/// byte.
#[inline(always)]
fn continuation_bytes(run: &[u8]) -> usize {
    if let Some(last) = run.last_chunk::<8>() {
        let words = run.chunks_exact(8);
        let left = words.remainder().len();
        let mut n = 0;
        for w in words {
            n += high_bits(u64::from_le_bytes(w.try_into().unwrap_or([0; 8])));
        }
        // `last` is `run[len - 8..]`: its low `8 - left` bytes were counted.
        let last = u64::from_le_bytes(*last).checked_shr(8 * (8 - left) as u32).unwrap_or(0);
        return n + high_bits(last);
    }
    if let (Some(a), Some(b)) = (run.first_chunk::<4>(), run.last_chunk::<4>()) {
        // One word: `a` low, `b` high with the bytes it shares with `a`
        // (0 to 4 of them) shifted out.
        let shared = 8 - run.len();
        let b = u64::from(u32::from_le_bytes(*b)) >> (8 * shared as u32);
        return high_bits(u64::from(u32::from_le_bytes(*a)) | b << 32);
    }
    run.iter().map(|&x| usize::from(x >> 7)).sum()
}

/// How many of the 8 bytes of `w` have their high bit set: the bits moved
/// to the bottom of each byte and summed by one multiply into the top byte
/// (at most 8, so no carry crosses a byte).
#[inline(always)]
fn high_bits(w: u64) -> usize {
    const LOW: u64 = 0x0101_0101_0101_0101;
    ((w >> 7 & LOW).wrapping_mul(LOW) >> 56) as usize
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
///
/// On success exactly the first `n` slots of `out` are written. On error the
/// values before the bad varint are in place; later slots may have been
/// overwritten.
///
/// Cost: the run is read in 8-byte words at a fixed stride, so no load
/// depends on the length of the previous value (the private `words` module);
/// values of 9 or 10 bytes and the last few values take the one-at-a-time
/// path.
pub fn decode_packed_varints(run: &[u8], base: usize, out: &mut [u64]) -> Result<usize> {
    match decode_packed_varints_prefix(run, base, out)? {
        (n, used) if used == run.len() => Ok(n),
        (_, used) => Err(Error::new(ErrorKind::Truncated, base + used)),
    }
}

/// Decodes the first varints of a packed run into `out`, as many as fit:
/// returns `(values, bytes)`, the number of slots written and the length of
/// the prefix of `run` they came from. Call it again on `&run[bytes..]`
/// (with `base + bytes`) for the rest; the run is done when `bytes ==
/// run.len()`. This is [`decode_packed_varints`] for a caller whose buffer
/// is smaller than the run (a fixed stack buffer, say).
///
/// On error the slots before the bad varint hold its predecessors; which
/// of them were written is not reported (decode them one at a time to
/// find out).
///
/// Cost: as [`decode_packed_varints`]; the word-at-a-time loop needs 8 free
/// slots per step, so an `out` of 64 slots or more keeps it busy.
pub fn decode_packed_varints_prefix(run: &[u8], base: usize, out: &mut [u64]) -> Result<(usize, usize)> {
    let (start, mut n) = decode_words(run, base, out)?;
    let rest = run.get(start..).unwrap_or_default();
    let mut reader = Reader::with_offset(rest, base + start);
    while let (false, Some(slot)) = (reader.is_empty(), out.get_mut(n)) {
        *slot = reader.read_varint()?;
        n += 1;
    }
    Ok((n, run.len() - reader.remaining()))
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
