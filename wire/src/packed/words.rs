//! The word loop behind `decode_packed_varints`: 8-byte words at a fixed
//! stride, cut into values by table-driven shifts.
//!
//! The loop is written once ([`word_loop`]) and built twice on x86_64: for
//! the baseline target, and with AVX2 and BMI2, chosen at run time (std)
//! or at compile time (`-C target-feature`). A word costs 16 variable
//! shifts. Baseline x86-64 has only `shl r, cl` (3 µops on Intel, flags
//! dependency); the AVX2 build does the eight cuts in two 4-lane
//! `vpsllvq`/`vpsrlvq` pairs and the rest with `shlx`/`shrx`, 1.4–1.5× on
//! mixed-width runs (PERF_LOG, 2026-12-04). aarch64 has one build: its
//! `lslv`/`lsrv` are single instructions.

use crate::error::Result;

/// Decodes whole words of `run` into `out`: returns where the
/// one-at-a-time path must go on (a value's first byte) and how many
/// values are in `out`. See [`word_loop`].
#[inline]
pub(super) fn decode_words(run: &[u8], base: usize, out: &mut [u64]) -> Result<(usize, usize)> {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2", target_feature = "bmi2"))]
    return word_loop::<true>(run, base, out);

    #[cfg(all(
        target_arch = "x86_64",
        feature = "std",
        not(miri),
        not(all(target_feature = "avx2", target_feature = "bmi2"))
    ))]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2") {
        // SAFETY: `word_loop_avx2` needs AVX2 and BMI2, which this CPU has:
        // checked just above (std caches the CPUID answer: one load each).
        #[allow(unsafe_code)]
        return unsafe { word_loop_avx2(run, base, out) };
    }

    #[allow(unreachable_code)]
    word_loop::<false>(run, base, out)
}

/// [`word_loop`] built with AVX2 and BMI2: the eight cuts of a word in two
/// 4-lane vector shift pairs, the scalar shifts as `shlx`/`shrx`.
#[cfg(all(
    target_arch = "x86_64",
    feature = "std",
    not(miri),
    not(all(target_feature = "avx2", target_feature = "bmi2"))
))]
#[target_feature(enable = "avx2,bmi2")]
fn word_loop_avx2(run: &[u8], base: usize, out: &mut [u64]) -> Result<(usize, usize)> {
    word_loop::<true>(run, base, out)
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

/// The word loop of [`decode_packed_varints`](super::decode_packed_varints): returns where the
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
/// value longer than 8 bytes. Such a value is cut in the loop when it ends
/// in the word and passes the length check; otherwise (no terminator in the
/// word, or a bad varint) it is decoded alone. The bytes
/// after a word's last terminator are carried into the first value of the
/// next word.
///
/// The unconditional stores write up to 7 slots past the last value of the
/// word. The loop only runs while at least 8 more terminators follow the
/// word, so on a well-formed run those slots are written again later.
///
/// `WIDE_CUTS` writes the eight cuts as one lane-wise loop, the shape a
/// vector unit takes; without it they are stored one by one. Both give the
/// same values. `#[inline(always)]` so that each caller gets its own copy
/// compiled for its own target features (see [`decode_words`]).
#[inline(always)]
fn word_loop<const WIDE_CUTS: bool>(run: &[u8], base: usize, out: &mut [u64]) -> Result<(usize, usize)> {
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
        if terminators << carry_len8 == 0
            && (terminators == 0 || {
                // The value carried into this word is longer than 8 bytes
                // but ends here: it is cut like any other (its bits past 64
                // belong to a 10th byte, 0 when valid) once its length and
                // last byte are checked, (length, last byte) ≤ (10, 1).
                let end = terminators.trailing_zeros() | 7;
                let len = carry_len8 / 8 + end / 8 + 1;
                (len << 8 | ((w >> (end - 7)) & 0xff) as u32) > 0x0a01
            })
        {
            // No terminator in this word, or a bad or overlong varint:
            // decode it alone.
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
        if WIDE_CUTS {
            // Eight independent lanes: an AVX2 build cuts them with two
            // 4-lane `vpsllvq`/`vpsrlvq` pairs, then mends lane 0.
            for ((slot, &l), &r) in dst.iter_mut().zip(&split.lsh).zip(&split.rsh) {
                *slot = c.wrapping_shl(u32::from(l)).wrapping_shr(u32::from(r));
            }
            dst[0] = carry | dst[0].wrapping_shl(carry_bits);
        } else {
            // Scalar: each value stored as soon as it is cut (8 live values
            // would spill), lane 0 with its carry first (the wide form's
            // store-reload of lane 0 measured 3–4 % slower here).
            let cut = |i: usize| c.wrapping_shl(u32::from(split.lsh[i])).wrapping_shr(u32::from(split.rsh[i]));
            dst[0] = carry | cut(0).wrapping_shl(carry_bits);
            for (i, slot) in dst.iter_mut().enumerate().skip(1) {
                *slot = cut(i);
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Both builds of the loop on runs of every mix of lengths, cut at
    /// every end: same values, same stopping point, same errors. (On a CPU
    /// with AVX2 and BMI2, `decode_words` takes the wide build.)
    #[test]
    fn wide_and_scalar_cuts_agree() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..if cfg!(miri) { 6 } else { 200 } {
            let mut run = [0u8; 512];
            let mut len = 0;
            while len < run.len() - 10 {
                let width = 1 + (next() % if round % 3 == 0 { 10 } else { 4 }) as usize;
                for k in 0..width {
                    run[len + k] = (next() as u8 & 0x7f) | if k + 1 < width { 0x80 } else { 0 };
                }
                if width == 10 {
                    run[len + 9] = (next() % if round % 7 == 0 { 4 } else { 2 }) as u8;
                }
                len += width;
            }
            for end in [len, len - 1, len / 2, 17, 9, 8, 0] {
                let (mut a, mut b) = ([0u64; 520], [0u64; 520]);
                let scalar = word_loop::<false>(&run[..end], 3, &mut a);
                let wide = word_loop::<true>(&run[..end], 3, &mut b);
                let dispatched = decode_words(&run[..end], 3, &mut [0u64; 520]);
                assert_eq!(scalar, wide, "round {round}, end {end}");
                assert_eq!(scalar, dispatched, "round {round}, end {end}");
                if let Ok((_, n)) = scalar {
                    assert_eq!(a[..n], b[..n], "round {round}, end {end}");
                }
            }
        }
    }
}
