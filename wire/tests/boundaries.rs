//! Boundary tests for every wire primitive of `pbwire`: exact bytes, exact
//! error kinds and exact byte offsets.

use pbwire::error::{Error, ErrorKind};
use pbwire::fixed::{
    decode_fixed32, decode_fixed64, double_to_fixed64, fixed32_to_float, fixed64_to_double, float_to_fixed32,
};
use pbwire::packed::{PackedVarints, count_packed_varints, decode_packed_varints, packed_fixed32, packed_fixed64};
use pbwire::utf8::{SIMD_THRESHOLD, validate_utf8};
use pbwire::varint::{
    MAX_VARINT_LEN, decode_varint, encode_varint, encoded_len_varint, int32_to_varint, skip_varint, varint_to_bool,
    varint_to_int32, varint_to_uint32,
};
use pbwire::zigzag::{decode_zigzag32, decode_zigzag64, encode_zigzag32, encode_zigzag64};
use pbwire::{MAX_FIELD_NUMBER, Reader, Tag, WireType};

// ---------------------------------------------------------------- helpers

fn enc(value: u64) -> Vec<u8> {
    let mut out = [0u8; MAX_VARINT_LEN];
    let n = encode_varint(value, &mut out);
    out[..n].to_vec()
}

fn kind_at(err: Error) -> (ErrorKind, usize) {
    (err.kind(), err.offset())
}

/// `bytes` padded with trailing zeros so that `decode_varint` takes its
/// unrolled (10-bytes-available) path instead of the bounds-checked one.
fn padded(bytes: &[u8]) -> Vec<u8> {
    let mut v = bytes.to_vec();
    v.resize(bytes.len() + MAX_VARINT_LEN, 0);
    v
}

fn tag(field: u32, wt: WireType) -> Tag {
    Tag::new(field, wt).unwrap()
}

fn tag_bytes(field: u32, wt: WireType) -> Vec<u8> {
    tag(field, wt).encode().as_bytes().to_vec()
}

// ---------------------------------------------------------------- varints

