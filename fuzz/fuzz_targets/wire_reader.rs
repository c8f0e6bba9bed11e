//! Walks arbitrary bytes as a protobuf message with `pbwire::Reader`: read a
//! tag, skip its field (groups to a depth limit), descend into LEN values as
//! nested messages. Must never panic; positions only move forward and never
//! past the end; errors name an offset inside the buffer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pbwire::{Reader, WireType};

const DEPTH: u32 = 64;

fn walk(mut r: Reader<'_>, end: usize, nest: u32) {
    while !r.is_empty() {
        let before = r.position();
        let tag = match r.read_tag() {
            Ok(t) => t,
            Err(e) => {
                assert!(e.offset() >= before && e.offset() <= end, "{e}");
                // (Where the cursor stands after a failed read_tag is not
                // specified: past the varint when only validation failed.)
                assert!(r.position() >= before && r.position() <= end);
                return;
            }
        };
        assert!(r.position() > before && r.position() <= end);
        let after_tag = r.position();
        // For LEN fields, also try the value as a nested message.
        if tag.wire_type() == WireType::Len && nest < 8 {
            let mut probe = r.clone();
            if let Ok(inner) = probe.read_len_reader() {
                let inner_end = inner.position() + inner.remaining();
                assert!(inner.position() >= after_tag && inner_end == probe.position() && inner_end <= end);
                walk(inner, inner_end, nest + 1);
            }
        }
        match r.skip_field(tag, DEPTH) {
            Ok(()) => assert!(r.position() >= after_tag && r.position() <= end),
            Err(e) => {
                assert!(e.offset() >= before && e.offset() <= end, "{e} (field at {before}, end {end})");
                return;
            }
        }
    }
    assert_eq!(r.position(), end);
}

fuzz_target!(|data: &[u8]| {
    walk(Reader::new(data), data.len(), 0);
    // The same walk at a base offset: every offset shifts by exactly the base.
    let base = 1_000_000;
    let mut a = Reader::new(data);
    let mut b = Reader::with_offset(data, base);
    loop {
        let (ta, tb) = (a.read_tag(), b.read_tag());
        match (ta, tb) {
            (Ok(x), Ok(y)) => {
                assert_eq!(x, y);
                let (sa, sb) = (a.skip_field(x, DEPTH), b.skip_field(y, DEPTH));
                match (sa, sb) {
                    (Ok(()), Ok(())) => assert_eq!(a.position() + base, b.position()),
                    (Err(x), Err(y)) => {
                        assert_eq!((x.kind(), x.offset() + base), (y.kind(), y.offset()));
                        break;
                    }
                    _ => panic!("with_offset changed the outcome"),
                }
            }
            (Err(x), Err(y)) => {
                assert_eq!((x.kind(), x.offset() + base), (y.kind(), y.offset()));
                break;
            }
            _ => panic!("with_offset changed the outcome"),
        }
        if a.is_empty() {
            assert!(b.is_empty());
            break;
        }
    }
});
