//! Property tests with `prost::encoding` as the oracle: byte-identical
//! output, encode→decode identity, and the same accept/reject decisions on
//! arbitrary input.
//!
//! ## Where `pbwire` and `prost` legitimately differ
//!
//! - Error *kinds*: prost reports every bad varint as `InvalidVarint`
//!   (truncated or overflowing alike); pbwire says `Truncated` or
//!   `VarintOverflow`. The tests compare "both error" and, for pbwire,
//!   the documented kind.
//! - Acceptance of varints is otherwise identical: both accept non-minimal
//!   ("padded") varints up to 10 bytes, both reject an 11th byte and a 10th
//!   byte above 1 (protobuf-go's `ConsumeVarint` rule, which prost adopted).
//! - Depth limits: prost's `skip_field` counts recursion per *field* against
//!   its fixed limit of 100, pbwire per *group* against the caller's limit,
//!   so inputs that nest groups to either limit are excluded from the
//!   skip-field comparison.

use pbwire::fixed::{decode_fixed32, decode_fixed64, double_to_fixed64, float_to_fixed32};
use pbwire::packed::{count_packed_varints, decode_packed_varints};
use pbwire::varint::{
    MAX_VARINT_LEN, decode_varint, encode_varint, encoded_len_varint, int32_to_varint, skip_varint, varint_to_bool,
    varint_to_int32, varint_to_uint32,
};
use pbwire::zigzag::{decode_zigzag32, decode_zigzag64, encode_zigzag32, encode_zigzag64};
use pbwire::{ErrorKind, MAX_FIELD_NUMBER, Reader, Tag, WireType};
use proptest::prelude::*;
use prost::encoding::{self as pe, DecodeContext, WireType as PWireType};

fn config() -> ProptestConfig {
    // Under Miri each case costs ~1000x more, and the file-based failure
    // persistence is unavailable under isolation.
    if cfg!(miri) {
        ProptestConfig { cases: 4, failure_persistence: None, ..ProptestConfig::default() }
    } else {
        ProptestConfig::with_cases(512)
    }
}

fn enc(value: u64) -> Vec<u8> {
    let mut out = [0u8; MAX_VARINT_LEN];
    let n = encode_varint(value, &mut out);
    out[..n].to_vec()
}

fn prost_varint(value: u64) -> Vec<u8> {
    let mut v = Vec::new();
    pe::encode_varint(value, &mut v);
    v
}

fn to_prost_wt(wt: WireType) -> PWireType {
    match wt {
        WireType::Varint => PWireType::Varint,
        WireType::I64 => PWireType::SixtyFourBit,
        WireType::Len => PWireType::LengthDelimited,
        WireType::StartGroup => PWireType::StartGroup,
        WireType::EndGroup => PWireType::EndGroup,
        WireType::I32 => PWireType::ThirtyTwoBit,
    }
}

/// Our encoding of one field: tag bytes, then the value bytes.
fn ours_field(field: u32, wt: WireType, value: &[u8]) -> Vec<u8> {
    let mut out = Tag::new(field, wt).unwrap().encode().as_bytes().to_vec();
    out.extend_from_slice(value);
    out
}

/// Reads one field with our Reader: the tag, and the raw varint.
fn ours_read_varint_field(bytes: &[u8], field: u32) -> u64 {
    let mut r = Reader::new(bytes);
    let t = r.read_tag().unwrap();
    assert_eq!((t.field_number(), t.wire_type()), (field, WireType::Varint));
    let v = r.read_varint().unwrap();
    assert!(r.is_empty());
    v
}

/// Varint-shaped byte strings: mostly continuation bytes, so long and
/// overlong varints, 10th bytes of every value, and truncation all occur.
fn varintish_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            4 => 0x80u8..=0xff,
            1 => 0x00u8..=0x7f,
            1 => prop::sample::select(vec![0x00u8, 0x01, 0x02, 0x7f, 0x80, 0x81, 0xff]),
        ],
        0..14,
    )
}