/// (value, its canonical encoding) at every length boundary.
const VARINT_CASES: &[(u64, &[u8])] = &[
    (0, &[0x00]),
    (1, &[0x01]),
    (127, &[0x7f]),
    (128, &[0x80, 0x01]),
    (150, &[0x96, 0x01]),
    ((1 << 14) - 1, &[0xff, 0x7f]),
    (1 << 14, &[0x80, 0x80, 0x01]),
    ((1 << 21) - 1, &[0xff, 0xff, 0x7f]),
    (1 << 21, &[0x80, 0x80, 0x80, 0x01]),
    ((1 << 28) - 1, &[0xff, 0xff, 0xff, 0x7f]),
    (1 << 28, &[0x80, 0x80, 0x80, 0x80, 0x01]),
    ((1 << 32) - 1, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
    (1 << 32, &[0x80, 0x80, 0x80, 0x80, 0x10]),
    ((1 << 35) - 1, &[0xff, 0xff, 0xff, 0xff, 0x7f]),
    (1 << 35, &[0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
    (1 << 42, &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
    (1 << 49, &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
    ((1 << 56) - 1, &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]),
    (1 << 56, &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
    ((1 << 63) - 1, &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]),
    (1 << 63, &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
    (u64::MAX, &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
];

#[test]
fn varint_encode_boundaries() {
    for &(value, bytes) in VARINT_CASES {
        assert_eq!(enc(value), bytes, "encode {value:#x}");
        assert_eq!(encoded_len_varint(value), bytes.len(), "encoded_len_varint {value:#x}");
    }
}

#[test]
fn varint_decode_boundaries_exact_and_padded() {
    for &(value, bytes) in VARINT_CASES {
        // Exactly the varint: the bounds-checked slow path for len > 1.
        assert_eq!(decode_varint(bytes), Ok((value, bytes.len())), "exact {value:#x}");
        // Followed by 10 more bytes: the unrolled fast path.
        assert_eq!(decode_varint(&padded(bytes)), Ok((value, bytes.len())), "padded {value:#x}");
        assert_eq!(skip_varint(bytes), Ok(bytes.len()));
        assert_eq!(skip_varint(&padded(bytes)), Ok(bytes.len()));
        let mut r = Reader::new(bytes);
        assert_eq!(r.read_varint(), Ok(value));
        assert!(r.is_empty());
        assert_eq!(r.position(), bytes.len());
    }
}

#[test]
fn encoded_len_varint_every_bit_width() {
    assert_eq!(encoded_len_varint(0), 1);
    for bit in 0..64 {
        let v = 1u64 << bit;
        assert_eq!(encoded_len_varint(v), bit / 7 + 1, "2^{bit}");
        assert_eq!(encoded_len_varint(v - 1 + v), bit / 7 + 1, "2^{}-1", bit + 1);
        assert_eq!(enc(v).len(), encoded_len_varint(v));
    }
}

#[test]
fn negative_int32_is_ten_bytes_and_round_trips() {
    for v in [-1i32, -2, -128, i32::MIN] {
        let wire = int32_to_varint(v);
        assert_eq!(wire, v as i64 as u64);
        let bytes = enc(wire);
        assert_eq!(bytes.len(), 10, "int32 {v}");
        assert_eq!(*bytes.last().unwrap(), 0x01);
        let (decoded, len) = decode_varint(&bytes).unwrap();
        assert_eq!(len, 10);
        assert_eq!(varint_to_int32(decoded), v);
    }
    assert_eq!(enc(int32_to_varint(-1)), [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    assert_eq!(enc(int32_to_varint(i32::MIN)), [0x80, 0x80, 0x80, 0x80, 0xf8, 0xff, 0xff, 0xff, 0xff, 0x01]);
    // Positive int32 stays short.
    assert_eq!(enc(int32_to_varint(i32::MAX)), [0xff, 0xff, 0xff, 0xff, 0x07]);
}

#[test]
fn negative_int64_is_ten_bytes_and_round_trips() {
    for v in [-1i64, -2, i64::MIN, i32::MIN as i64] {
        let bytes = enc(v as u64);
        assert_eq!(bytes.len(), 10, "int64 {v}");
        let (decoded, len) = decode_varint(&bytes).unwrap();
        assert_eq!((decoded as i64, len), (v, 10));
    }
    assert_eq!(enc(i64::MIN as u64), [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
}

#[test]
fn thirty_two_bit_truncation() {
    // int32: the low 32 bits, reinterpreted.
    assert_eq!(varint_to_int32(u64::MAX), -1);
    assert_eq!(varint_to_int32(0xffff_ffff), -1);
    assert_eq!(varint_to_int32(0x8000_0000), i32::MIN);
    assert_eq!(varint_to_int32(0x7fff_ffff), i32::MAX);
    assert_eq!(varint_to_int32(1 << 32), 0);
    assert_eq!(varint_to_int32((1 << 32) | 5), 5);
    assert_eq!(varint_to_int32(0xdead_beef_0000_0007), 7);
    // uint32: the low 32 bits.
    assert_eq!(varint_to_uint32(u64::MAX), u32::MAX);
    assert_eq!(varint_to_uint32((1 << 32) + 1), 1);
    assert_eq!(varint_to_uint32(1 << 35), 0);
    assert_eq!(varint_to_uint32(0xffff_ffff), u32::MAX);
    // bool: anything non-zero, including bits above 32.
    assert!(!varint_to_bool(0));
    assert!(varint_to_bool(1));
    assert!(varint_to_bool(2));
    assert!(varint_to_bool(1 << 32));
    assert!(varint_to_bool(1 << 63));
    // A uint32 field written as a 10-byte varint (e.g. by a sign-extending
    // writer) decodes to its low 32 bits.
    let (v, _) = decode_varint(&enc(u64::MAX)).unwrap();
    assert_eq!(varint_to_uint32(v), u32::MAX);
}

#[test]
fn overlong_non_canonical_varints_within_ten_bytes_are_accepted() {
    // Protobuf parsers accept padded (non-minimal) varints up to 10 bytes.
    assert_eq!(decode_varint(&[0x80, 0x00]), Ok((0, 2)));
    assert_eq!(decode_varint(&[0x81, 0x80, 0x80, 0x00]), Ok((1, 4)));
    let ten_zero = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
    assert_eq!(decode_varint(&ten_zero), Ok((0, 10)));
    assert_eq!(decode_varint(&padded(&ten_zero)), Ok((0, 10)));
    assert_eq!(skip_varint(&ten_zero), Ok(10));
}

#[test]
fn eleven_byte_varint_is_overflow() {
    let eleven = [0x80u8, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
    assert_eq!(kind_at(decode_varint(&eleven).unwrap_err()), (ErrorKind::VarintOverflow, 0));
    assert_eq!(kind_at(decode_varint(&padded(&eleven)).unwrap_err()), (ErrorKind::VarintOverflow, 0));
    assert_eq!(kind_at(skip_varint(&eleven).unwrap_err()), (ErrorKind::VarintOverflow, 0));
    // Exactly 10 continuation bytes (nothing after): overflow, not truncation:
    // no valid varint can start this way.
    let ten_cont = [0xffu8; 10];
    assert_eq!(kind_at(decode_varint(&ten_cont).unwrap_err()), (ErrorKind::VarintOverflow, 0));
    assert_eq!(kind_at(skip_varint(&ten_cont).unwrap_err()), (ErrorKind::VarintOverflow, 0));
    // Through the reader, at an offset.
    let mut buf = vec![0x08];
    buf.extend_from_slice(&eleven);
    let mut r = Reader::new(&buf);
    r.read_tag().unwrap();
    assert_eq!(kind_at(r.read_varint().unwrap_err()), (ErrorKind::VarintOverflow, 1));
    assert_eq!(r.position(), 1, "a failed read does not move the cursor");
}

#[test]
fn tenth_byte_above_one_is_overflow() {
    for last in [0x02u8, 0x03, 0x7f] {
        let mut bytes = [0xffu8; 10];
        bytes[9] = last;
        assert_eq!(kind_at(decode_varint(&bytes).unwrap_err()), (ErrorKind::VarintOverflow, 0), "{last:#x}");
        assert_eq!(kind_at(decode_varint(&padded(&bytes)).unwrap_err()), (ErrorKind::VarintOverflow, 0));
        assert_eq!(kind_at(skip_varint(&bytes).unwrap_err()), (ErrorKind::VarintOverflow, 0));
        assert_eq!(kind_at(skip_varint(&padded(&bytes)).unwrap_err()), (ErrorKind::VarintOverflow, 0));
    }
    // 0x01 and 0x00 in the 10th byte are fine.
    let mut bytes = [0x80u8; 10];
    bytes[9] = 0x01;
    assert_eq!(decode_varint(&bytes), Ok((1 << 63, 10)));
    // Via the Reader at an offset of 3.
    let mut buf = vec![0x01, 0x02, 0x03];
    let mut bad = [0xffu8; 10];
    bad[9] = 0x02;
    buf.extend_from_slice(&bad);
    let mut r = Reader::new(&buf);
    r.advance(3).unwrap();
    assert_eq!(kind_at(r.read_varint().unwrap_err()), (ErrorKind::VarintOverflow, 3));
}

#[test]
fn truncated_varints() {
    // Empty input.
    assert_eq!(kind_at(decode_varint(&[]).unwrap_err()), (ErrorKind::Truncated, 0));
    assert_eq!(kind_at(skip_varint(&[]).unwrap_err()), (ErrorKind::Truncated, 0));
    // Every length from 1 to 9 continuation bytes and nothing more.
    for n in 1..MAX_VARINT_LEN {
        let bytes = vec![0x80u8; n];
        assert_eq!(kind_at(decode_varint(&bytes).unwrap_err()), (ErrorKind::Truncated, 0), "{n}");
        assert_eq!(kind_at(skip_varint(&bytes).unwrap_err()), (ErrorKind::Truncated, 0), "{n}");
    }
    // Through a Reader: the offset is where the varint starts.
    let buf = [0x08, 0x96, 0x01, 0x10, 0xff, 0xff];
    let mut r = Reader::new(&buf);
    assert_eq!(r.read_tag().unwrap().field_number(), 1);
    assert_eq!(r.read_varint(), Ok(150));
    assert_eq!(r.read_tag().unwrap().field_number(), 2);
    assert_eq!(kind_at(r.read_varint().unwrap_err()), (ErrorKind::Truncated, 4));
    // A nested reader reports the outer offset.
    let outer = [0x0a, 0x03, 0x08, 0x80, 0x80];
    let mut r = Reader::new(&outer);
    r.read_tag().unwrap();
    let mut inner = r.read_len_reader().unwrap();
    assert_eq!(inner.position(), 2);
    inner.read_tag().unwrap();
    assert_eq!(kind_at(inner.read_varint().unwrap_err()), (ErrorKind::Truncated, 3));
    // with_offset.
    let mut r = Reader::with_offset(&[0x80], 1000);
    assert_eq!(kind_at(r.read_varint().unwrap_err()), (ErrorKind::Truncated, 1000));
}

#[test]
fn decode_reads_only_its_varint() {
    // Trailing bytes (even with continuation bits) are not consumed.
    assert_eq!(decode_varint(&[0x01, 0xff, 0xff]), Ok((1, 1)));
    assert_eq!(decode_varint(&[0x96, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), Ok((150, 2)));
}

// ---------------------------------------------------------------- zigzag

#[test]
fn zigzag_edges() {
    let cases32: &[(i32, u32)] = &[
        (0, 0),
        (-1, 1),
        (1, 2),
        (-2, 3),
        (2, 4),
        (i32::MAX, u32::MAX - 1),
        (i32::MIN, u32::MAX),
        (i32::MIN + 1, u32::MAX - 2),
    ];
    for &(v, z) in cases32 {
        assert_eq!(encode_zigzag32(v), z, "{v}");
        assert_eq!(decode_zigzag32(z), v, "{z}");
    }
    let cases64: &[(i64, u64)] = &[
        (0, 0),
        (-1, 1),
        (1, 2),
        (-2, 3),
        (i64::MAX, u64::MAX - 1),
        (i64::MIN, u64::MAX),
        (i32::MIN as i64, u32::MAX as u64),
        (i32::MAX as i64, u32::MAX as u64 - 1),
    ];
    for &(v, z) in cases64 {
        assert_eq!(encode_zigzag64(v), z, "{v}");
        assert_eq!(decode_zigzag64(z), v, "{z}");
    }
    // sint32 min/max stay at 5 bytes; sint64 min/max take 10.
    assert_eq!(enc(u64::from(encode_zigzag32(i32::MIN))).len(), 5);
    assert_eq!(enc(encode_zigzag64(i64::MIN)).len(), 10);
    assert_eq!(enc(encode_zigzag64(-1)), [0x01]);
}

// ---------------------------------------------------------------- fixed

#[test]
fn fixed_little_endian() {
    assert_eq!(decode_fixed32(&[0x78, 0x56, 0x34, 0x12]), Ok(0x1234_5678));
    assert_eq!(decode_fixed32(&[0x78, 0x56, 0x34, 0x12, 0xff]), Ok(0x1234_5678));
    assert_eq!(decode_fixed64(&[0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01]), Ok(0x0123_4567_89ab_cdef));
    assert_eq!(decode_fixed32(&[0xff; 4]), Ok(u32::MAX));
    assert_eq!(decode_fixed64(&[0xff; 8]), Ok(u64::MAX));
    // sfixed: the same bits reinterpreted.
    assert_eq!(decode_fixed32(&(-2i32).to_le_bytes()).map(|v| v as i32), Ok(-2));
    assert_eq!(decode_fixed64(&i64::MIN.to_le_bytes()).map(|v| v as i64), Ok(i64::MIN));
    for n in 0..4 {
        assert_eq!(kind_at(decode_fixed32(&[0; 8][..n]).unwrap_err()), (ErrorKind::Truncated, 0));
    }
    for n in 0..8 {
        assert_eq!(kind_at(decode_fixed64(&[0; 8][..n]).unwrap_err()), (ErrorKind::Truncated, 0));
    }
}

#[test]
fn float_and_double_bits() {
    assert_eq!(float_to_fixed32(1.0), 0x3f80_0000);
    assert_eq!(float_to_fixed32(-0.0), 0x8000_0000);
    assert_eq!(float_to_fixed32(0.0), 0);
    assert_eq!(double_to_fixed64(-0.0), 0x8000_0000_0000_0000);
    assert_eq!(double_to_fixed64(1.0), 0x3ff0_0000_0000_0000);
    assert_eq!(float_to_fixed32(f32::INFINITY), 0x7f80_0000);
    assert_eq!(double_to_fixed64(f64::NEG_INFINITY), 0xfff0_0000_0000_0000);
    // -0.0 keeps its sign through a round trip.
    assert!(fixed32_to_float(0x8000_0000).is_sign_negative());
    assert_eq!(fixed32_to_float(0x8000_0000), 0.0);
    assert!(fixed64_to_double(0x8000_0000_0000_0000).is_sign_negative());
    // NaN payloads are preserved bit for bit (signalling and quiet, both signs).
    for bits in [0x7fc0_0000u32, 0x7f80_0001, 0xffc0_0001, 0x7fbf_ffff] {
        let f = fixed32_to_float(bits);
        assert!(f.is_nan());
        assert_eq!(float_to_fixed32(f), bits, "{bits:#x}");
    }
    for bits in [0x7ff8_0000_0000_0000u64, 0x7ff0_0000_0000_0001, 0xfff8_dead_beef_0001] {
        let d = fixed64_to_double(bits);
        assert!(d.is_nan());
        assert_eq!(double_to_fixed64(d), bits, "{bits:#x}");
    }
    // Through the reader.
    let mut buf = Vec::new();
    buf.extend_from_slice(&f32::MIN_POSITIVE.to_bits().to_le_bytes());
    buf.extend_from_slice(&f64::MAX.to_bits().to_le_bytes());
    let mut r = Reader::new(&buf);
    assert_eq!(r.read_fixed32().map(fixed32_to_float), Ok(f32::MIN_POSITIVE));
    assert_eq!(r.read_fixed64().map(fixed64_to_double), Ok(f64::MAX));
    assert!(r.is_empty());
}

#[test]
fn reader_fixed_truncated_offsets() {
    let buf = [0x0d, 1, 2, 3];
    let mut r = Reader::new(&buf);
    r.read_tag().unwrap();
    assert_eq!(kind_at(r.read_fixed32().unwrap_err()), (ErrorKind::Truncated, 1));
    assert_eq!(kind_at(r.read_fixed64().unwrap_err()), (ErrorKind::Truncated, 1));
    assert_eq!(r.position(), 1);
    let buf = [0x09, 1, 2, 3, 4, 5, 6, 7];
    let mut r = Reader::new(&buf);
    r.read_tag().unwrap();
    assert_eq!(kind_at(r.read_fixed64().unwrap_err()), (ErrorKind::Truncated, 1));
    assert_eq!(r.read_fixed32(), Ok(u32::from_le_bytes([1, 2, 3, 4])));
    assert_eq!(kind_at(r.read_fixed32().unwrap_err()), (ErrorKind::Truncated, 5));
}

// ---------------------------------------------------------------- tags

#[test]
fn wire_type_bits() {
    let all = [WireType::Varint, WireType::I64, WireType::Len, WireType::StartGroup, WireType::EndGroup, WireType::I32];
    for (bits, wt) in all.iter().enumerate() {
        assert_eq!(WireType::from_bits(bits as u8), Some(*wt));
        assert_eq!(*wt as u8, bits as u8);
    }
    assert_eq!(WireType::from_bits(6), None);
    assert_eq!(WireType::from_bits(7), None);
}

#[test]
fn valid_tags_min_and_max_field() {
    let t = Tag::from_varint(0x08).unwrap();
    assert_eq!((t.field_number(), t.wire_type(), t.raw()), (1, WireType::Varint, 8));
    for wt in 0..=5u64 {
        let t = Tag::from_varint((1 << 3) | wt).unwrap();
        assert_eq!(t.wire_type() as u64, wt);
    }
    // Max field number 2^29-1 = 536870911 with every wire type: a 5-byte tag.
    assert_eq!(MAX_FIELD_NUMBER, 536_870_911);
    let max = Tag::new(MAX_FIELD_NUMBER, WireType::I32).unwrap();
    assert_eq!(max.raw(), 0xffff_fffd);
    assert_eq!(max.encode().as_bytes(), [0xfd, 0xff, 0xff, 0xff, 0x0f]);
    let max_bytes = max.encode();
    let mut r = Reader::new(max_bytes.as_bytes());
    let t = r.read_tag().unwrap();
    assert_eq!((t.field_number(), t.wire_type()), (MAX_FIELD_NUMBER, WireType::I32));
    assert!(r.is_empty());
    // Tag encodings at each length boundary of the field number.
    assert_eq!(tag_bytes(1, WireType::Varint), [0x08]);
    assert_eq!(tag_bytes(15, WireType::Len), [0x7a]);
    assert_eq!(tag_bytes(16, WireType::Varint), [0x80, 0x01]);
    assert_eq!(tag_bytes(2047, WireType::Varint), [0xf8, 0x7f]);
    assert_eq!(tag_bytes(2048, WireType::Varint), [0x80, 0x80, 0x01]);
    assert_eq!(tag_bytes((1 << 18) - 1, WireType::Varint).len(), 3);
    assert_eq!(tag_bytes(1 << 18, WireType::Varint).len(), 4);
    assert_eq!(tag_bytes((1 << 25) - 1, WireType::Varint).len(), 4);
    assert_eq!(tag_bytes(1 << 25, WireType::Varint).len(), 5);
    // A non-canonical (padded) tag varint is still a valid tag.
    let mut r = Reader::new(&[0x88, 0x80, 0x00]);
    assert_eq!(r.read_tag().unwrap().field_number(), 1);
    assert_eq!(r.position(), 3);
}

#[test]
fn tag_new_rejects_out_of_range_field_numbers() {
    assert_eq!(kind_at(Tag::new(0, WireType::Varint).unwrap_err()), (ErrorKind::FieldNumberOutOfRange(0), 0));
    assert_eq!(
        kind_at(Tag::new(MAX_FIELD_NUMBER + 1, WireType::Len).unwrap_err()),
        (ErrorKind::FieldNumberOutOfRange(MAX_FIELD_NUMBER + 1), 0)
    );
    assert_eq!(
        kind_at(Tag::new(u32::MAX, WireType::Len).unwrap_err()),
        (ErrorKind::FieldNumberOutOfRange(u32::MAX), 0)
    );
}

#[test]
fn every_invalid_tag() {
    // Field number 0, with each valid wire type.
    for wt in 0..=5u64 {
        assert_eq!(kind_at(Tag::from_varint(wt).unwrap_err()), (ErrorKind::FieldNumberZero, 0), "wt {wt}");
    }
    // Wire types 6 and 7 (checked before the field number).
    for field in [0u64, 1, MAX_FIELD_NUMBER as u64] {
        for wt in [6u64, 7] {
            assert_eq!(
                kind_at(Tag::from_varint((field << 3) | wt).unwrap_err()),
                (ErrorKind::InvalidWireType(wt as u8), 0),
                "field {field} wt {wt}"
            );
        }
    }
    // Field number 2^29 (one above the max) needs a tag varint of 2^32:
    // 5 bytes whose value does not fit in 32 bits.
    let over = enc(1u64 << 32);
    assert_eq!(over.len(), 5);
    assert_eq!(kind_at(Tag::from_varint(1 << 32).unwrap_err()), (ErrorKind::TagOverflow, 0));
    // Largest 5-byte varint (2^35 - 1) and longer ones: still TagOverflow.
    for v in [(1u64 << 35) - 1, 1 << 35, u64::MAX] {
        assert_eq!(kind_at(Tag::from_varint(v).unwrap_err()), (ErrorKind::TagOverflow, 0), "{v:#x}");
    }
    // u32::MAX itself fits in 32 bits: wire type 7 is the complaint.
    assert_eq!(kind_at(Tag::from_varint(u32::MAX as u64).unwrap_err()), (ErrorKind::InvalidWireType(7), 0));

    // Through the Reader: the offset is where the tag starts.
    let cases: &[(&[u8], ErrorKind)] = &[
        (&[0x00], ErrorKind::FieldNumberZero),
        (&[0x02], ErrorKind::FieldNumberZero),
        (&[0x80, 0x00], ErrorKind::FieldNumberZero),
        (&[0x0e], ErrorKind::InvalidWireType(6)),
        (&[0x0f], ErrorKind::InvalidWireType(7)),
        (&[0xff, 0xff, 0xff, 0xff, 0x0f], ErrorKind::InvalidWireType(7)),
        (&[0x80, 0x80, 0x80, 0x80, 0x10], ErrorKind::TagOverflow),
        (&[0xf8, 0xff, 0xff, 0xff, 0x1f], ErrorKind::TagOverflow),
        (&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], ErrorKind::TagOverflow),
        // Tags are 32-bit: zero-padded past 5 bytes is refused even though
        // the value (field 1, varint) fits, as protobuf does.
        (&[0x88, 0x80, 0x80, 0x80, 0x80, 0x00], ErrorKind::TagTooLong),
        (&[0x88, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00], ErrorKind::TagTooLong),
        (&[0x80], ErrorKind::Truncated),
        (&[0xff; 11], ErrorKind::VarintOverflow),
    ];
    for &(bytes, kind) in cases {
        let mut buf = vec![0x08, 0x01]; // field 1 = 1, then the bad tag at offset 2
        buf.extend_from_slice(bytes);
        let mut r = Reader::new(&buf);
        r.read_tag().unwrap();
        r.read_varint().unwrap();
        assert_eq!(kind_at(r.read_tag().unwrap_err()), (kind, 2), "{bytes:x?}");
    }
    // Empty input: Truncated at the end.
    assert_eq!(kind_at(Reader::with_offset(&[], 7).read_tag().unwrap_err()), (ErrorKind::Truncated, 7));
    // A tag zero-padded to exactly 5 bytes is still a tag.
    let mut r = Reader::new(&[0x88, 0x80, 0x80, 0x80, 0x00, 0x01]);
    assert_eq!(r.read_tag().map(|t| (t.field_number(), t.wire_type())), Ok((1, WireType::Varint)));
    assert_eq!(r.read_varint(), Ok(1));
}

// ---------------------------------------------------------------- LEN

#[test]
fn len_within_bounds() {
    let buf = [0x0a, 0x00, 0x12, 0x03, b'a', b'b', b'c', 0x18];
    let mut r = Reader::new(&buf);
    r.read_tag().unwrap();
    assert_eq!(r.read_len_bytes(), Ok(&b""[..]));
    r.read_tag().unwrap();
    assert_eq!(r.read_len_bytes(), Ok(&b"abc"[..]));
    assert_eq!(r.position(), 7);
    assert_eq!(r.remaining(), 1);
    // A length equal to what remains is fine.
    let mut r = Reader::new(&[0x02, 0xaa, 0xbb]);
    assert_eq!(r.read_len(), Ok(2));
    assert_eq!(r.remaining(), 2);
}

#[test]
fn len_past_the_end() {
    let buf = [0x08, 0x01, 0x12, 0x05, b'a', b'b'];
    let mut r = Reader::new(&buf);
    r.read_tag().unwrap();
    r.read_varint().unwrap();
    r.read_tag().unwrap();
    let e = r.read_len_bytes().unwrap_err();
    assert_eq!(kind_at(e), (ErrorKind::LengthOutOfBounds { len: 5, remaining: 2 }, 3));
    // (Where the cursor stands after a failed read_len is not specified: today
    // it is past the prefix, at 4, unlike a failed read_varint, which does not
    // move. Only the error's offset, that of the prefix, is promised.)
    // One past.
    let mut r = Reader::new(&[0x03, 1, 2]);
    assert_eq!(kind_at(r.read_len().unwrap_err()), (ErrorKind::LengthOutOfBounds { len: 3, remaining: 2 }, 0));
    // Nested reader: offsets stay absolute.
    let buf = [0x0a, 0x04, 0x12, 0x09, 0x00, 0x00];
    let mut r = Reader::new(&buf);
    r.read_tag().unwrap();
    let mut inner = r.read_len_reader().unwrap();
    assert!(r.is_empty());
    inner.read_tag().unwrap();
    assert_eq!(kind_at(inner.read_len().unwrap_err()), (ErrorKind::LengthOutOfBounds { len: 9, remaining: 2 }, 3));
    // A truncated length prefix is Truncated at the prefix.
    let mut r = Reader::with_offset(&[0x80, 0x80], 10);
    assert_eq!(kind_at(r.read_len().unwrap_err()), (ErrorKind::Truncated, 10));
}

#[test]
fn len_huge_ten_byte_length_does_not_overflow() {
    let mut buf = vec![0x12];
    buf.extend_from_slice(&enc(u64::MAX));
    buf.extend_from_slice(b"xyz");
    let mut r = Reader::new(&buf);
    r.read_tag().unwrap();
    assert_eq!(kind_at(r.read_len().unwrap_err()), (ErrorKind::LengthOutOfBounds { len: u64::MAX, remaining: 3 }, 1));
    // usize::MAX + 1 and similar values that would wrap on 32-bit targets.
    for len in [1u64 << 32, (1 << 32) + 1, u32::MAX as u64 + 3, 1 << 63] {
        let mut buf = enc(len);
        buf.push(0);
        let mut r = Reader::new(&buf);
        assert_eq!(kind_at(r.read_len().unwrap_err()), (ErrorKind::LengthOutOfBounds { len, remaining: 1 }, 0));
    }
    // skip_field on such a LEN: same error.
    let buf = enc(u64::MAX);
    let mut r = Reader::new(&buf);
    assert_eq!(
        kind_at(r.skip_field(tag(1, WireType::Len), 10).unwrap_err()),
        (ErrorKind::LengthOutOfBounds { len: u64::MAX, remaining: 0 }, 0)
    );
}

#[test]
fn read_bytes_and_advance_bounds() {
    let mut r = Reader::with_offset(&[1, 2, 3], 5);
    assert_eq!(r.read_bytes(0), Ok(&[][..]));
    assert_eq!(r.read_bytes(2), Ok(&[1, 2][..]));
    assert_eq!(kind_at(r.read_bytes(2).unwrap_err()), (ErrorKind::Truncated, 7));
    assert_eq!(kind_at(r.advance(2).unwrap_err()), (ErrorKind::Truncated, 7));
    assert_eq!(kind_at(r.advance(usize::MAX).unwrap_err()), (ErrorKind::Truncated, 7));
    assert_eq!(kind_at(r.read_bytes(usize::MAX).unwrap_err()), (ErrorKind::Truncated, 7));
    assert_eq!(r.advance(1), Ok(()));
    assert!(r.is_empty());
    assert_eq!(r.position(), 8);
    assert_eq!(r.rest(), &[] as &[u8]);
}

// ---------------------------------------------------------------- skip_field

#[test]
fn skip_field_every_wire_type() {
    let mut buf = Vec::new();
    buf.extend(tag_bytes(1, WireType::Varint));
    buf.extend(enc(u64::MAX)); // 10 bytes
    buf.extend(tag_bytes(2, WireType::I64));
    buf.extend([1, 2, 3, 4, 5, 6, 7, 8]);
    buf.extend(tag_bytes(3, WireType::Len));
    buf.extend([3, b'a', b'b', b'c']);
    buf.extend(tag_bytes(4, WireType::StartGroup));
    buf.extend(tag_bytes(5, WireType::Varint));
    buf.push(7);
    buf.extend(tag_bytes(4, WireType::EndGroup));
    buf.extend(tag_bytes(6, WireType::I32));
    buf.extend([1, 2, 3, 4]);
    buf.extend(tag_bytes(7, WireType::Len));
    buf.push(0);
    let mut r = Reader::new(&buf);
    let mut seen = Vec::new();
    while !r.is_empty() {
        let before = r.position();
        let t = r.read_tag().unwrap();
        r.skip_field(t, 8).unwrap();
        assert!(r.position() > before);
        seen.push((t.field_number(), r.position()));
    }
    assert_eq!(seen, [(1, 11), (2, 20), (3, 25), (4, 29), (6, 34), (7, 36)]);
}

#[test]
fn skip_field_truncated_values() {
    // Varint.
    let mut r = Reader::new(&[0x08, 0x80, 0x80]);
    let t = r.read_tag().unwrap();
    assert_eq!(kind_at(r.skip_field(t, 8).unwrap_err()), (ErrorKind::Truncated, 1));
    // Varint overflow (10th byte 2).
    let mut buf = vec![0x08];
    buf.extend([0xff; 9]);
    buf.push(0x02);
    let mut r = Reader::new(&buf);
    let t = r.read_tag().unwrap();
    assert_eq!(kind_at(r.skip_field(t, 8).unwrap_err()), (ErrorKind::VarintOverflow, 1));
    // I64 with 7 bytes.
    let mut r = Reader::new(&[0x09, 0, 0, 0, 0, 0, 0, 0]);
    let t = r.read_tag().unwrap();
    assert_eq!(kind_at(r.skip_field(t, 8).unwrap_err()), (ErrorKind::Truncated, 1));
    // I32 with 3 bytes.
    let mut r = Reader::new(&[0x0d, 0, 0, 0]);
    let t = r.read_tag().unwrap();
    assert_eq!(kind_at(r.skip_field(t, 8).unwrap_err()), (ErrorKind::Truncated, 1));
    // LEN past the end.
    let mut r = Reader::new(&[0x0a, 0x02, 0]);
    let t = r.read_tag().unwrap();
    assert_eq!(kind_at(r.skip_field(t, 8).unwrap_err()), (ErrorKind::LengthOutOfBounds { len: 2, remaining: 1 }, 1));
    // An END_GROUP given to skip_field: unexpected.
    let mut r = Reader::new(&[0x0c, 0x08]);
    let t = r.read_tag().unwrap();
    assert_eq!(kind_at(r.skip_field(t, 8).unwrap_err()), (ErrorKind::UnexpectedEndGroup(1), 1));
}

/// `depth` nested groups of fields 1, 2, …, depth, with a varint inside the innermost.
fn nested_groups(depth: u32) -> Vec<u8> {
    let mut buf = Vec::new();
    for f in 1..=depth {
        buf.extend(tag_bytes(f, WireType::StartGroup));
    }
    buf.extend(tag_bytes(100, WireType::Varint));
    buf.push(1);
    for f in (1..=depth).rev() {
        buf.extend(tag_bytes(f, WireType::EndGroup));
    }
    buf
}

#[test]
fn groups_nested() {
    for depth in 1..=5 {
        let buf = nested_groups(depth);
        let mut r = Reader::new(&buf);
        let t = r.read_tag().unwrap();
        assert_eq!(t.wire_type(), WireType::StartGroup);
        r.skip_field(t, depth).unwrap();
        assert!(r.is_empty(), "depth {depth}");
    }
    // Groups containing every other wire type, and an empty group.
    let mut buf = Vec::new();
    buf.extend(tag_bytes(9, WireType::StartGroup));
    buf.extend(tag_bytes(1, WireType::I64));
    buf.extend([0; 8]);
    buf.extend(tag_bytes(2, WireType::Len));
    buf.extend([2, 0, 0]);
    buf.extend(tag_bytes(3, WireType::I32));
    buf.extend([0; 4]);
    buf.extend(tag_bytes(4, WireType::StartGroup));
    buf.extend(tag_bytes(4, WireType::EndGroup));
    buf.extend(tag_bytes(9, WireType::EndGroup));
    buf.extend(tag_bytes(10, WireType::Varint));
    buf.push(0);
    let mut r = Reader::new(&buf);
    let t = r.read_tag().unwrap();
    r.skip_field(t, 2).unwrap();
    assert_eq!(r.read_tag().unwrap().field_number(), 10);
    // skip_group directly (its START_GROUP already read), large field number.
    let mut buf = tag_bytes(MAX_FIELD_NUMBER, WireType::EndGroup);
    buf.push(0x42);
    let mut r = Reader::new(&buf);
    r.skip_group(MAX_FIELD_NUMBER, 1).unwrap();
    assert_eq!(r.rest(), [0x42]);
}

#[test]
fn group_mismatched_end() {
    // START_GROUP 1 ... END_GROUP 2: GroupMismatch at the END_GROUP tag.
    let mut buf = tag_bytes(1, WireType::StartGroup);
    buf.extend(tag_bytes(3, WireType::Varint));
    buf.push(5);
    buf.extend(tag_bytes(2, WireType::EndGroup));
    let mut r = Reader::new(&buf);
    let t = r.read_tag().unwrap();
    assert_eq!(kind_at(r.skip_field(t, 8).unwrap_err()), (ErrorKind::GroupMismatch { expected: 1, found: 2 }, 3));
    // Inner group closed with the outer's number.
    let mut buf = tag_bytes(1, WireType::StartGroup); // 0
    buf.extend(tag_bytes(2, WireType::StartGroup)); // 1
    buf.extend(tag_bytes(1, WireType::EndGroup)); // 2
    buf.extend(tag_bytes(1, WireType::EndGroup));
    let mut r = Reader::new(&buf);
    let t = r.read_tag().unwrap();
    assert_eq!(kind_at(r.skip_field(t, 8).unwrap_err()), (ErrorKind::GroupMismatch { expected: 2, found: 1 }, 2));
    // Multi-byte field numbers, offset in a with_offset reader.
    let mut buf = tag_bytes(300, WireType::EndGroup);
    buf.extend(tag_bytes(299, WireType::EndGroup));
    let mut r = Reader::with_offset(&buf, 40);
    assert_eq!(
        kind_at(r.skip_group(299, 1).unwrap_err()),
        (ErrorKind::GroupMismatch { expected: 299, found: 300 }, 40)
    );
}

#[test]
fn group_unexpected_end() {
    let buf = tag_bytes(7, WireType::EndGroup);
    let mut r = Reader::new(&buf);
    let t = r.read_tag().unwrap();
    assert_eq!(kind_at(r.skip_field(t, 8).unwrap_err()), (ErrorKind::UnexpectedEndGroup(7), 1));
}

#[test]
fn group_unterminated() {
    // Ends right after START_GROUP.
    let buf = tag_bytes(5, WireType::StartGroup);
    let mut r = Reader::new(&buf);
    let t = r.read_tag().unwrap();
    assert_eq!(kind_at(r.skip_field(t, 8).unwrap_err()), (ErrorKind::UnterminatedGroup(5), 1));
    // Ends after a field inside the group.
    let mut buf = tag_bytes(5, WireType::StartGroup);
    buf.extend([0x08, 0x01]);
    let mut r = Reader::new(&buf);
    let t = r.read_tag().unwrap();
    assert_eq!(kind_at(r.skip_field(t, 8).unwrap_err()), (ErrorKind::UnterminatedGroup(5), 3));
    // Inner group unterminated: the inner one is named.
    let mut buf = tag_bytes(5, WireType::StartGroup);
    buf.extend(tag_bytes(6, WireType::StartGroup));
    let mut r = Reader::new(&buf);
    let t = r.read_tag().unwrap();
    assert_eq!(kind_at(r.skip_field(t, 8).unwrap_err()), (ErrorKind::UnterminatedGroup(6), 2));
    // Truncated inside a group's field.
    let mut buf = tag_bytes(5, WireType::StartGroup);
    buf.extend([0x08, 0x80]);
    let mut r = Reader::new(&buf);
    let t = r.read_tag().unwrap();
    assert_eq!(kind_at(r.skip_field(t, 8).unwrap_err()), (ErrorKind::Truncated, 2));
    // An invalid tag inside a group.
    let mut buf = tag_bytes(5, WireType::StartGroup);
    buf.push(0x0f);
    let mut r = Reader::new(&buf);
    let t = r.read_tag().unwrap();
    assert_eq!(kind_at(r.skip_field(t, 8).unwrap_err()), (ErrorKind::InvalidWireType(7), 1));
}

#[test]
fn group_depth_limit() {
    // `limit` nested groups fit a depth limit of `limit`; one more does not,
    // and the error names the caller's limit, at the byte after the
    // START_GROUP tag that went too deep.
    for limit in 1..=6u32 {
        let ok = nested_groups(limit);
        let mut r = Reader::new(&ok);
        let t = r.read_tag().unwrap();
        assert_eq!(r.skip_field(t, limit), Ok(()), "limit {limit}");

        let deep = nested_groups(limit + 1);
        let mut r = Reader::new(&deep);
        let t = r.read_tag().unwrap();
        let e = r.skip_field(t, limit).unwrap_err();
        // Each START_GROUP tag for fields 1..=15 is one byte.
        assert_eq!(kind_at(e), (ErrorKind::DepthLimitExceeded(limit), limit as usize + 1), "limit {limit}");
    }
    // Depth limit 0: no group may be opened at all.
    let buf = nested_groups(1);
    let mut r = Reader::new(&buf);
    let t = r.read_tag().unwrap();
    assert_eq!(kind_at(r.skip_field(t, 0).unwrap_err()), (ErrorKind::DepthLimitExceeded(0), 1));
    // Non-group fields need no depth.
    let mut r = Reader::new(&[0x08, 0x01]);
    let t = r.read_tag().unwrap();
    assert_eq!(r.skip_field(t, 0), Ok(()));
    // A deep bomb with a modest limit fails cleanly (no stack overflow).
    let bomb: Vec<u8> = core::iter::repeat_n(0x0b, 100_000).collect(); // START_GROUP 1, forever
    let mut r = Reader::new(&bomb);
    let t = r.read_tag().unwrap();
    assert_eq!(kind_at(r.skip_field(t, 64).unwrap_err()), (ErrorKind::DepthLimitExceeded(64), 65));
}

// ---------------------------------------------------------------- packed

#[test]
fn packed_count_and_decode() {
    let values = [0u64, 1, 127, 128, 16_383, 16_384, 1 << 28, u32::MAX as u64, 1 << 35, 1 << 63, u64::MAX];
    let mut run = Vec::new();
    for &v in &values {
        run.extend(enc(v));
    }
    assert_eq!(count_packed_varints(&run), values.len());
    let mut out = vec![0u64; values.len()];
    assert_eq!(decode_packed_varints(&run, 0, &mut out), Ok(values.len()));
    assert_eq!(out, values);
    let iterated: Vec<u64> = PackedVarints::new(&run, 0).map(Result::unwrap).collect();
    assert_eq!(iterated, values);
    // Empty run.
    assert_eq!(count_packed_varints(&[]), 0);
    assert_eq!(decode_packed_varints(&[], 0, &mut []), Ok(0));
    assert_eq!(PackedVarints::new(&[], 0).count(), 0);
    // A bigger buffer than needed: only the first n slots are written.
    let mut big = vec![99u64; 20];
    assert_eq!(decode_packed_varints(&run, 0, &mut big), Ok(values.len()));
    assert_eq!(big[values.len()], 99);
}

#[test]
fn packed_errors() {
    // Truncated last varint: the count sees only complete ones; decoding
    // reports Truncated at the start of the broken varint (base-relative).
    let run = [0x01, 0x96, 0x01, 0xff, 0xff];
    assert_eq!(count_packed_varints(&run), 2);
    let mut out = [0u64; 8];
    assert_eq!(kind_at(decode_packed_varints(&run, 100, &mut out).unwrap_err()), (ErrorKind::Truncated, 103));
    assert_eq!(&out[..2], [1, 150]);
    let items: Vec<_> = PackedVarints::new(&run, 100).collect();
    assert_eq!(items.len(), 3, "stops after the first error");
    assert_eq!(items[0], Ok(1));
    assert_eq!(items[1], Ok(150));
    assert_eq!(kind_at(items[2].unwrap_err()), (ErrorKind::Truncated, 103));
    // Overflowing varint inside a run.
    let mut run = vec![0x05];
    run.extend([0xff; 11]);
    assert_eq!(kind_at(decode_packed_varints(&run, 0, &mut out).unwrap_err()), (ErrorKind::VarintOverflow, 1));
    // Output too small: Truncated at the first value that did not fit.
    let run = [0x01, 0x02, 0x96, 0x01];
    let mut small = [0u64; 2];
    assert_eq!(kind_at(decode_packed_varints(&run, 10, &mut small).unwrap_err()), (ErrorKind::Truncated, 12));
    assert_eq!(small, [1, 2]);
}

#[test]
fn packed_fixed_runs() {
    let run: Vec<u8> = [1u32, u32::MAX, 0x1234_5678].iter().flat_map(|v| v.to_le_bytes()).collect();
    let it = packed_fixed32(&run, 0).unwrap();
    assert_eq!(it.len(), 3);
    assert_eq!(it.collect::<Vec<_>>(), [1, u32::MAX, 0x1234_5678]);
    let run64: Vec<u8> = [7u64, u64::MAX].iter().flat_map(|v| v.to_le_bytes()).collect();
    let it = packed_fixed64(&run64, 0).unwrap();
    assert_eq!(it.len(), 2);
    assert_eq!(it.collect::<Vec<_>>(), [7, u64::MAX]);
    assert_eq!(packed_fixed32(&[], 0).unwrap().len(), 0);
    assert_eq!(packed_fixed64(&[], 0).unwrap().len(), 0);
    // Misaligned lengths.
    for len in [1usize, 2, 3, 5, 7, 13] {
        let bytes = vec![0u8; len];
        let e = packed_fixed32(&bytes, 9).err().unwrap();
        assert_eq!(kind_at(e), (ErrorKind::PackedLengthMisaligned { len, width: 4 }, 9));
    }
    for len in [1usize, 4, 7, 9, 12, 15] {
        let bytes = vec![0u8; len];
        let e = packed_fixed64(&bytes, 3).err().unwrap();
        assert_eq!(kind_at(e), (ErrorKind::PackedLengthMisaligned { len, width: 8 }, 3));
    }
    // 8 bytes are fine for both widths.
    assert_eq!(packed_fixed32(&[0; 8], 0).unwrap().len(), 2);
    assert_eq!(packed_fixed64(&[0; 8], 0).unwrap().len(), 1);
}

// ---------------------------------------------------------------- UTF-8

fn utf8_err(bytes: &[u8], base: usize) -> (ErrorKind, usize) {
    kind_at(validate_utf8(bytes, base).unwrap_err())
}

/// Puts `bad` after `prefix_len` ASCII bytes and checks the error offset is
/// `base + prefix_len + offset_in_bad`, on both sides of SIMD_THRESHOLD.
fn check_invalid(bad: &[u8], offset_in_bad: usize) {
    for prefix_len in [0usize, 1, 7, SIMD_THRESHOLD - 1, SIMD_THRESHOLD, 200] {
        for suffix_len in [0usize, 5, SIMD_THRESHOLD] {
            let mut bytes = vec![b'a'; prefix_len];
            bytes.extend_from_slice(bad);
            bytes.extend(core::iter::repeat_n(b'z', suffix_len));
            assert!(core::str::from_utf8(&bytes).is_err());
            assert_eq!(
                utf8_err(&bytes, 1000),
                (ErrorKind::InvalidUtf8, 1000 + prefix_len + offset_in_bad),
                "{bad:x?} prefix {prefix_len} suffix {suffix_len}"
            );
        }
    }
}

#[test]
fn utf8_valid() {
    let cases: &[&str] = &[
        "",
        "a",
        "hello, world",
        "\u{7f}",
        "\u{80}",
        "\u{7ff}",
        "\u{800}",
        "\u{d7ff}",
        "\u{e000}",
        "\u{fffd}",
        "\u{ffff}",
        "\u{10000}",
        "\u{10ffff}",
        "héllo wörld ✓ 🦀",
    ];
    for s in cases {
        assert_eq!(validate_utf8(s.as_bytes(), 0), Ok(()), "{s:?}");
        // Same content around and beyond the SIMD threshold.
        let long = s.repeat(SIMD_THRESHOLD);
        assert_eq!(validate_utf8(long.as_bytes(), 0), Ok(()));
        let mut padded = "x".repeat(SIMD_THRESHOLD);
        padded.push_str(s);
        assert_eq!(validate_utf8(padded.as_bytes(), 0), Ok(()));
    }
    // Exactly at, just below, just above the threshold (ASCII and multi-byte).
    for len in [SIMD_THRESHOLD - 1, SIMD_THRESHOLD, SIMD_THRESHOLD + 1] {
        assert_eq!(validate_utf8(&vec![b'q'; len], 0), Ok(()));
        let mut s = "é".repeat(len / 2);
        if len % 2 == 1 {
            s.push('q');
        }
        assert_eq!(s.len(), len);
        assert_eq!(validate_utf8(s.as_bytes(), 0), Ok(()));
    }
    // U+10FFFF, the max, encoded directly.
    assert_eq!(validate_utf8(&[0xf4, 0x8f, 0xbf, 0xbf], 0), Ok(()));
}

#[test]
fn utf8_overlong_forms() {
    // Overlong 2-byte (C0/C1 lead), 3-byte (E0 80..9F), 4-byte (F0 80..8F).
    check_invalid(&[0xc0, 0x80], 0); // U+0000 as 2 bytes
    check_invalid(&[0xc1, 0xbf], 0); // U+007F as 2 bytes
    check_invalid(&[0xe0, 0x80, 0x80], 0); // U+0000 as 3 bytes
    check_invalid(&[0xe0, 0x9f, 0xbf], 0); // U+07FF as 3 bytes
    check_invalid(&[0xf0, 0x80, 0x80, 0x80], 0); // U+0000 as 4 bytes
    check_invalid(&[0xf0, 0x8f, 0xbf, 0xbf], 0); // U+FFFF as 4 bytes
    // After a valid multi-byte character, the offset is past it.
    check_invalid(&[0xc3, 0xa9, 0xc0, 0x80], 2);
}

#[test]
fn utf8_surrogates() {
    check_invalid(&[0xed, 0xa0, 0x80], 0); // U+D800
    check_invalid(&[0xed, 0xaf, 0xbf], 0); // U+DBFF
    check_invalid(&[0xed, 0xb0, 0x80], 0); // U+DC00
    check_invalid(&[0xed, 0xbf, 0xbf], 0); // U+DFFF
    // A CESU-8 surrogate pair is invalid too.
    check_invalid(&[0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80], 0);
    // Just outside the surrogate range is fine.
    assert_eq!(validate_utf8(&[0xed, 0x9f, 0xbf], 0), Ok(())); // U+D7FF
    assert_eq!(validate_utf8(&[0xee, 0x80, 0x80], 0), Ok(())); // U+E000
}

#[test]
fn utf8_above_max_code_point() {
    check_invalid(&[0xf4, 0x90, 0x80, 0x80], 0); // U+110000
    check_invalid(&[0xf5, 0x80, 0x80, 0x80], 0);
    check_invalid(&[0xf7, 0xbf, 0xbf, 0xbf], 0); // U+1FFFFF
    check_invalid(&[0xf8, 0x88, 0x80, 0x80, 0x80], 0); // old 5-byte form
    check_invalid(&[0xfe], 0);
    check_invalid(&[0xff], 0);
}

#[test]
fn utf8_truncated_and_stray_bytes() {
    // Sequences cut short at the end of the input.
    for (bad, len) in [(&[0xc3][..], 1), (&[0xe2, 0x82][..], 2), (&[0xf0, 0x9f, 0xa6][..], 3), (&[0xe2][..], 1)] {
        assert_eq!(bad.len(), len);
        for prefix_len in [0usize, 3, SIMD_THRESHOLD, 100] {
            let mut bytes = vec![b'a'; prefix_len];
            bytes.extend_from_slice(bad);
            assert_eq!(utf8_err(&bytes, 0), (ErrorKind::InvalidUtf8, prefix_len), "{bad:x?} {prefix_len}");
        }
    }
    // Cut short in the middle (followed by ASCII).
    check_invalid(&[0xe2, 0x82, b'A'], 0);
    check_invalid(&[0xf0, 0x9f, 0xa6, b'A'], 0);
    check_invalid(&[0xc3, b'A'], 0);
    // Stray continuation bytes.
    check_invalid(&[0x80], 0);
    check_invalid(&[0xbf], 0);
    check_invalid(&[0xc3, 0xa9, 0xa9], 2);
}

#[test]
fn utf8_agrees_with_core_on_every_short_pattern() {
    // Every 1- and 2-byte input, and 3-byte inputs over an interesting byte
    // set, with and without a long ASCII prefix (SIMD path).
    let interesting = [
        0x00u8, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xed, 0xee, 0xef,
        0xf0, 0xf1, 0xf4, 0xf5, 0xff,
    ];
    let prefix = vec![b'p'; SIMD_THRESHOLD];
    let check = |bytes: &[u8]| {
        for with_prefix in [false, true] {
            let mut buf = if with_prefix { prefix.clone() } else { Vec::new() };
            buf.extend_from_slice(bytes);
            let expected = match core::str::from_utf8(&buf) {
                Ok(_) => Ok(()),
                Err(e) => Err((ErrorKind::InvalidUtf8, 5 + e.valid_up_to())),
            };
            assert_eq!(validate_utf8(&buf, 5).map_err(kind_at), expected, "{buf:x?}");
        }
    };
    // Under Miri, the exhaustive 2-byte sweep is too slow; the byte set covers
    // every class boundary.
    let all: Vec<u8> = if cfg!(miri) { interesting.to_vec() } else { (0..=255).collect() };
    for &a in &all {
        check(&[a]);
        for &b in &all {
            check(&[a, b]);
        }
    }
    for &a in &interesting {
        for &b in &interesting {
            for &c in &interesting {
                check(&[a, b, c]);
                if !cfg!(miri) {
                    check(&[a, b, c, 0x80]);
                }
            }
        }
    }
}

/// Every length around the short-string word checks (0..=80), with one
/// non-ASCII byte at every position: a valid 2-byte sequence, a lone
/// continuation byte, and 0xFF. Same verdict and offset as `core`.
#[test]
fn utf8_one_high_byte_anywhere() {
    for n in 0..=80usize {
        let ascii: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
        assert_eq!(validate_utf8(&ascii, 0), Ok(()), "ascii len {n}");
        for at in 0..n {
            for high in [&[0xc3u8, 0xa9][..], &[0x80], &[0xff]] {
                let mut s = ascii.clone();
                let end = (at + high.len()).min(n);
                s[at..end].copy_from_slice(&high[..end - at]);
                let ours = validate_utf8(&s, 5).map_err(|e| e.offset());
                let core = core::str::from_utf8(&s).map(|_| ()).map_err(|e| 5 + e.valid_up_to());
                assert_eq!(ours, core, "len {n}, {high:x?} at {at}");
            }
        }
    }
}

// ---------------------------------------------------------------- Writer

#[cfg(feature = "alloc")]
mod writer {
    use super::*;
    use pbwire::Writer;

    /// Every varint length, at both ends of it, appended after other bytes:
    /// the same bytes as `encode_varint`, and nothing after them.
    #[test]
    fn put_varint_every_length() {
        let mut w = Writer::new();
        for bits in 0..=64u32 {
            let top = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            for value in [top, top.wrapping_add(1), top >> 1 | 1, top ^ 0x5555_5555_5555_5555 & top] {
                w.clear();
                w.put_bytes(b"ab");
                w.put_varint(value);
                let mut want = [0u8; MAX_VARINT_LEN];
                let n = encode_varint(value, &mut want);
                assert_eq!(&w.as_slice()[..2], b"ab");
                assert_eq!(&w.as_slice()[2..], &want[..n], "{value:#x}");
            }
        }
    }

    #[test]
    fn put_primitives() {
        let mut w = Writer::new();
        assert!(w.is_empty());
        for &(value, bytes) in VARINT_CASES {
            w.clear();
            w.put_varint(value);
            assert_eq!(w.as_slice(), bytes, "{value:#x}");
        }
        w.clear();
        w.put_tag(tag(1, WireType::Varint));
        w.put_encoded_tag(&tag(MAX_FIELD_NUMBER, WireType::I32).encode());
        w.put_fixed32(0x1234_5678);
        w.put_fixed64(0x0102_0304_0506_0708);
        w.put_bytes(b"ab");
        w.put_len_bytes(b"xyz");
        w.put_len_bytes(b"");
        assert_eq!(
            w.as_slice(),
            [
                0x08, 0xfd, 0xff, 0xff, 0xff, 0x0f, 0x78, 0x56, 0x34, 0x12, 8, 7, 6, 5, 4, 3, 2, 1, b'a', b'b', 3,
                b'x', b'y', b'z', 0
            ]
        );
        assert_eq!(w.len(), 25);
        let v = w.clone().into_vec();
        assert_eq!(v.len(), 25);
        let cap = w.capacity();
        w.clear();
        assert_eq!(w.capacity(), cap, "clear keeps the capacity");
        let mut w = Writer::from_vec(vec![9, 9]);
        w.put_varint(1);
        w.truncate(1);
        assert_eq!(w.as_slice(), [9]);
        let mut w = Writer::with_capacity(64);
        assert!(w.capacity() >= 64);
        w.reserve(1000);
        assert!(w.capacity() >= 1000);
    }

    #[test]
    fn put_len_bytes_long() {
        for len in [127usize, 128, 16_383, 16_384] {
            let body = vec![0xabu8; len];
            let mut w = Writer::new();
            w.put_len_bytes(&body);
            let mut expected = enc(len as u64);
            expected.extend_from_slice(&body);
            assert_eq!(w.as_slice(), expected.as_slice(), "{len}");
        }
    }

    #[test]
    fn put_tagged_len_bytes_matches_separate_writes() {
        for number in [1u32, 15, 16, 2047, 2048, 262_143, 262_144, MAX_FIELD_NUMBER] {
            let t = tag(number, WireType::Len).encode();
            for len in [0usize, 1, 127, 128, 16_383, 16_384, 20_000] {
                let value = body(len);
                let mut want = Writer::from_vec(b"ab".to_vec());
                want.put_encoded_tag(&t);
                want.put_len_bytes(&value);
                let mut got = Writer::from_vec(b"ab".to_vec());
                got.put_tagged_len_bytes(&t, &value);
                assert_eq!(got.as_slice(), want.as_slice(), "field {number}, {len} bytes");
            }
        }
    }

    #[test]
    fn put_varint_long_grows_when_fewer_than_10_bytes_are_free() {
        // Free space from 16 down to 0: the in-place write and the grow path.
        for fill in 0..=16usize {
            for value in [0x4000u64, 1 << 35, u64::MAX] {
                let mut w = Writer::with_capacity(16);
                w.put_bytes(&vec![7u8; fill]);
                w.put_varint(value);
                let mut want = vec![7u8; fill];
                want.extend_from_slice(&enc(value));
                assert_eq!(w.as_slice(), want.as_slice(), "fill {fill}, value {value:#x}");
            }
        }
    }

    /// Body bytes that make misplaced copies visible.
    fn body(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i % 251) as u8).collect()
    }

    #[test]
    fn begin_end_len_body_sizes() {
        // 2^21-byte bodies are slow under Miri: there, stop at the 3-byte prefix.
        let sizes: &[usize] = if cfg!(miri) {
            &[0, 1, 127, 128, 16_383, 16_384]
        } else {
            &[0, 1, 127, 128, 16_383, 16_384, (1 << 21) - 1, 1 << 21]
        };
        for &len in sizes {
            let b = body(len);
            let mut w = Writer::new();
            w.put_tag(tag(1, WireType::Len));
            let mark = w.begin_len();
            w.put_bytes(&b);
            assert_eq!(w.len_since(mark), len);
            w.end_len(mark);
            w.put_varint(0x42); // something after the LEN value stays after it
            let mut expected = vec![0x0a];
            expected.extend(enc(len as u64));
            expected.extend_from_slice(&b);
            expected.push(0x42);
            assert_eq!(w.len(), expected.len(), "{len}");
            assert!(w.as_slice() == expected.as_slice(), "len {len}: bytes differ");
            // And it reads back.
            let mut r = Reader::new(w.as_slice());
            r.read_tag().unwrap();
            assert_eq!(r.read_len_bytes().unwrap().len(), len);
            assert_eq!(r.read_varint(), Ok(0x42));
        }
        assert_eq!(encoded_len_varint(1 << 21), 4);
        assert_eq!(encoded_len_varint(16_384), 3);
        assert_eq!(encoded_len_varint(16_383), 2);
    }

    /// Three nested LEN values whose sizes straddle each prefix boundary:
    /// the writer's output equals the one built inside-out with known lengths.
    #[test]
    fn begin_end_len_nested_three_deep() {
        let sizes: &[usize] = if cfg!(miri) {
            &[0, 5, 120, 127, 128, 16_370, 16_384]
        } else {
            &[0, 5, 120, 127, 128, 16_370, 16_383, 16_384, 1 << 21]
        };
        for &inner_len in sizes {
            let b = body(inner_len);
            let mut w = Writer::new();
            w.put_tag(tag(1, WireType::Len));
            let m1 = w.begin_len();
            w.put_tag(tag(2, WireType::Varint));
            w.put_varint(300);
            w.put_tag(tag(3, WireType::Len));
            let m2 = w.begin_len();
            w.put_tag(tag(4, WireType::Len));
            let m3 = w.begin_len();
            w.put_bytes(&b);
            w.end_len(m3);
            w.put_tag(tag(5, WireType::I32));
            w.put_fixed32(7);
            w.end_len(m2);
            w.end_len(m1);

            // Inside-out, lengths known up front.
            let mut l3 = tag_bytes(4, WireType::Len);
            l3.extend(enc(b.len() as u64));
            l3.extend_from_slice(&b);
            l3.extend(tag_bytes(5, WireType::I32));
            l3.extend(7u32.to_le_bytes());
            let mut l2 = tag_bytes(2, WireType::Varint);
            l2.extend(enc(300));
            l2.extend(tag_bytes(3, WireType::Len));
            l2.extend(enc(l3.len() as u64));
            l2.extend(l3);
            let mut expected = tag_bytes(1, WireType::Len);
            expected.extend(enc(l2.len() as u64));
            expected.extend(l2);
            assert!(w.as_slice() == expected.as_slice(), "inner {inner_len}: bytes differ");
        }
    }
}

// ---------------------------------------------------------------- Error

#[test]
fn error_display_says_what_and_where() {
    let cases: &[(ErrorKind, &str)] = &[
        (ErrorKind::Truncated, "truncated input"),
        (ErrorKind::VarintOverflow, "varint longer than 64 bits"),
        (ErrorKind::TagOverflow, "tag does not fit in 32 bits"),
        (ErrorKind::FieldNumberZero, "field number 0 in tag"),
        (ErrorKind::InvalidWireType(6), "invalid wire type 6"),
        (ErrorKind::FieldNumberOutOfRange(0), "field number 0 outside 1..=536870911"),
        (ErrorKind::LengthOutOfBounds { len: 5, remaining: 2 }, "length 5 exceeds the 2 bytes remaining"),
        (ErrorKind::GroupMismatch { expected: 1, found: 2 }, "END_GROUP for field 2 closes group 1"),
        (ErrorKind::UnexpectedEndGroup(3), "END_GROUP for field 3 outside a group"),
        (ErrorKind::UnterminatedGroup(4), "group 4 is not terminated"),
        (ErrorKind::DepthLimitExceeded(64), "nesting deeper than 64"),
        (ErrorKind::PackedLengthMisaligned { len: 7, width: 4 }, "packed run of 7 bytes is not a multiple of 4"),
        (ErrorKind::InvalidUtf8, "invalid UTF-8"),
    ];
    for (i, &(kind, text)) in cases.iter().enumerate() {
        let e = Error::new(kind, i * 1000);
        assert_eq!(e.to_string(), format!("{text} at byte {}", i * 1000));
        assert_eq!(kind.to_string(), text);
        assert_eq!((e.kind(), e.offset()), (kind, i * 1000));
    }
    // A real error from the reader.
    let e = Reader::new(&[0x05]).skip_field(tag(1, WireType::Len), 1).unwrap_err();
    assert_eq!(e.to_string(), "length 5 exceeds the 0 bytes remaining at byte 0");
    assert_eq!(Error::new(ErrorKind::Truncated, 3).shifted(4).offset(), 7);
    #[cfg(feature = "std")]
    {
        let boxed: Box<dyn std::error::Error> = Box::new(e);
        assert!(boxed.to_string().ends_with("at byte 0"));
    }
}
