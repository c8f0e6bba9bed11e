//! Integers as the parser reads them: a plain literal in one pass, its
//! wire form, and packed runs of them in compact text.

use pbwire::varint::int32_to_varint;
use pbwire::zigzag::{encode_zigzag32, encode_zigzag64};
use pbwire::{EncodedTag, Writer};

use crate::plan::Kind;

/// A plain integer literal at the start of `s` (`-?(0|[1-9][0-9]*)` with
/// at most 18 digits, not followed by a fraction, an exponent or a
/// letter): its value and length. `None` for anything else, which the
/// general path ([`int_literal`](crate::json::number::int_literal)) reads
/// or refuses.
#[inline]
pub fn plain_int(s: &[u8]) -> Option<(i64, usize)> {
    let neg = s.first() == Some(&b'-');
    let start = usize::from(neg);
    let mut i = start;
    let mut v = 0u64;
    while let Some(&b) = s.get(i) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    let n = i - start;
    if n == 0 || n > 18 || (n > 1 && s[start] == b'0') {
        return None;
    }
    match s.get(i) {
        // Compact text's usual followers first.
        None | Some(b',' | b'}') => {}
        Some(&b) if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-') => return None,
        Some(_) => {}
    }
    let v = v as i64;
    Some((if neg { -v } else { v }, i))
}

/// An integer of `kind`, in range, as its wire form.
pub fn put_int(w: &mut Writer, kind: Kind, v: i128) {
    match kind {
        Kind::Int32 => w.put_varint(int32_to_varint(v as i32)),
        Kind::SInt32 => w.put_varint(u64::from(encode_zigzag32(v as i32))),
        Kind::SInt64 => w.put_varint(encode_zigzag64(v as i64)),
        Kind::Fixed32 | Kind::SFixed32 => w.put_fixed32(v as u32),
        Kind::Fixed64 | Kind::SFixed64 => w.put_fixed64(v as u64),
        _ => w.put_varint(v as u64),
    }
}

/// Whether `v` (a plain literal's value) is in the range of `kind`:
/// [`int_range`] in 64 bits.
#[inline(always)]
pub fn int_fits(kind: Kind, v: i64) -> bool {
    match kind {
        Kind::Int32 | Kind::SInt32 | Kind::SFixed32 => i64::from(v as i32) == v,
        Kind::UInt32 | Kind::Fixed32 => i64::from(v as u32) == v,
        Kind::Int64 | Kind::SInt64 | Kind::SFixed64 => true,
        _ => v >= 0,
    }
}

/// The range of an integer kind.
pub fn int_range(kind: Kind) -> (i128, i128) {
    match kind {
        Kind::Int32 | Kind::SInt32 | Kind::SFixed32 => (i128::from(i32::MIN), i128::from(i32::MAX)),
        Kind::UInt32 | Kind::Fixed32 => (0, i128::from(u32::MAX)),
        Kind::Int64 | Kind::SInt64 | Kind::SFixed64 => (i128::from(i64::MIN), i128::from(i64::MAX)),
        _ => (0, i128::from(u64::MAX)),
    }
}

/// Where an [`int_run`] stopped.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RunEnd {
    /// After the array's `]`: the array is read.
    Closed,
    /// Right after an element, at whatever follows it that is not `,` and
    /// a next literal, nor `]`: for the general loop's separator.
    AfterElement,
    /// At an element the run does not read (whitespace before it, a
    /// string, a fraction or exponent, out of range): for the general
    /// element path.
    AtElement,
}

/// A run of a repeated integer field's elements in compact text, from
/// `*pos` (an element's first byte): elements that are plain in-range
/// literals of `kind`, separated by `,` alone, each written as read
/// (after `tag` when the field is not packed). Returns how many it wrote
/// and where it stopped, `*pos` moved past what it read.
///
/// Why: the general loop costs ~150 instructions an element (separator,
/// whitespace and `null` checks, the kind's dispatch); this loop ~35. The
/// kind's wire form is chosen once a run.
pub fn int_run(src: &[u8], pos: &mut usize, kind: Kind, tag: Option<&EncodedTag>, w: &mut Writer) -> (usize, RunEnd) {
    let (lo, hi) = int_range(kind);
    // A plain literal has at most 18 digits: i64 holds it and the bounds.
    let (lo, hi) = (lo.max(i128::from(i64::MIN)) as i64, hi.min(i128::from(i64::MAX)) as i64);
    match kind {
        Kind::SInt32 => run(src, pos, lo, hi, tag, w, |w, v| w.put_varint(u64::from(encode_zigzag32(v as i32)))),
        Kind::SInt64 => run(src, pos, lo, hi, tag, w, |w, v| w.put_varint(encode_zigzag64(v))),
        Kind::Fixed32 | Kind::SFixed32 => run(src, pos, lo, hi, tag, w, |w, v| w.put_fixed32(v as u32)),
        Kind::Fixed64 | Kind::SFixed64 => run(src, pos, lo, hi, tag, w, |w, v| w.put_fixed64(v as u64)),
        // `int32` sign-extended to 64 bits, as `put_int` writes it.
        _ => run(src, pos, lo, hi, tag, w, |w, v| w.put_varint(v as u64)),
    }
}

