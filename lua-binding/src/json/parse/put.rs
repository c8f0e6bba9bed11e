//! The parser's smallest writes done in place: a tag with a one-byte
//! varint, or with a string of under eight bytes, written with one
//! capacity check and word stores. Why: the writer's general calls copy
//! through out-of-line `extend_from_slice`s (a call and a `memcpy` each),
//! which cost more than the rest of a short member's work.

use pbwire::{EncodedTag, Writer};

/// The tag's bytes as a little-endian word (zero above them) and how
/// many count (at most 5).
#[inline(always)]
fn tag_word(tag: &EncodedTag) -> (u64, usize) {
    let (bytes, len) = tag.parts();
    let mut word = [0u8; 8];
    word[..5].copy_from_slice(bytes);
    (u64::from_le_bytes(word), len)
}

/// Append `tag`, then the string of `n` bytes (under eight) whose bytes
/// are `text` (zero above them) with its length: the output of
/// [`Writer::put_tagged_len_bytes`].
#[inline(always)]
pub fn put_tagged_short(w: &mut Writer, tag: &EncodedTag, text: u64, n: usize) {
    debug_assert!(n < 8);
    let (t, tl) = tag_word(tag);
    // The tag (up to 5 bytes) and the length (one byte) fit a word.
    let head = t | (n as u64) << (8 * tl);
    let v = w.as_mut_vec();
    v.reserve(16);
    let len = v.len();
    // SAFETY: 16 bytes of capacity past `len` were reserved above; the
    // stores end at `len + tl + 1 + 8 <= len + 14`, and the new length
    // counts only the bytes written (tag, length, `n` text bytes).
    unsafe {
        let p = v.as_mut_ptr().add(len);
        p.cast::<u64>().write_unaligned(head.to_le());
        p.add(tl + 1).cast::<u64>().write_unaligned(text.to_le());
        v.set_len(len + tl + 1 + n);
    }
}

/// Append `tag` and the varint `value`: the output of
/// [`Writer::put_encoded_tag`] then [`Writer::put_varint`].
#[inline(always)]
pub fn put_tagged_varint(w: &mut Writer, tag: &EncodedTag, value: u64) {
    if value >= 0x80 {
        w.put_encoded_tag(tag);
        w.put_varint(value);
        return;
    }
    let (t, tl) = tag_word(tag);
    let word = t | value << (8 * tl);
    let v = w.as_mut_vec();
    v.reserve(8);
    let len = v.len();
    // SAFETY: 8 bytes of capacity past `len` were reserved above; the new
    // length counts the tag and the one varint byte (`tl + 1 <= 6`).
    unsafe {
        v.as_mut_ptr().add(len).cast::<u64>().write_unaligned(word.to_le());
        v.set_len(len + tl + 1);
    }
}
