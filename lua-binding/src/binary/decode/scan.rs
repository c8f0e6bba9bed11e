//! The scanning layer: reading varints, tags and runs of one tag from the
//! input without building anything. Every other decode module reads the
//! wire through these (or through pbwire's `Reader`).

use super::*;

/// How many hash slots to give a new message table. A short body is
/// scanned for its field count (tags and lengths only, ~10 instructions a
/// field): a small message then gets the hash part it fills, as a decoder
/// that knows its map sizes (msgpack) does, not one sized for every
/// declared field. A long body gets min(declared fields, body / 2), since
/// a field takes at least two bytes.
#[inline]
pub(in crate::binary::decode) fn presize(plan: &MessagePlan, r: &Reader<'_>) -> usize {
    let cap = plan.fields.len().min(MAX_PRESIZE);
    let estimate = cap.min(r.remaining() / 2);
    if r.remaining() > SCAN_PRESIZE {
        return estimate;
    }
    // On the bytes, not through `Reader`: the count is only a size hint,
    // so the scan needs no error values (the decode reports bad input).
    let b = r.rest();
    let (mut p, mut n) = (0, 0);
    while n < cap && p < b.len() {
        let wt = b[p] & 7;
        let Some((tag, q)) = scan_varint(b, p) else { break };
        match wt {
            // The end of this group's body.
            4 => break,
            3 => return estimate,
            _ if tag >> 3 == 0 => break,
            _ => {}
        }
        let Some(e) = scan_value(b, q, wt) else { break };
        p = e;
        n += 1;
    }
    n
}

/// The varint at `b[p..]` and the position after it, for the size scans:
/// one-byte values inline, longer ones through pbwire out of line.
#[inline(always)]
pub(in crate::binary::decode) fn scan_varint(b: &[u8], p: usize) -> Option<(u64, usize)> {
    match b.get(p) {
        Some(&x) if x < 0x80 => Some((u64::from(x), p + 1)),
        Some(_) => scan_varint_long(b, p),
        None => None,
    }
}

#[inline(never)]
pub(in crate::binary::decode) fn scan_varint_long(b: &[u8], p: usize) -> Option<(u64, usize)> {
    let (v, n) = pbwire::varint::decode_varint(b.get(p..)?).ok()?;
    Some((v, p + n))
}

/// The position after the varint at `b[p..]`, for the size scans, which
/// need its end but not its value: one-byte values inline, longer ones by
/// the first byte below 0x80 among the next 8 (then 2), without pbwire's
/// decoder (callgrind: 24 calls a BenchPayload mid decode, ~60
/// instructions each, for the 2–10 byte `values`). It does not reject an
/// overlong 10th byte: the decode that follows reports that.
#[inline(always)]
pub(in crate::binary::decode) fn skip_varint(b: &[u8], p: usize) -> Option<usize> {
    match b.get(p) {
        Some(&x) if x < 0x80 => Some(p + 1),
        Some(_) => skip_varint_long(b, p),
        None => None,
    }
}

#[inline]
pub(in crate::binary::decode) fn skip_varint_long(b: &[u8], p: usize) -> Option<usize> {
    let rest = b.get(p..)?;
    if let Some(w) = rest.first_chunk::<8>() {
        let ends = !u64::from_le_bytes(*w) & 0x8080_8080_8080_8080;
        if ends != 0 {
            return Some(p + (ends.trailing_zeros() / 8) as usize + 1);
        }
        let i = rest[8..].iter().take(2).position(|&x| x < 0x80)?;
        return Some(p + 9 + i);
    }
    let i = rest.iter().take(10).position(|&x| x < 0x80)?;
    Some(p + i + 1)
}

/// The position after the value of wire type `wt` (VARINT, I64, LEN or
/// I32) starting at `b[p..]`; `None` for anything else or a value that
/// does not fit.
#[inline(always)]
pub(in crate::binary::decode) fn scan_value(b: &[u8], p: usize, wt: u8) -> Option<usize> {
    let end = match wt {
        0 => return skip_varint(b, p),
        1 => p + 8,
        5 => p + 4,
        2 => {
            let (len, q) = scan_varint(b, p)?;
            q.checked_add(usize::try_from(len).ok()?)?
        }
        _ => return None,
    };
    (end <= b.len()).then_some(end)
}

/// `r.read_varint()` with the one-byte case inline: values below 128 are
/// most of what a decode reads, and LLVM did not inline the general
/// decoder into the walk (callgrind: 17 % of Person 1KB decode in the
/// call). pbwire keeps its `read_varint` whole, which is what its own
/// callers' tight loops want (iai).
#[inline(always)]
pub(in crate::binary::decode) fn varint(r: &mut Reader<'_>) -> pbwire::Result<u64> {
    if let Some(&b) = r.rest().first()
        && b < 0x80
        && r.advance(1).is_ok()
    {
        return Ok(u64::from(b));
    }
    varint_long(r)
}