/// [`int_run`] with the wire form `put`.
#[inline(always)]
fn run(
    src: &[u8],
    pos: &mut usize,
    lo: i64,
    hi: i64,
    tag: Option<&EncodedTag>,
    w: &mut Writer,
    put: impl Fn(&mut Writer, i64),
) -> (usize, RunEnd) {
    let (mut p, mut n) = (*pos, 0);
    let end = loop {
        let Some((v, len)) = src.get(p..).and_then(plain_int) else { break RunEnd::AtElement };
        if v < lo || v > hi {
            break RunEnd::AtElement;
        }
        if let Some(tag) = tag {
            w.put_encoded_tag(tag);
        }
        put(w, v);
        n += 1;
        p += len;
        match src.get(p) {
            Some(b',') if src.get(p + 1).is_some_and(|&b| b == b'-' || b.is_ascii_digit()) => p += 1,
            Some(b']') => break RunEnd::Closed,
            _ => break RunEnd::AfterElement,
        }
    };
    *pos = if end == RunEnd::Closed { p + 1 } else { p };
    (n, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The run over `text` (from its start) for `kind`: count, end, the
    /// position after, and the bytes written.
    fn run_of(text: &str, kind: Kind) -> (usize, RunEnd, usize, Vec<u8>) {
        let (mut w, mut pos) = (Writer::new(), 0);
        let (n, end) = int_run(text.as_bytes(), &mut pos, kind, None, &mut w);
        (n, end, pos, w.into_vec())
    }

    #[test]
    fn runs_stop_where_the_general_loop_takes_over() {
        assert_eq!(run_of("1,2,300]", Kind::Int32), (3, RunEnd::Closed, 8, vec![1, 2, 0xac, 2]));
        assert_eq!(run_of("1, 2]", Kind::Int32), (1, RunEnd::AfterElement, 1, vec![1]));
        assert_eq!(run_of("1,]", Kind::Int32), (1, RunEnd::AfterElement, 1, vec![1]));
        assert_eq!(run_of("1,\"2\"]", Kind::Int32), (1, RunEnd::AfterElement, 1, vec![1]));
        assert_eq!(run_of("1,2.5]", Kind::Int32), (1, RunEnd::AtElement, 2, vec![1]));
        assert_eq!(run_of("1,1e2]", Kind::Int32), (1, RunEnd::AtElement, 2, vec![1]));
        assert_eq!(run_of("1,01]", Kind::Int32), (1, RunEnd::AtElement, 2, vec![1]));
        assert_eq!(run_of(" 1]", Kind::Int32), (0, RunEnd::AtElement, 0, vec![]));
        assert_eq!(run_of("7", Kind::Int32), (1, RunEnd::AfterElement, 1, vec![7]));
        assert_eq!(run_of("", Kind::Int32), (0, RunEnd::AtElement, 0, vec![]));
    }

    #[test]
    fn runs_check_the_kinds_range_and_write_its_wire_form() {
        assert_eq!(run_of("-1]", Kind::Int32), (1, RunEnd::Closed, 3, vec![0xff; 9].into_iter().chain([1]).collect()));
        assert_eq!(run_of("-1]", Kind::UInt32).0, 0);
        assert_eq!(run_of("4294967296]", Kind::UInt32).0, 0);
        assert_eq!(run_of("4294967295]", Kind::Fixed32).3, vec![0xff; 4]);
        assert_eq!(run_of("2147483648]", Kind::Int32).0, 0);
        assert_eq!(run_of("-2147483649]", Kind::SFixed32).0, 0);
        assert_eq!(run_of("-1,1]", Kind::SInt32).3, vec![1, 2]);
        assert_eq!(run_of("-2]", Kind::SInt64).3, vec![3]);
        assert_eq!(run_of("-1]", Kind::SFixed64).3, vec![0xff; 8]);
        assert_eq!(run_of("999999999999999999]", Kind::UInt64).0, 1);
        assert_eq!(run_of("-5]", Kind::UInt64).0, 0);
    }

    #[test]
    fn unpacked_runs_tag_every_element() {
        let tag = pbwire::Tag::new(13, pbwire::WireType::Varint).unwrap().encode();
        let (mut w, mut pos) = (Writer::new(), 0);
        assert_eq!(int_run(b"1,-1]", &mut pos, Kind::SInt32, Some(&tag), &mut w), (2, RunEnd::Closed));
        assert_eq!(w.into_vec(), vec![13 << 3, 2, 13 << 3, 1]);
    }
}