fn field_number() -> impl Strategy<Value = u32> {
    prop_oneof![1u32..=15, 16u32..=2047, 1u32..=MAX_FIELD_NUMBER, Just(MAX_FIELD_NUMBER)]
}

/// u64 values spread over every encoded length, plus the edges.
fn any_width_u64() -> impl Strategy<Value = u64> {
    prop_oneof![
        any::<u64>(),
        (0u32..64, any::<u64>()).prop_map(|(bits, v)| v >> bits),
        prop::sample::select(vec![0u64, 1, 127, 128, 16_383, 16_384, u32::MAX as u64, 1 << 63, u64::MAX]),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn varint_bytes_match_prost(v in any_width_u64()) {
        let ours = enc(v);
        prop_assert_eq!(&ours, &prost_varint(v));
        prop_assert_eq!(encoded_len_varint(v), pe::encoded_len_varint(v));
        prop_assert_eq!(ours.len(), encoded_len_varint(v));
        prop_assert_eq!(decode_varint(&ours), Ok((v, ours.len())));
        let mut padded = ours.clone();
        padded.extend_from_slice(&[0xff; 12]);
        prop_assert_eq!(decode_varint(&padded), Ok((v, ours.len())));
        prop_assert_eq!(skip_varint(&padded), Ok(ours.len()));
        let mut slice = &ours[..];
        prop_assert_eq!(pe::decode_varint(&mut slice).unwrap(), v);
    }

    /// Our decoder and prost's agree on arbitrary bytes: same value and
    /// length, or both reject.
    #[test]
    fn varint_decode_agrees_with_prost(bytes in varintish_bytes(), tail in 0usize..12) {
        let mut input = bytes.clone();
        input.extend(core::iter::repeat_n(0x00, tail)); // shifts fast/slow paths
        for buf in [&bytes[..], &input[..]] {
            let ours = decode_varint(buf);
            let mut slice = buf;
            let theirs = pe::decode_varint(&mut slice).map(|v| (v, buf.len() - slice.len()));
            match (&ours, &theirs) {
                (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
                (Err(e), Err(_)) => {
                    prop_assert_eq!(e.offset(), 0);
                    // Our documented split of prost's InvalidVarint.
                    let expected = if buf.len() >= MAX_VARINT_LEN || buf.iter().any(|&b| b < 0x80) {
                        ErrorKind::VarintOverflow
                    } else {
                        ErrorKind::Truncated
                    };
                    prop_assert_eq!(e.kind(), expected, "{:x?}", buf);
                }
                _ => prop_assert!(false, "disagree on {:x?}: ours {:?} prost {:?}", buf, ours, theirs),
            }
            // skip_varint accepts exactly what decode_varint accepts.
            prop_assert_eq!(skip_varint(buf), ours.map(|(_, n)| n));
            // Re-encoding a decoded value gives the canonical (≤) form.
            if let Ok((v, n)) = ours {
                let canon = enc(v);
                prop_assert!(canon.len() <= n);
                prop_assert_eq!(decode_varint(&canon), Ok((v, canon.len())));
            }
        }
    }

    #[test]
    fn int32_field_matches_prost(field in field_number(), v in any::<i32>()) {
        let mut theirs = Vec::new();
        pe::int32::encode(field, &v, &mut theirs);
        let ours = ours_field(field, WireType::Varint, &enc(int32_to_varint(v)));
        prop_assert_eq!(&ours, &theirs);
        prop_assert_eq!(varint_to_int32(ours_read_varint_field(&theirs, field)), v);
        if v < 0 {
            prop_assert_eq!(enc(int32_to_varint(v)).len(), 10);
        }
    }

    #[test]
    fn int64_uint64_uint32_bool_fields_match_prost(
        field in field_number(), a in any::<i64>(), b in any_width_u64(), c in any::<u32>(), d in any::<bool>()
    ) {
        let mut theirs = Vec::new();
        pe::int64::encode(field, &a, &mut theirs);
        prop_assert_eq!(ours_field(field, WireType::Varint, &enc(a as u64)), theirs.clone());
        prop_assert_eq!(ours_read_varint_field(&theirs, field) as i64, a);

        let mut theirs = Vec::new();
        pe::uint64::encode(field, &b, &mut theirs);
        prop_assert_eq!(ours_field(field, WireType::Varint, &enc(b)), theirs.clone());
        prop_assert_eq!(ours_read_varint_field(&theirs, field), b);

        let mut theirs = Vec::new();
        pe::uint32::encode(field, &c, &mut theirs);
        prop_assert_eq!(ours_field(field, WireType::Varint, &enc(u64::from(c))), theirs.clone());
        prop_assert_eq!(varint_to_uint32(ours_read_varint_field(&theirs, field)), c);

        let mut theirs = Vec::new();
        pe::bool::encode(field, &d, &mut theirs);
        prop_assert_eq!(ours_field(field, WireType::Varint, &enc(u64::from(d))), theirs.clone());
        prop_assert_eq!(varint_to_bool(ours_read_varint_field(&theirs, field)), d);
    }

    /// 32-bit truncation: an arbitrary 64-bit varint decodes to the same
    /// int32/uint32/bool as prost's `merge`.
    #[test]
    fn narrow_types_truncate_like_prost(v in any_width_u64()) {
        let bytes = enc(v);
        let (mut i, mut u, mut b) = (0i32, 0u32, false);
        pe::int32::merge(PWireType::Varint, &mut i, &mut &bytes[..], DecodeContext::default()).unwrap();
        pe::uint32::merge(PWireType::Varint, &mut u, &mut &bytes[..], DecodeContext::default()).unwrap();
        pe::bool::merge(PWireType::Varint, &mut b, &mut &bytes[..], DecodeContext::default()).unwrap();
        let (decoded, _) = decode_varint(&bytes).unwrap();
        prop_assert_eq!(varint_to_int32(decoded), i);
        prop_assert_eq!(varint_to_uint32(decoded), u);
        prop_assert_eq!(varint_to_bool(decoded), b);
        let mut s32 = 0i32;
        pe::sint32::merge(PWireType::Varint, &mut s32, &mut &bytes[..], DecodeContext::default()).unwrap();
        prop_assert_eq!(decode_zigzag32(varint_to_uint32(decoded)), s32);
    }

    #[test]
    fn sint_fields_match_prost(field in field_number(), a in any::<i32>(), b in any::<i64>()) {
        let mut theirs = Vec::new();
        pe::sint32::encode(field, &a, &mut theirs);
        prop_assert_eq!(ours_field(field, WireType::Varint, &enc(u64::from(encode_zigzag32(a)))), theirs.clone());
        prop_assert_eq!(decode_zigzag32(varint_to_uint32(ours_read_varint_field(&theirs, field))), a);

        let mut theirs = Vec::new();
        pe::sint64::encode(field, &b, &mut theirs);
        prop_assert_eq!(ours_field(field, WireType::Varint, &enc(encode_zigzag64(b))), theirs.clone());
        prop_assert_eq!(decode_zigzag64(ours_read_varint_field(&theirs, field)), b);

        prop_assert_eq!(decode_zigzag32(encode_zigzag32(a)), a);
        prop_assert_eq!(decode_zigzag64(encode_zigzag64(b)), b);
    }

    #[test]
    fn fixed_fields_match_prost(
        field in field_number(), a in any::<u32>(), b in any::<u64>(), c in any::<i32>(), d in any::<i64>(),
        fbits in any::<u32>(), dbits in any::<u64>()
    ) {
        let check32 = |theirs: Vec<u8>, bits: u32| -> Result<(), TestCaseError> {
            prop_assert_eq!(ours_field(field, WireType::I32, &bits.to_le_bytes()), theirs.clone());
            let mut r = Reader::new(&theirs);
            prop_assert_eq!(r.read_tag().unwrap().wire_type(), WireType::I32);
            prop_assert_eq!(r.read_fixed32(), Ok(bits));
            prop_assert_eq!(decode_fixed32(&theirs[theirs.len() - 4..]), Ok(bits));
            Ok(())
        };
        let check64 = |theirs: Vec<u8>, bits: u64| -> Result<(), TestCaseError> {
            prop_assert_eq!(ours_field(field, WireType::I64, &bits.to_le_bytes()), theirs.clone());
            let mut r = Reader::new(&theirs);
            prop_assert_eq!(r.read_tag().unwrap().wire_type(), WireType::I64);
            prop_assert_eq!(r.read_fixed64(), Ok(bits));
            prop_assert_eq!(decode_fixed64(&theirs[theirs.len() - 8..]), Ok(bits));
            Ok(())
        };
        let mut t = Vec::new();
        pe::fixed32::encode(field, &a, &mut t);
        check32(t, a)?;
        let mut t = Vec::new();
        pe::sfixed32::encode(field, &c, &mut t);
        check32(t, c as u32)?;
        let mut t = Vec::new();
        let f = f32::from_bits(fbits); // any bits, NaN payloads included
        pe::float::encode(field, &f, &mut t);
        check32(t, float_to_fixed32(f))?;
        let mut t = Vec::new();
        pe::fixed64::encode(field, &b, &mut t);
        check64(t, b)?;
        let mut t = Vec::new();
        pe::sfixed64::encode(field, &d, &mut t);
        check64(t, d as u64)?;
        let mut t = Vec::new();
        let x = f64::from_bits(dbits);
        pe::double::encode(field, &x, &mut t);
        check64(t, double_to_fixed64(x))?;
    }

    #[test]
    fn tag_encode_matches_prost(field in field_number(), wt in 0u8..=5) {
        let wt = WireType::from_bits(wt).unwrap();
        let tag = Tag::new(field, wt).unwrap();
        let mut theirs = Vec::new();
        pe::encode_key(field, to_prost_wt(wt), &mut theirs);
        let encoded = tag.encode();
        prop_assert_eq!(encoded.as_bytes(), &theirs[..]);
        prop_assert_eq!(encoded.as_bytes().len(), pe::key_len(field));
        let mut slice = &theirs[..];
        prop_assert_eq!(pe::decode_key(&mut slice).unwrap(), (field, to_prost_wt(wt)));
        let mut r = Reader::new(&theirs);
        prop_assert_eq!(r.read_tag(), Ok(tag));
    }

    /// Our tag validation accepts exactly the keys prost's `decode_key` does.
    #[test]
    fn tag_decode_agrees_with_prost(key in prop_oneof![
        any::<u64>(),
        any::<u32>().prop_map(u64::from),
        0u64..64,
        (0u64..8).prop_map(|wt| (1u64 << 32) | wt),
        (0u64..8).prop_map(|wt| (u64::from(MAX_FIELD_NUMBER) << 3) | wt),
    ]) {
        let bytes = enc(key);
        let mut slice = &bytes[..];
        let theirs = pe::decode_key(&mut slice);
        let ours = Reader::new(&bytes).read_tag();
        match (&ours, &theirs) {
            (Ok(t), Ok((field, wt))) => {
                prop_assert_eq!(t.field_number(), *field);
                prop_assert_eq!(to_prost_wt(t.wire_type()), *wt);
                prop_assert_eq!(u64::from(t.raw()), key);
            }
            (Err(e), Err(_)) => {
                prop_assert_eq!(e.offset(), 0);
                let expected = if key > u64::from(u32::MAX) {
                    ErrorKind::TagOverflow
                } else if key & 7 > 5 {
                    ErrorKind::InvalidWireType((key & 7) as u8)
                } else {
                    ErrorKind::FieldNumberZero
                };
                prop_assert_eq!(e.kind(), expected);
            }
            _ => prop_assert!(false, "disagree on key {:#x}: ours {:?} prost {:?}", key, ours, theirs),
        }
    }

    /// Walking arbitrary bytes as a message (read tag, skip field) gives the
    /// same fields, positions and accept/reject decision as prost.
    #[test]
    fn skip_field_agrees_with_prost(bytes in message_like_bytes()) {
        let ours = walk_ours(&bytes, 32);
        if ours.iter().any(|s| matches!(s, Step::Err(ErrorKind::DepthLimitExceeded(_)))) {
            return Ok(()); // depth limits differ by design (see the module docs)
        }
        let theirs = walk_prost(&bytes);
        // Compare field sequences; errors compared as "an error happened here".
        let norm = |v: &[Step]| -> Vec<Option<(u32, u8, usize)>> {
            v.iter().map(|s| match s { Step::Field(f, w, p) => Some((*f, *w, *p)), Step::Err(_) => None }).collect()
        };
        prop_assert_eq!(norm(&ours), norm(&theirs), "{:x?}", bytes);
    }

    #[test]
    fn packed_varints_match_prost(values in prop::collection::vec(any_width_u64(), 0..64), field in field_number()) {
        let mut theirs = Vec::new();
        pe::uint64::encode_packed(field, &values, &mut theirs);
        if values.is_empty() {
            prop_assert!(theirs.is_empty());
            return Ok(());
        }
        let mut r = Reader::new(&theirs);
        let t = r.read_tag().unwrap();
        prop_assert_eq!((t.field_number(), t.wire_type()), (field, WireType::Len));
        let base = r.position();
        let len = r.read_len().unwrap();
        let run_base = base + encoded_len_varint(len as u64);
        let run = r.read_bytes(len).unwrap();
        prop_assert!(r.is_empty());
        prop_assert_eq!(count_packed_varints(run), values.len());
        let mut out = vec![0u64; count_packed_varints(run)];
        prop_assert_eq!(decode_packed_varints(run, run_base, &mut out), Ok(values.len()));
        prop_assert_eq!(&out, &values);
        // prost decodes ours back identically.
        let mut back = Vec::new();
        let mut slice = &theirs[..];
        let (f, wt) = pe::decode_key(&mut slice).unwrap();
        prop_assert_eq!(f, field);
        pe::uint64::merge_repeated(wt, &mut back, &mut slice, DecodeContext::default()).unwrap();
        prop_assert_eq!(back, values);
    }
}

#[derive(Debug)]
enum Step {
    Field(u32, u8, usize),
    Err(ErrorKind),
}

fn walk_ours(bytes: &[u8], depth: u32) -> Vec<Step> {
    let mut r = Reader::new(bytes);
    let mut steps = Vec::new();
    while !r.is_empty() {
        let before = r.position();
        let t = match r.read_tag() {
            Ok(t) => t,
            Err(e) => {
                steps.push(Step::Err(e.kind()));
                break;
            }
        };
        if let Err(e) = r.skip_field(t, depth) {
            steps.push(Step::Err(e.kind()));
            break;
        }
        assert!(r.position() > before && r.position() <= bytes.len());
        steps.push(Step::Field(t.field_number(), t.wire_type() as u8, r.position()));
    }
    steps
}

fn walk_prost(bytes: &[u8]) -> Vec<Step> {
    let mut buf = bytes;
    let mut steps = Vec::new();
    while !buf.is_empty() {
        let (field, wt) = match pe::decode_key(&mut buf) {
            Ok(k) => k,
            Err(_) => {
                steps.push(Step::Err(ErrorKind::Truncated));
                break;
            }
        };
        if pe::skip_field(wt, field, &mut buf, DecodeContext::default()).is_err() {
            steps.push(Step::Err(ErrorKind::Truncated));
            break;
        }
        steps.push(Step::Field(field, wt as u8, bytes.len() - buf.len()));
    }
    steps
}

/// Mostly-well-formed messages with random damage: fields of every wire
/// type, nested groups (matched and mismatched), LEN values with lengths
/// that may overrun, and arbitrary noise.
fn message_like_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        (1u32..20, 0u8..=5).prop_map(|(f, w)| ours_field(f, WireType::from_bits(w).unwrap(), &[])),
        any_width_u64().prop_map(enc),
        prop::collection::vec(any::<u8>(), 0..6),
        (0u64..12).prop_map(enc),
        prop::sample::select(vec![0x0bu8, 0x0c, 0x13, 0x14, 0x0f, 0x00, 0x80]).prop_map(|b| vec![b]),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

#[cfg(feature = "alloc")]
mod writer {
    use super::*;
    use pbwire::Writer;

    /// A message tree: the Writer's one-pass output (begin_len/end_len)
    /// must equal prost's inside-out length-delimited encoding.
    #[derive(Debug, Clone)]
    enum Node {
        Varint(u32, u64),
        Bytes(u32, Vec<u8>),
        Msg(u32, Vec<Node>),
    }

    fn node() -> impl Strategy<Value = Node> {
        let leaf = prop_oneof![
            (field_number(), any_width_u64()).prop_map(|(f, v)| Node::Varint(f, v)),
            // Sizes straddling the 1/2/3-byte length prefixes.
            (field_number(), prop_oneof![0usize..4, 120usize..136, 16_370usize..16_400])
                .prop_map(|(f, n)| Node::Bytes(f, (0..n).map(|i| i as u8).collect())),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            (field_number(), prop::collection::vec(inner, 0..6)).prop_map(|(f, v)| Node::Msg(f, v))
        })
    }

    fn write_ours(w: &mut Writer, n: &Node) {
        match n {
            Node::Varint(f, v) => {
                w.put_tag(Tag::new(*f, WireType::Varint).unwrap());
                w.put_varint(*v);
            }
            Node::Bytes(f, b) => {
                w.put_tag(Tag::new(*f, WireType::Len).unwrap());
                w.put_len_bytes(b);
            }
            Node::Msg(f, children) => {
                w.put_encoded_tag(&Tag::new(*f, WireType::Len).unwrap().encode());
                let mark = w.begin_len();
                for c in children {
                    write_ours(w, c);
                }
                w.end_len(mark);
            }
        }
    }

    fn write_prost(out: &mut Vec<u8>, n: &Node) {
        match n {
            Node::Varint(f, v) => pe::uint64::encode(*f, v, out),
            Node::Bytes(f, b) => pe::bytes::encode(*f, b, out),
            Node::Msg(f, children) => {
                let mut body = Vec::new();
                for c in children {
                    write_prost(&mut body, c);
                }
                pe::bytes::encode(*f, &body, out);
            }
        }
    }

    proptest! {
        #![proptest_config(if cfg!(miri) { config() } else { ProptestConfig::with_cases(128) })]

        #[test]
        fn writer_len_nesting_matches_prost(nodes in prop::collection::vec(node(), 0..4)) {
            let mut w = Writer::new();
            let mut theirs = Vec::new();
            for n in &nodes {
                write_ours(&mut w, n);
                write_prost(&mut theirs, n);
            }
            prop_assert!(w.as_slice() == theirs.as_slice(), "outputs differ ({} vs {} bytes)", w.len(), theirs.len());
            // And it all walks cleanly.
            let steps = walk_ours(w.as_slice(), 8);
            prop_assert!(steps.iter().all(|s| matches!(s, Step::Field(..))));
        }

        #[test]
        fn writer_packed_matches_prost(values in prop::collection::vec(any::<i64>(), 1..300), field in field_number()) {
            let mut theirs = Vec::new();
            pe::int64::encode_packed(field, &values, &mut theirs);
            let mut w = Writer::new();
            w.put_tag(Tag::new(field, WireType::Len).unwrap());
            let mark = w.begin_len();
            for &v in &values {
                w.put_varint(v as u64);
            }
            w.end_len(mark);
            prop_assert_eq!(w.as_slice(), &theirs[..]);

            let mut theirs = Vec::new();
            pe::sint32::encode_packed(field, &values.iter().map(|&v| v as i32).collect::<Vec<_>>(), &mut theirs);
            let mut w = Writer::new();
            w.put_tag(Tag::new(field, WireType::Len).unwrap());
            let mark = w.begin_len();
            for &v in &values {
                w.put_varint(u64::from(encode_zigzag32(v as i32)));
            }
            w.end_len(mark);
            prop_assert_eq!(w.as_slice(), &theirs[..]);
        }
    }
}
