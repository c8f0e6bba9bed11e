//! `pbwire::varint::decode_varint` against `prost::encoding::decode_varint`
//! on arbitrary bytes (same value and length, or both reject), skip_varint
//! agreeing with decode, the Reader agreeing with the free function, and
//! re-encoding identity; tags against `prost::encoding::decode_key`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pbwire::varint::{MAX_VARINT_LEN, decode_varint, encode_varint, encoded_len_varint, skip_varint};
use pbwire::{ErrorKind, Reader};

fuzz_target!(|data: &[u8]| {
    // Every suffix start, so the unrolled and the bounds-checked paths both run.
    for start in 0..data.len().min(16) {
        let buf = &data[start..];
        let ours = decode_varint(buf);
        let mut slice = buf;
        let theirs = prost::encoding::decode_varint(&mut slice).map(|v| (v, buf.len() - slice.len()));
        match (&ours, &theirs) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(e), Err(_)) => {
                assert_eq!(e.offset(), 0);
                assert!(matches!(e.kind(), ErrorKind::Truncated | ErrorKind::VarintOverflow));
                if buf.len() < MAX_VARINT_LEN && buf.iter().all(|&b| b >= 0x80) {
                    assert_eq!(e.kind(), ErrorKind::Truncated);
                } else {
                    assert_eq!(e.kind(), ErrorKind::VarintOverflow);
                }
            }
            _ => panic!("disagree on {buf:x?}: ours {ours:?} prost {theirs:?}"),
        }
        assert_eq!(skip_varint(buf), ours.map(|(_, n)| n));
        let mut r = Reader::with_offset(buf, start);
        match (r.read_varint(), ours) {
            (Ok(v), Ok((w, n))) => {
                assert_eq!(v, w);
                assert_eq!(r.position(), start + n);
            }
            (Err(e), Err(f)) => assert_eq!((e.kind(), e.offset()), (f.kind(), start)),
            (a, b) => panic!("reader {a:?} vs free fn {b:?}"),
        }
        if let Ok((v, n)) = ours {
            assert!((1..=MAX_VARINT_LEN).contains(&n));
            let mut out = [0u8; MAX_VARINT_LEN];
            let len = encode_varint(v, &mut out);
            assert_eq!(len, encoded_len_varint(v));
            assert!(len <= n);
            let mut theirs = Vec::new();
            prost::encoding::encode_varint(v, &mut theirs);
            assert_eq!(&out[..len], &theirs[..]);
            assert_eq!(decode_varint(&out[..len]), Ok((v, len)));
            // Canonical input re-encodes to itself.
            if len == n {
                assert_eq!(&out[..len], &buf[..n]);
            }
        }
        // Tags.
        let ours = Reader::new(buf).read_tag();
        let mut slice = buf;
        let theirs = prost::encoding::decode_key(&mut slice);
        match (ours, theirs) {
            (Ok(t), Ok((f, w))) => {
                assert_eq!(t.field_number(), f);
                assert_eq!(t.wire_type() as u8, w as u8);
            }
            (Err(_), Err(_)) => {}
            // Tags are 32-bit: protobuf refuses a tag varint over 5 bytes
            // even when its value fits; prost's decode_key takes it.
            (Err(e), Ok(_)) if e.kind() == ErrorKind::TagTooLong => {
                assert!(decode_varint(buf).is_ok_and(|(_, n)| n > 5));
            }
            (a, b) => panic!("tag disagree on {buf:x?}: ours {a:?} prost {b:?}"),
        }
    }
});