/// Out of line, so that the walk's loops stay small (measured: inlining
/// pbwire's whole decoder here costs up to 8 % on Person 100KB decode).
#[inline(never)]
pub(in crate::binary::decode) fn varint_long(r: &mut Reader<'_>) -> pbwire::Result<u64> {
    // Two bytes (values below 2^14) without pbwire's general decoder,
    // which near the end of the input (fewer than 10 bytes left) takes
    // its slow byte-by-byte path: the tail of every message.
    if let [b0, b1, ..] = *r.rest()
        && b1 < 0x80
        && r.advance(2).is_ok()
    {
        return Ok(u64::from(b0 & 0x7f) | u64::from(b1) << 7);
    }
    varint_general(r)
}

/// The rest of [`varint_long`], apart so that its two-byte path saves and
/// restores no registers. With 8 bytes of input left, a varint is decoded
/// from one word load without a branch per byte: the first byte below
/// 0x80 ends it, and the 7-bit groups of the bytes up to it are joined in
/// three mask-and-shift steps; a 9- or 10-byte one (a negative `int32`)
/// adds its last two bytes. (pbwire's decoder goes byte by byte: ~70
/// instructions for the 3-byte `values` of BenchPayload mid, 17 per
/// decode.) What is left — near the end of the input, or an overlong
/// 10th byte — goes to pbwire, which also reports the errors.
#[inline(never)]
pub(in crate::binary::decode) fn varint_general(r: &mut Reader<'_>) -> pbwire::Result<u64> {
    let rest = r.rest();
    if let Some(w) = rest.first_chunk::<8>() {
        let w = u64::from_le_bytes(*w);
        let ends = !w & 0x8080_8080_8080_8080;
        if ends != 0 {
            // The bytes up to and including the first end byte.
            let len = ends.trailing_zeros() as usize / 8 + 1;
            let x = join_groups(w & (ends ^ (ends - 1)));
            if r.advance(len).is_ok() {
                return Ok(x);
            }
        } else if let Some(&[b8, b9]) = rest.get(8..10) {
            let x = join_groups(w);
            if b8 < 0x80 {
                if r.advance(9).is_ok() {
                    return Ok(x | u64::from(b8) << 56);
                }
            } else if b9 <= 1 && r.advance(10).is_ok() {
                return Ok(x | u64::from(b8 & 0x7f) << 56 | u64::from(b9) << 63);
            }
        }
    }
    varint_pbwire(r)
}

/// The 7-bit groups of the 8 bytes of `w` (little-endian), continuation
/// bits dropped, joined into a 56-bit value.
#[inline(always)]
pub(in crate::binary::decode) fn join_groups(w: u64) -> u64 {
    let mut x = w & 0x7f7f_7f7f_7f7f_7f7f;
    x = (x & 0x007f_007f_007f_007f) | (x & 0x7f00_7f00_7f00_7f00) >> 1;
    x = (x & 0x0000_3fff_0000_3fff) | (x & 0x3fff_0000_3fff_0000) >> 2;
    (x & 0x0000_0000_0fff_ffff) | (x & 0x0fff_ffff_0000_0000) >> 4
}

/// pbwire's decoder, apart so that [`varint_general`]'s word path is a
/// leaf that saves no registers (a tail call here).
#[inline(never)]
pub(in crate::binary::decode) fn varint_pbwire(r: &mut Reader<'_>) -> pbwire::Result<u64> {
    r.read_varint()
}

/// The tag that continues a run of a repeated field whose tag is `tag`,
/// as its length (1 or 2 bytes) and its bytes (little-endian); length 0
/// when no tag continues it (a closed enum checks every value, and longer
/// tags are rare).
#[inline(always)]
pub(in crate::binary::decode) fn run_tag(tag: Tag, closed: bool) -> (usize, u16) {
    if closed { (0, 0) } else { short_tag(tag.raw()) }
}

/// A one- or two-byte tag's length and bytes (little-endian), as
/// [`run_continues`] compares them; `(0, 0)` for a longer tag.
#[inline(always)]
fn short_tag(raw: u32) -> (usize, u16) {
    match raw {
        0..0x80 => (1, raw as u16),
        0x80..0x4000 => (2, (raw as u16 & 0x7f | 0x80) | ((raw >> 7) as u16) << 8),
        _ => (0, 0),
    }
}

