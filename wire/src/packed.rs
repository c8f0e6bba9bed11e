//! Packed repeated fields: a LEN value holding back-to-back varints or
//! fixed-width values.

use crate::error::{Error, ErrorKind, Result};
use crate::reader::Reader;

/// Counts the varints in a packed run without decoding them: the number of
/// bytes without the continuation bit. Used to pre-size the destination.
///
/// Cost: one pass that LLVM vectorizes to byte adds (16 bytes per step on
/// x86_64 and aarch64): the continuation bits of each 128-byte chunk are
/// summed in `u8` lanes, which cannot overflow there, and subtracted from
/// the length. A run that ends inside a varint is not an error here (the
/// count is simply that of the complete varints); decoding reports it.
#[inline]
pub fn count_packed_varints(run: &[u8]) -> usize {
    let chunks = run.chunks_exact(128);
    let tail = chunks.remainder();
    let mut continuation = 0;
    for chunk in chunks {
        continuation += usize::from(chunk.iter().fold(0u8, |acc, &b| acc.wrapping_add(b >> 7)));
    }
    continuation += tail.iter().filter(|&&b| b >= 0x80).count();
    run.len() - continuation
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
/// depends on the length of the previous value (see the private `decode_words`);
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

/// Bit 7 of every byte of a word: set in `!word & HIGH` where a byte ends a
/// varint.
const HIGH: u64 = 0x8080_8080_8080_8080;

/// How to cut the values out of a compacted word (see [`compact`]) whose
/// terminator bytes are the set bits of the table index: value `i` is
/// `(c << lsh[i]) >> rsh[i]`. Slots past the last terminator are garbage.
#[derive(Clone, Copy)]
struct Split {
    /// `64 - 7 * (last byte + 1)`: drops the bits above the value.
    lsh: [u8; 8],
    /// `64 - 7 * length`: drops the bits below it.
    rsh: [u8; 8],
}

const fn build_splits() -> [Split; 256] {
    let mut table = [Split { lsh: [0; 8], rsh: [0; 8] }; 256];
    let mut mask = 0;
    while mask < 256 {
        let (mut i, mut start, mut byte) = (0, 0, 0);
        while byte < 8 {
            if mask & (1 << byte) != 0 {
                table[mask].lsh[i] = (64 - 7 * (byte + 1)) as u8;
                table[mask].rsh[i] = (64 - 7 * (byte + 1 - start)) as u8;
                i += 1;
                start = byte + 1;
            }
            byte += 1;
        }
        mask += 1;
    }
    table
}

/// 4 KiB: one [`Split`] per terminator pattern of an 8-byte word.
static SPLITS: [Split; 256] = build_splits();

const fn build_counts() -> [u8; 256] {
    let mut table = [0; 256];
    let mut mask = 0;
    while mask < 256 {
        table[mask] = (mask as u8).count_ones() as u8;
        mask += 1;
    }
    table
}

/// How many varints end in a word, by terminator pattern (no `popcnt` in
/// baseline x86-64).
static COUNTS: [u8; 256] = build_counts();

/// The 7-bit groups of the 8 bytes of `word` (little-endian), packed into
/// the low 56 bits: byte `k`'s payload lands at bit `7 * k`.
#[inline(always)]
const fn compact(word: u64) -> u64 {
    // 14 bits per 16-bit lane, 28 per 32-bit lane, then 56.
    let x = (word & 0x007f_007f_007f_007f) | ((word & 0x7f00_7f00_7f00_7f00) >> 1);
    let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
    (x & 0x0fff_ffff) | ((x >> 4) & 0x00ff_ffff_f000_0000)
}

/// Bit 7 of byte `k` moved to bit `k`: the terminator pattern as a table index.
#[inline(always)]
const fn movemask(terminators: u64) -> usize {
    ((terminators >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as usize
}

/// The word loop of [`decode_packed_varints`]: returns where the
/// one-at-a-time path must go on (a value's first byte) and how many values
/// are in `out`.
///
/// Words are read at a fixed stride of 8 bytes, so the loop has no
/// dependency chain through the value lengths (the scalar loop's
/// position → load → length → position chain, ~10 cycles a value). A word's
/// bytes are compacted to 56 payload bits once, and the terminator pattern
/// picks from [`SPLITS`] the shifts that cut out each value that ends in
/// it. All 8 output slots are written unconditionally and `n` advances by
/// the count, so the loop has no branch on the value lengths: it branches
/// only on a word of eight 1-byte values (a plain widening copy) and on a
/// value longer than 8 bytes (decoded alone, like a bad one). The bytes
/// after a word's last terminator are carried into the first value of the
/// next word.
///
/// The unconditional stores write up to 7 slots past the last value of the
/// word. The loop only runs while at least 8 more terminators follow the
/// word, so on a well-formed run those slots are written again later.
#[inline]
fn decode_words(run: &[u8], base: usize, out: &mut [u64]) -> Result<(usize, usize)> {
    // `safe_end`: the run from here on holds 8 terminators.
    let mut safe_end = run.len();
    let mut seen = 0;
    while seen < 8 {
        if safe_end == 0 {
            return Ok((0, 0));
        }
        safe_end -= 1;
        seen += usize::from(run[safe_end] < 0x80);
    }

    let words = &run[..safe_end];
    let mut pos = 0; // the next word
    let mut n = 0;
    // The value started by the bytes after the last word's last terminator:
    // its payload so far, 8 × and 7 × its length in bytes.
    let mut carry = 0u64;
    let mut carry_len8 = 0u32;
    let mut carry_bits = 0u32;
    while pos + 8 <= words.len() {
        let (Some(word), Some(dst)) = (
            words.get(pos..).and_then(<[u8]>::first_chunk::<8>),
            out.get_mut(n..).and_then(<[u64]>::first_chunk_mut::<8>),
        ) else {
            break;
        };
        let w = u64::from_le_bytes(*word);
        let terminators = !w & HIGH;
        if terminators == HIGH && carry_len8 == 0 {
            // Eight 1-byte values.
            for (slot, &byte) in dst.iter_mut().zip(word) {
                *slot = u64::from(byte);
            }
            n += 8;
            pos += 8;
            continue;
        }
        if terminators << carry_len8 == 0 {
            // The value that goes on into this word is longer than 8 bytes
            // (or this word has no terminator): decode it alone.
            let start = pos - (carry_len8 / 8) as usize;
            let rest = run.get(start..).unwrap_or_default();
            match crate::varint::decode_varint(rest) {
                Ok((value, len)) => {
                    dst[0] = value;
                    n += 1;
                    pos = start + len;
                    carry = 0;
                    carry_len8 = 0;
                    carry_bits = 0;
                    continue;
                }
                Err(e) => return Err(e.shifted(base + start)),
            }
        }
        let c = compact(w);
        let index = movemask(terminators);
        let split = &SPLITS[index];
        // Each value is stored as soon as it is cut (8 live values would
        // spill on x86_64).
        let cut = |i: usize| c.wrapping_shl(u32::from(split.lsh[i])).wrapping_shr(u32::from(split.rsh[i]));
        dst[0] = carry | cut(0).wrapping_shl(carry_bits);
        for (i, slot) in dst.iter_mut().enumerate().skip(1) {
            *slot = cut(i);
        }
        n += usize::from(COUNTS[index]);
        // The bytes after the last terminator (its bit is the highest set).
        carry_len8 = (terminators | 1).leading_zeros();
        carry_bits = carry_len8 - carry_len8 / 8;
        carry = c.wrapping_shr(56 - carry_bits);
        pos += 8;
    }
    Ok((pos - (carry_len8 / 8) as usize, n))
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
