//! Packed runs: `count_packed_varints` equals the number of values decoded
//! (for a well-formed run), decode into a buffer equals the iterator and the
//! one-varint-at-a-time loop, and so does decoding in chunks of 1..=64 values
//! with `decode_packed_varints_prefix`; fixed-width runs check alignment.
//! UTF-8: `validate_utf8` agrees with `core::str::from_utf8`, error offset
//! included, on the raw input and on long padded copies (SIMD path).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pbwire::ErrorKind;
use pbwire::packed::{
    PackedVarints, count_packed_varints, decode_packed_varints, decode_packed_varints_prefix, packed_fixed32,
    packed_fixed64,
};
use pbwire::utf8::{SIMD_THRESHOLD, validate_utf8};
use pbwire::varint::decode_varint;

fn check_utf8(bytes: &[u8], base: usize) {
    let ours = validate_utf8(bytes, base);
    match core::str::from_utf8(bytes) {
        Ok(_) => assert_eq!(ours, Ok(())),
        Err(e) => {
            let err = ours.expect_err("validate_utf8 accepted invalid UTF-8");
            assert_eq!((err.kind(), err.offset()), (ErrorKind::InvalidUtf8, base + e.valid_up_to()));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let base = 17;
    // Packed varints.
    let count = count_packed_varints(data);
    let mut out = vec![0u64; count];
    let decoded = decode_packed_varints(data, base, &mut out);
    let iter: Vec<_> = PackedVarints::new(data, base).collect();
    // Reference: one varint at a time.
    let mut reference = Vec::new();
    let mut rest = data;
    let mut ref_err = None;
    while !rest.is_empty() {
        match decode_varint(rest) {
            Ok((v, n)) => {
                reference.push(v);
                rest = &rest[n..];
            }
            Err(e) => {
                ref_err = Some((e.kind(), base + data.len() - rest.len()));
                break;
            }
        }
    }
    match decoded {
        Ok(n) => {
            assert!(ref_err.is_none());
            assert_eq!(n, count, "count_packed_varints must equal the decoded count");
            assert_eq!(&out[..n], &reference[..]);
        }
        Err(e) => {
            // Decoding stops at the first bad varint, at the same offset as
            // the reference. Its kind is the reference's, except when `out`
            // (sized by the count) is already full there: then, as
            // documented, it is Truncated at the value that did not fit.
            let (ref_kind, ref_offset) = ref_err.expect("decode failed on a well-formed run");
            assert_eq!(e.offset(), ref_offset);
            assert!(e.kind() == ref_kind || (e.kind() == ErrorKind::Truncated && reference.len() == count));
        }
    }
    let iter_ok: Vec<u64> = iter.iter().filter_map(|r| r.as_ref().ok().copied()).collect();
    assert_eq!(iter_ok, reference);
    assert_eq!(iter.iter().filter(|r| r.is_err()).count(), usize::from(ref_err.is_some()));
    if let Some(Err(e)) = iter.last() {
        assert_eq!(Some((e.kind(), e.offset())), ref_err);
    }
    // Well-formed runs: every terminator ends exactly one value.
    if ref_err.is_none() {
        assert_eq!(reference.len(), count);
    }
    // In chunks (the size from the first byte): the same values, the same
    // error offset and kind.
    let chunk = usize::from(data.first().copied().unwrap_or(0) % 64) + 1;
    let mut buf = vec![0u64; chunk];
    let (mut got, mut at, mut chunk_err) = (Vec::new(), 0, None);
    while at < data.len() {
        match decode_packed_varints_prefix(&data[at..], base + at, &mut buf) {
            Ok((n, used)) => {
                assert!(n > 0 && used > 0 && n <= chunk, "no progress");
                got.extend_from_slice(&buf[..n]);
                at += used;
            }
            Err(e) => {
                chunk_err = Some((e.kind(), e.offset()));
                break;
            }
        }
    }
    assert_eq!(chunk_err, ref_err);
    if ref_err.is_none() {
        assert_eq!(got, reference);
    }
    // Fixed-width runs.
    match packed_fixed32(data, base) {
        Ok(it) => {
            assert_eq!(data.len() % 4, 0);
            assert_eq!(it.len(), data.len() / 4);
            for (v, c) in it.zip(data.chunks_exact(4)) {
                assert_eq!(v, u32::from_le_bytes(c.try_into().unwrap()));
            }
        }
        Err(e) => {
            assert_ne!(data.len() % 4, 0);
            assert_eq!((e.kind(), e.offset()), (ErrorKind::PackedLengthMisaligned { len: data.len(), width: 4 }, base));
        }
    }
    match packed_fixed64(data, base) {
        Ok(it) => {
            assert_eq!(data.len() % 8, 0);
            assert_eq!(it.len(), data.len() / 8);
        }
        Err(e) => {
            assert_eq!((e.kind(), e.offset()), (ErrorKind::PackedLengthMisaligned { len: data.len(), width: 8 }, base))
        }
    }

    // UTF-8: raw, and behind an ASCII prefix long enough for the SIMD path.
    check_utf8(data, base);
    let mut long = vec![b'a'; SIMD_THRESHOLD];
    long.extend_from_slice(data);
    check_utf8(&long, 0);
    if data.len() >= SIMD_THRESHOLD {
        check_utf8(&data[..SIMD_THRESHOLD - 1], 0);
    }
});