/// Whether the next bytes of `r` are the run's tag ([`run_tag`]).
#[inline(always)]
pub(in crate::binary::decode) fn run_continues(r: &Reader<'_>, next_len: usize, next: u16) -> bool {
    let (rest, tag) = (r.rest(), next.to_le_bytes());
    match next_len {
        1 => eat_tag::<1>(rest, tag).is_some(),
        2 => eat_tag::<2>(rest, tag).is_some(),
        _ => false,
    }
}

/// The one loop that reads a run of varints, wherever the values go: each
/// value is handed to `sink`, which returns whether to go on. `TAG` is the
/// width of the tag before each value: 0 for a packed run (the values back
/// to back, to the end of `b`), 1 or 2 for an unpacked run, which goes on
/// while the next bytes are `tag` (as encoded, see [`eat_tag`]). Stops
/// before a value whose tag differs, before a bad or cut varint (its tag
/// not taken: the caller's element loop reports it), and after a value
/// for which `sink` returns false. Returns the bytes not read.
///
/// Values are read by [`slice_varint`] (1- to 3-byte values inline), the
/// position kept in a register; the callers' sinks push to the Lua stack
/// and `rawseti` (`DecodeCtx::varints_into`), push only (the tree's packed
/// runs) or fill a buffer (`DecodeCtx::fresh_varint_run`).
#[inline(always)]
pub(in crate::binary::decode) fn varint_run<const TAG: usize>(
    b: &[u8],
    tag: [u8; 2],
    mut sink: impl FnMut(u64) -> bool,
) -> &[u8] {
    let mut rest = b;
    loop {
        if TAG == 0 && rest.is_empty() {
            break;
        }
        let Some(body) = eat_tag::<TAG>(rest, tag) else { break };
        let Some((v, tail)) = slice_varint(body) else { break };
        rest = tail;
        if !sink(v) {
            break;
        }
    }
    rest
}

/// `b` after its first `TAG` bytes if they are `tag`'s (a tag as encoded,
/// little-endian: [`short_tag`]'s bytes), else `None`; `b` itself for
/// `TAG` 0.
#[inline(always)]
pub(in crate::binary::decode) fn eat_tag<const TAG: usize>(b: &[u8], tag: [u8; 2]) -> Option<&[u8]> {
    match (TAG, b) {
        (0, _) => Some(b),
        (1, [t0, tail @ ..]) if *t0 == tag[0] => Some(tail),
        (2, [t0, t1, tail @ ..]) if [*t0, *t1] == tag => Some(tail),
        _ => None,
    }
}

/// Whether `r` continues with another element under the tag `raw` (its
/// bytes as encoded), stepping over the tag if so: [`run_continues`] for
/// one- and two-byte tags, a compare of the encoded tag beyond.
#[cfg(feature = "luajit")]
#[inline(always)]
pub(in crate::binary::decode) fn same_tag_next(r: &mut Reader<'_>, raw: u32) -> bool {
    let (len, next) = short_tag(raw);
    let n = if len != 0 {
        if run_continues(r, len, next) { len } else { 0 }
    } else {
        match pbwire::Tag::from_varint(u64::from(raw)).map(|t| t.encode()) {
            Ok(e) if r.rest().starts_with(e.as_bytes()) => e.as_bytes().len(),
            _ => 0,
        }
    };
    n != 0 && r.advance(n).is_ok()
}

/// How many values the packed run `run` of `f` holds (a fixed-width
/// kind's by its length; varints counted), to pre-size its array.
#[inline(always)]
pub(in crate::binary::decode) fn packed_count(f: &FieldPlan, run: &[u8]) -> usize {
    match f.kind.wire_type() {
        WireType::I32 => run.len() / 4,
        WireType::I64 => run.len() / 8,
        _ => packed::count_packed_varints(run),
    }
}

/// The varint at the start of `b` and the bytes after it, `None` when it
/// is bad or cut: 1- to 3-byte values (below 2^21) inline, longer ones
/// through `varint_general`. For the loops that keep their position in a
/// slice ([`varint_run`], the constructor program's steps).
#[inline(always)]
pub(in crate::binary::decode) fn slice_varint(b: &[u8]) -> Option<(u64, &[u8])> {
    Some(match *b {
        [b0, ref tail @ ..] if b0 < 0x80 => (u64::from(b0), tail),
        [b0, b1, ref tail @ ..] if b1 < 0x80 => (u64::from(b0 & 0x7f) | u64::from(b1) << 7, tail),
        [b0, b1, b2, ref tail @ ..] if b2 < 0x80 => {
            (u64::from(b0 & 0x7f) | u64::from(b1 & 0x7f) << 7 | u64::from(b2) << 14, tail)
        }
        _ => {
            let mut long = Reader::new(b);
            let v = varint_general(&mut long).ok()?;
            (v, long.rest())
        }
    })
}

