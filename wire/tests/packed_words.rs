//! The word loop of `decode_packed_varints` (8-byte words at a fixed stride,
//! a carry across words, the one-at-a-time path for 9- and 10-byte values)
//! against a one-varint-at-a-time reference: same values, same error kind
//! and offset, and on success no slot written past the last value.

use pbwire::ErrorKind;
use pbwire::packed::{count_packed_varints, decode_packed_varints, decode_packed_varints_prefix};
use pbwire::varint::{MAX_VARINT_LEN, decode_varint, encode_varint};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    if cfg!(miri) {
        ProptestConfig { cases: 4, failure_persistence: None, ..ProptestConfig::default() }
    } else {
        ProptestConfig::with_cases(2048)
    }
}

fn push(out: &mut Vec<u8>, value: u64) {
    let mut b = [0u8; MAX_VARINT_LEN];
    let n = encode_varint(value, &mut b);
    out.extend_from_slice(&b[..n]);
}

/// The reference: one `decode_varint` at a time, errors at the varint's
/// first byte (base-relative); Truncated when `cap` values are already out.
fn reference(run: &[u8], base: usize, cap: usize) -> (Vec<u64>, Option<(ErrorKind, usize)>) {
    let mut values = Vec::new();
    let mut rest = run;
    while !rest.is_empty() {
        let at = base + run.len() - rest.len();
        if values.len() == cap {
            return (values, Some((ErrorKind::Truncated, at)));
        }
        match decode_varint(rest) {
            Ok((v, n)) => {
                values.push(v);
                rest = &rest[n..];
            }
            Err(e) => return (values, Some((e.kind(), at + e.offset()))),
        }
    }
    (values, None)
}

/// The counter as it was: one compare per byte.
fn count_packed_varints_scalar(run: &[u8]) -> usize {
    run.iter().filter(|&&b| b < 0x80).count()
}

const SENTINEL: u64 = 0xdead_beef_dead_beef;

/// Decodes `run` into a buffer of `cap` slots (+ `extra` spare ones) and
/// checks it against the reference.
fn check(run: &[u8], base: usize, cap: usize) -> Result<(), TestCaseError> {
    let mut out = vec![SENTINEL; cap];
    let ours = decode_packed_varints(run, base, &mut out);
    let (values, err) = reference(run, base, cap);
    match (ours, err) {
        (Ok(n), None) => {
            prop_assert_eq!(n, values.len());
            prop_assert_eq!(&out[..n], &values[..]);
            prop_assert!(out[n..].iter().all(|&v| v == SENTINEL), "slot past the last value written: {:x?}", run);
        }
        (Err(e), Some((kind, offset))) => {
            prop_assert_eq!((e.kind(), e.offset()), (kind, offset), "{:x?}", run);
            // The values before the bad varint are in place.
            prop_assert_eq!(&out[..values.len()], &values[..]);
        }
        (ours, theirs) => prop_assert!(false, "ours {:?}, reference {:?} on {:x?}", ours, theirs, run),
    }
    Ok(())
}

/// Values whose varints are 1..=10 bytes, weighted to the short ones, with
/// every length (9 and 10 included) reachable.
fn value_any_len() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => 0u64..0x80,
        2 => 0x80u64..0x4000,
        1 => (1u32..=10, any::<u64>()).prop_map(|(len, r)| {
            let bits = (7 * len).min(64);
            let v = if bits == 64 { r } else { r & ((1 << bits) - 1) };
            v | if len == 1 { 0 } else { 1 << (7 * (len - 1)) }
        }),
        1 => prop::sample::select(vec![0u64, 127, 128, (1 << 56) - 1, 1 << 56, 1 << 63, u64::MAX]),
    ]
}

/// Raw bytes: terminators and continuation bytes in runs, and 10th-byte
/// candidates (0, 1, 2, 0x7f).
fn raw_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        3 => 0u8..0x80,
        3 => 0x80u8..=0xff,
        1 => prop::sample::select(vec![0u8, 1, 2, 0x7f, 0x80, 0xff]),
    ]
}

