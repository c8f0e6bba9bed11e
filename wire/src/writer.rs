//! [`Writer`]: a growable output buffer that writes wire values, including
//! nested LEN values whose length is only known once their content is written.
//!
//! ## Nested lengths: reserve one byte, backpatch, shift when needed
//!
//! [`Writer::begin_len`] reserves one byte for the length and returns a
//! [`LenMark`]; [`Writer::end_len`] writes the real length there. A body of
//! fewer than 128 bytes (most sub-messages, map entries and short packed
//! runs) needs nothing more. A longer body is moved right by the extra
//! length bytes (one `memmove` of the body per nesting level). This keeps
//! encoding to one pass over the input — essential when the input is a Lua
//! table, where a separate size pass would read every value twice — and the
//! output canonical (shortest length varints, byte-identical to protobuf C++).
//! The alternatives and their measured costs are in `docs/PERF_LOG.md`.

use alloc::vec::Vec;

use crate::varint::{MAX_VARINT_LEN, encode_varint, encoded_len_varint};
use crate::wire_type::{EncodedTag, Tag};

/// A position where a nested LEN value's length byte was reserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a reserved length must be closed with Writer::end_len"]
pub struct LenMark(usize);

/// A growable buffer of protobuf output.
///
/// It wraps a `Vec<u8>`; [`Writer::clear`] keeps the capacity, so a writer
/// reused across messages stops allocating once it has grown to the largest
/// message.
#[derive(Debug, Clone, Default)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    /// An empty writer.
    #[inline]
    pub const fn new() -> Self {
        Writer { buf: Vec::new() }
    }

    /// An empty writer with room for `capacity` bytes.
    #[inline]
    pub fn with_capacity(capacity: usize) -> Self {
        Writer { buf: Vec::with_capacity(capacity) }
    }

    /// A writer that appends to `buf`.
    #[inline]
    pub const fn from_vec(buf: Vec<u8>) -> Self {
        Writer { buf }
    }

    /// The bytes written, as a `Vec`.
    #[inline]
    pub fn into_vec(self) -> Vec<u8> {
        self.buf
    }

    /// The bytes written so far.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        &self.buf
    }

    /// How many bytes have been written.
    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing has been written.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Forgets the content, keeps the capacity.
    #[inline]
    pub fn clear(&mut self) {
        self.buf.clear();
    }

    /// Drops everything written after the first `len` bytes.
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        self.buf.truncate(len);
    }

    /// The capacity in bytes.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Makes room for `additional` more bytes.
    #[inline]
    pub fn reserve(&mut self, additional: usize) {
        self.buf.reserve(additional);
    }

    /// The underlying buffer, for callers that rearrange written bytes
    /// (e.g. sorting map entries after writing them).
    #[inline]
    pub fn as_mut_vec(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Appends a varint.
    ///
    /// Values below 16384 (tags, most lengths and small numbers) are
    /// written inline at the call site; longer ones by an out-of-line call.
    #[inline(always)]
    pub fn put_varint(&mut self, value: u64) {
        if value < 0x80 {
            self.buf.push(value as u8);
        } else if value < 0x4000 {
            self.buf.extend_from_slice(&[value as u8 | 0x80, (value >> 7) as u8]);
        } else {
            self.put_varint_long(value);
        }
    }

    /// [`Writer::put_varint`] for values of 16384 and up (3 to 10 bytes),
    /// without a loop: the low 56 bits are spread to 7 per byte in three
    /// shift-and-mask steps (the inverse of the packed decoder's
    /// compaction), the continuation bits are one mask, and bytes 9 and 10
    /// are written whether or not they count.
    #[inline(never)]
    fn put_varint_long(&mut self, value: u64) {
        // With room for 10 bytes checked here, the compiler drops the
        // copy's own grow path: this is a leaf with no register saves,
        // and growing is a cold tail call.
        if self.buf.capacity() - self.buf.len() < MAX_VARINT_LEN {
            return self.put_varint_long_grow(value);
        }
        let len = encoded_len_varint(value);
        let x = value & 0x00ff_ffff_ffff_ffff;
        let x = (x & 0x0fff_ffff) | ((x & 0x00ff_ffff_f000_0000) << 4);
        let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x0fff_c000_0fff_c000) << 2);
        let x = (x & 0x007f_007f_007f_007f) | ((x & 0x3f80_3f80_3f80_3f80) << 1);
        // Bit 7 of every byte but the last; of all 8 when there are more.
        const HIGH: u64 = 0x8080_8080_8080_8080;
        let more = if len > 8 { HIGH } else { HIGH & ((1u64 << (8 * (len - 1))) - 1) };
        let mut bytes = [0u8; MAX_VARINT_LEN];
        bytes[..8].copy_from_slice(&(x | more).to_le_bytes());
        bytes[8] = ((value >> 56) as u8 & 0x7f) | if len > 9 { 0x80 } else { 0 };
        bytes[9] = (value >> 63) as u8;
        self.put_prefix(&bytes, len);
    }

    /// [`Writer::put_varint_long`] when the buffer has fewer than 10 free
    /// bytes: grow, then write.
    #[cold]
    #[inline(never)]
    fn put_varint_long_grow(&mut self, value: u64) {
        self.buf.reserve(MAX_VARINT_LEN);
        self.put_varint_long(value);
    }

    /// Appends the first `len` bytes of `bytes`. A copy of a length known
    /// only at run time compiles to a `memcpy` call (about 20 instructions
    /// for a few bytes); copying all `N` bytes, a length the compiler knows,
    /// is a couple of moves, and the truncation only sets the length.
    #[inline(always)]
    fn put_prefix<const N: usize>(&mut self, bytes: &[u8; N], len: usize) {
        let end = self.buf.len() + len;
        self.buf.extend_from_slice(bytes);
        self.buf.truncate(end);
    }

    /// Appends a tag.
    #[inline]
    pub fn put_tag(&mut self, tag: Tag) {
        self.put_varint(u64::from(tag.raw()));
    }

    /// Appends a precomputed tag.
    #[inline]
    pub fn put_encoded_tag(&mut self, tag: &EncodedTag) {
        let (bytes, len) = tag.parts();
        self.put_prefix(bytes, len);
    }

    /// Appends 4 little-endian bytes.
    #[inline]
    pub fn put_fixed32(&mut self, value: u32) {
        self.buf.extend_from_slice(&value.to_le_bytes());
    }

    /// Appends 8 little-endian bytes.
    #[inline]
    pub fn put_fixed64(&mut self, value: u64) {
        self.buf.extend_from_slice(&value.to_le_bytes());
    }

    /// Appends raw bytes.
    #[inline]
    pub fn put_bytes(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Appends a length prefix and `bytes` (a LEN value known up front).
    #[inline]
    pub fn put_len_bytes(&mut self, bytes: &[u8]) {
        self.put_varint(bytes.len() as u64);
        self.buf.extend_from_slice(bytes);
    }

    /// Appends a whole LEN field whose value is known up front: the
    /// precomputed `tag`, the length of `bytes` and `bytes`. The same
    /// output as [`Writer::put_encoded_tag`] then [`Writer::put_len_bytes`].
    ///
    /// Cost: inline at the call site. For values below 16384 bytes the tag
    /// and the length are combined in one word and written with one 8-byte
    /// store (one capacity check), then the value is one `memcpy`, with no
    /// out-of-line call of the writer's own. Longer values take the two
    /// separate writes.
    #[inline(always)]
    pub fn put_tagged_len_bytes(&mut self, tag: &EncodedTag, bytes: &[u8]) {
        let n = bytes.len();
        if n >= 0x4000 {
            self.put_encoded_tag(tag);
            self.put_len_bytes(bytes);
            return;
        }
        let (tag_bytes, tag_len) = tag.parts();
        let mut word = [0u8; 8];
        word[..5].copy_from_slice(tag_bytes);
        let (len_word, len_len) =
            if n < 0x80 { (n as u64, 1) } else { ((n as u64 & 0x7f) | 0x80 | ((n as u64 >> 7) << 8), 2) };
        // The tag takes at most 5 bytes and the length 2: they fit a word.
        let word = u64::from_le_bytes(word) | len_word << (8 * tag_len);
        self.put_prefix(&word.to_le_bytes(), tag_len + len_len);
        self.buf.extend_from_slice(bytes);
    }

    /// Starts a LEN value whose length is not known yet: reserves one byte.
    #[inline]
    pub fn begin_len(&mut self) -> LenMark {
        let mark = LenMark(self.buf.len());
        self.buf.push(0);
        mark
    }

    /// The number of bytes written since `mark` (the body so far).
    #[inline]
    pub fn len_since(&self, mark: LenMark) -> usize {
        self.buf.len() - mark.0 - 1
    }

    /// Ends the LEN value started at `mark`: writes its length, moving the
    /// body right when the length needs more than one byte.
    ///
    /// Marks must be closed innermost first.
    #[inline]
    pub fn end_len(&mut self, mark: LenMark) {
        let body_len = self.len_since(mark);
        if body_len < 0x80 {
            self.buf[mark.0] = body_len as u8;
        } else {
            self.end_len_long(mark, body_len);
        }
    }

    #[cold]
    fn end_len_long(&mut self, mark: LenMark, body_len: usize) {
        let prefix_len = encoded_len_varint(body_len as u64);
        let extra = prefix_len - 1;
        let body_start = mark.0 + 1;
        let old_end = self.buf.len();
        self.buf.resize(old_end + extra, 0);
        self.buf.copy_within(body_start..old_end, body_start + extra);
        let mut bytes = [0u8; MAX_VARINT_LEN];
        encode_varint(body_len as u64, &mut bytes);
        self.buf[mark.0..mark.0 + prefix_len].copy_from_slice(&bytes[..prefix_len]);
    }
}