/// Elements an unpacked repeated field's array will get from the run of
/// `tag` starting here (`r` is at the first value): the first value and
/// every value right after it under the same tag, counted from tags and
/// lengths only, so the array is created at its size and never regrown.
/// Encoders write a field's elements together; later ones, if any, grow
/// the array as usual. Stops early at anything unexpected (the decode
/// reports it).
#[inline(never)]
pub(in crate::binary::decode) fn count_run(r: &Reader<'_>, tag: Tag) -> usize {
    // On the bytes, like `presize`: the next tag is compared as encoded.
    let b = r.rest();
    let raw = tag.raw();
    let wt = raw as u8 & 7;
    // One loop per tag length: a two-byte tag (field numbers 16–2047)
    // compares two bytes, not a `starts_with` (a memcmp call per element:
    // BenchPayload's `items`). The one- and two-byte encodings are spelled
    // out: `Tag::encode` cost ~35 instructions of byte shuffling per call
    // (a third of a one-element run's count).
    if raw < 0x80 {
        let t0 = raw as u8;
        run_of(b, wt, |p| (b.get(p) == Some(&t0)).then_some(p + 1))
    } else if raw < 0x4000 {
        let (t0, t1) = (raw as u8 | 0x80, (raw >> 7) as u8);
        run_of(b, wt, |p| (b.get(p) == Some(&t0) && b.get(p + 1) == Some(&t1)).then_some(p + 2))
    } else {
        let enc = tag.encode();
        let enc = enc.as_bytes();
        run_of(b, wt, |p| b[p..].starts_with(enc).then_some(p + enc.len()))
    }
}

/// [`run_of`] for LEN values: the length read inline when it is one byte.
#[inline(always)]
pub(in crate::binary::decode) fn len_run_of(b: &[u8], next_tag: impl Fn(usize) -> Option<usize>) -> usize {
    let (mut p, mut n) = (0, 0);
    loop {
        let e = match b.get(p) {
            // `p` indexes a slice, so `p + 1 + 127` cannot overflow: no
            // checked add on the common path (2 of its ~17 instructions a
            // value; Person 10KB's 250 `emails`).
            Some(&x) if x < 0x80 => p + 1 + usize::from(x),
            _ => match scan_varint(b, p).and_then(|(l, q)| q.checked_add(usize::try_from(l).ok()?)) {
                Some(e) => e,
                None => return n.max(1),
            },
        };
        if e > b.len() {
            return n.max(1);
        }
        n += 1;
        match next_tag(e) {
            Some(q) => p = q,
            None => return n,
        }
    }
}

/// [`count_run`]'s loop: values of wire type `wt` from `b[0..]`, each
/// followed by the tag that `next_tag` recognises at a position (giving the
/// position after it).
#[inline(always)]
pub(in crate::binary::decode) fn run_of(b: &[u8], wt: u8, next_tag: impl Fn(usize) -> Option<usize>) -> usize {
    // LEN (strings, bytes, sub-messages), the commonest run, without the
    // per-value wire-type dispatch of `scan_value`.
    // The other wire types, likewise each with its own loop (callgrind:
    // the dispatch per value was ~8 of the ~30 instructions a value of
    // BenchPayload mid's 24 `values`).
    match wt {
        2 => len_run_of(b, next_tag),
        0 => value_run_of(next_tag, |p| skip_varint(b, p)),
        1 => value_run_of(next_tag, |p| (p + 8 <= b.len()).then_some(p + 8)),
        5 => value_run_of(next_tag, |p| (p + 4 <= b.len()).then_some(p + 4)),
        _ => value_run_of(next_tag, |p| scan_value(b, p, wt)),
    }
}

/// [`run_of`] for one wire type: `value_end` gives the position after the
/// value at a position (`None`: it does not fit).
#[inline(always)]
pub(in crate::binary::decode) fn value_run_of(
    next_tag: impl Fn(usize) -> Option<usize>,
    value_end: impl Fn(usize) -> Option<usize>,
) -> usize {
    let (mut p, mut n) = (0, 0);
    loop {
        let Some(e) = value_end(p) else { return n.max(1) };
        n += 1;
        match next_tag(e) {
            Some(q) => p = q,
            None => return n,
        }
    }
}

/// Encoded length of a tag (to point errors at the tag's first byte).
pub(in crate::binary::decode) fn tag_len(tag: Tag) -> usize {
    pbwire::varint::encoded_len_varint(tag.raw() as u64)
}