proptest! {
    #![proptest_config(config())]

    /// Well-formed runs of mixed lengths, incl. 9/10-byte values, at every
    /// alignment to the 8-byte words, into an exact and a larger buffer.
    #[test]
    fn mixed_lengths(values in prop::collection::vec(value_any_len(), 0..300), skew in 0usize..8, base in 0usize..1000) {
        let mut buf = vec![0u8; skew];
        for &v in &values {
            push(&mut buf, v);
        }
        let run = &buf[skew..];
        prop_assert_eq!(count_packed_varints(run), values.len());
        prop_assert_eq!(count_packed_varints_scalar(run), values.len());
        let mut out = vec![0; values.len()];
        prop_assert_eq!(decode_packed_varints(run, base, &mut out), Ok(values.len()));
        prop_assert_eq!(&out, &values);
        check(run, base, values.len())?;
        check(run, base, values.len() + 9)?;
    }

    /// A well-formed run cut at any byte: Truncated at the cut value's start
    /// (or Ok when the cut falls between values).
    #[test]
    fn truncated_runs(values in prop::collection::vec(value_any_len(), 1..200), cut in any::<prop::sample::Index>(), base in 0usize..100) {
        let mut run = Vec::new();
        for &v in &values {
            push(&mut run, v);
        }
        let run = &run[..cut.index(run.len())];
        check(run, base, count_packed_varints(run))?;
        check(run, base, count_packed_varints(run) + 3)?;
    }

    /// An overlong (11+ bytes) or bad-10th-byte varint among good values.
    #[test]
    fn invalid_tenth_byte(
        before in prop::collection::vec(value_any_len(), 0..100),
        after in prop::collection::vec(value_any_len(), 0..100),
        tenth in 2u8..=0xff,
        nine in prop::collection::vec(0x80u8..=0xff, 9),
        extra in prop::collection::vec(0x80u8..=0xff, 0..4),
    ) {
        let mut run = Vec::new();
        for &v in &before {
            push(&mut run, v);
        }
        let at = run.len();
        run.extend_from_slice(&nine);
        run.extend_from_slice(&extra);
        run.push(tenth);
        for &v in &after {
            push(&mut run, v);
        }
        let (_, err) = reference(&run, 5, usize::MAX);
        prop_assert_eq!(err, Some((ErrorKind::VarintOverflow, 5 + at)));
        check(&run, 5, count_packed_varints(&run))?;
        check(&run, 5, count_packed_varints(&run) + 2)?;
    }

    /// Arbitrary bytes, and an arbitrary (often too small) buffer.
    #[test]
    fn arbitrary_bytes(run in prop::collection::vec(raw_byte(), 0..400), spare in 0usize..12, short in 0usize..4, base in 0usize..50) {
        let count = count_packed_varints(&run);
        prop_assert_eq!(count, count_packed_varints_scalar(&run));
        check(&run, base, count + spare)?;
        check(&run, base, count.saturating_sub(short))?;
    }

    /// Decoding in chunks of `chunk` slots with `decode_packed_varints_prefix`
    /// gives the reference's values, and its error kind and offset.
    #[test]
    fn prefix_chunks(run in prop::collection::vec(raw_byte(), 0..400), good in prop::collection::vec(value_any_len(), 0..200), chunk in 1usize..80, base in 0usize..50, well_formed: bool) {
        let run = if well_formed {
            let mut buf = Vec::new();
            for &v in &good {
                push(&mut buf, v);
            }
            buf
        } else {
            run
        };
        let (values, err) = reference(&run, base, usize::MAX);
        let mut got = Vec::new();
        let mut at = 0;
        let mut out = vec![SENTINEL; chunk];
        let result = loop {
            if at == run.len() {
                break None;
            }
            match decode_packed_varints_prefix(&run[at..], base + at, &mut out) {
                Ok((n, used)) => {
                    prop_assert!(n > 0 && used > 0, "no progress at {} of {:x?}", at, run);
                    prop_assert!(out[n..].iter().all(|&v| v == SENTINEL));
                    got.extend_from_slice(&out[..n]);
                    at += used;
                    out.fill(SENTINEL);
                }
                Err(e) => break Some((e.kind(), e.offset())),
            }
        };
        prop_assert_eq!(result, err, "{:x?}", run);
        if err.is_none() {
            prop_assert_eq!(got, values);
        }
    }

    /// Long runs of 1-byte values broken by longer ones (the all-1-byte
    /// word path and its interplay with a carry).
    #[test]
    fn one_byte_stretches(pattern in prop::collection::vec((0usize..40, value_any_len()), 0..20)) {
        let mut values = Vec::new();
        for &(ones, v) in &pattern {
            values.extend((0..ones as u64).map(|i| i % 128));
            values.push(v);
        }
        let mut run = Vec::new();
        for &v in &values {
            push(&mut run, v);
        }
        let mut out = vec![0; values.len()];
        prop_assert_eq!(decode_packed_varints(&run, 0, &mut out), Ok(values.len()));
        prop_assert_eq!(&out, &values);
        check(&run, 0, values.len() + 8)?;
    }
}

#[test]
fn count_short_runs() {
    // Every length up to 140 (words, the overlapping last word, the 4-byte
    // and byte paths, and a 128-byte chunk before them), every position of
    // one odd byte, and all bytes alike.
    for len in 0..=140 {
        for fill in [0x00u8, 0x7f, 0x80, 0xff] {
            let run = vec![fill; len];
            assert_eq!(count_packed_varints(&run), count_packed_varints_scalar(&run), "{len} × {fill:#x}");
        }
        for at in 0..len {
            for (fill, odd) in [(0x01u8, 0x81u8), (0x81, 0x01)] {
                let mut run = vec![fill; len];
                run[at] = odd;
                assert_eq!(count_packed_varints(&run), count_packed_varints_scalar(&run), "{len}, {odd:#x} at {at}");
            }
        }
    }
}

#[test]
fn count_long_runs() {
    // Chunks of 128 whose bytes are all continuation bytes (u8 lanes full).
    for len in [0, 1, 127, 128, 129, 255, 256, 257, 1000, 4096 + 3] {
        for fill in [0x00u8, 0x7f, 0x80, 0xff] {
            let run = vec![fill; len];
            assert_eq!(count_packed_varints(&run), count_packed_varints_scalar(&run), "{len} × {fill:#x}");
        }
    }
}

#[test]
fn words_of_every_value_length() {
    // Each length 1..=10 repeated, so that every length straddles words.
    for len in 1..=MAX_VARINT_LEN {
        for skew in 0..8 {
            let mut values: Vec<u64> = (0..7).map(|i| i % 128).take(skew).collect();
            let v = if len == 10 { u64::MAX } else { (1u64 << (7 * len)) - 1 };
            values.extend(core::iter::repeat_n(v, 40));
            values.extend(0..20);
            let mut run = Vec::new();
            for &x in &values {
                push(&mut run, x);
            }
            let mut out = vec![SENTINEL; values.len() + 8];
            assert_eq!(decode_packed_varints(&run, 0, &mut out), Ok(values.len()), "len {len} skew {skew}");
            assert_eq!(&out[..values.len()], &values[..]);
            assert!(out[values.len()..].iter().all(|&x| x == SENTINEL));
        }
    }
}
