//! [`Reader`]: a cursor over a `&[u8]` that decodes wire values and reports
//! every error at its absolute byte offset.

use crate::error::{Error, ErrorKind, Result};
use crate::fixed::{decode_fixed32, decode_fixed64};
use crate::varint::{decode_varint, skip_varint};
use crate::wire_type::{Tag, WireType};

/// A forward-only cursor over protobuf bytes.
///
/// The reader keeps the unread bytes as a slice and the absolute offset of
/// their end; the current position is derived from those two only when an
/// error needs it, so a read costs no bookkeeping beyond shrinking the slice.
/// A nested reader made by [`Reader::read_len_reader`] numbers its bytes like
/// its parent, so an error deep in a sub-message names the offset in the
/// outermost buffer.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    rest: &'a [u8],
    end_offset: usize,
}

/// The longest encoding of a tag: 5 bytes hold 32 bits.
const MAX_TAG_LEN: usize = 5;

impl<'a> Reader<'a> {
    /// A reader over `buf`, offsets counted from its first byte.
    #[inline]
    pub const fn new(buf: &'a [u8]) -> Self {
        Reader { rest: buf, end_offset: buf.len() }
    }

    /// A reader over `buf` whose first byte is at offset `base` of a larger buffer.
    #[inline]
    pub const fn with_offset(buf: &'a [u8], base: usize) -> Self {
        Reader { rest: buf, end_offset: base + buf.len() }
    }

    /// The absolute offset of the next byte to be read.
    #[inline]
    pub const fn position(&self) -> usize {
        self.end_offset - self.rest.len()
    }

    /// How many bytes remain.
    #[inline]
    pub const fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// Whether every byte has been read.
    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The unread bytes.
    #[inline]
    pub const fn rest(&self) -> &'a [u8] {
        self.rest
    }

    #[inline]
    fn err(&self, kind: ErrorKind) -> Error {
        Error::new(kind, self.position())
    }

    /// Moves past `n` bytes; [`ErrorKind::Truncated`] if fewer remain.
    #[inline]
    pub fn advance(&mut self, n: usize) -> Result<()> {
        match self.rest.get(n..) {
            Some(rest) => {
                self.rest = rest;
                Ok(())
            }
            None => Err(self.err(ErrorKind::Truncated)),
        }
    }

    /// Takes the next `n` bytes.
    #[inline]
    pub fn read_bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.rest.len() {
            return Err(self.err(ErrorKind::Truncated));
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }

    /// Reads a varint (up to 64 bits).
    #[inline]
    pub fn read_varint(&mut self) -> Result<u64> {
        match decode_varint(self.rest) {
            Ok((value, len)) => {
                // `decode_varint` never reports more bytes than it was given.
                self.rest = &self.rest[len..];
                Ok(value)
            }
            Err(e) => Err(e.shifted(self.position())),
        }
    }

    /// Reads and validates a tag (field number ≥ 1, wire type 0..=5).
    ///
    /// One-byte tags (field numbers 1..=15, the ones schemas give their
    /// hottest fields) are read inline without the general varint decoder.
    #[inline(always)]
    pub fn read_tag(&mut self) -> Result<Tag> {
        if let Some((&b, rest)) = self.rest.split_first()
            && b < 0x80
        {
            return match Tag::from_varint(u64::from(b)) {
                Ok(tag) => {
                    self.rest = rest;
                    Ok(tag)
                }
                Err(e) => Err(e.shifted(self.position())),
            };
        }
        self.read_tag_long()
    }

    #[inline(never)]
    fn read_tag_long(&mut self) -> Result<Tag> {
        let start = self.position();
        let varint = self.read_varint()?;
        let tag = Tag::from_varint(varint).map_err(|e| e.shifted(start))?;
        // Tags are 32-bit: a varint longer than 5 bytes is refused even
        // when its value fits (zero-padded), as protobuf does.
        if self.position() - start > MAX_TAG_LEN {
            return Err(Error::new(ErrorKind::TagTooLong, start));
        }
        Ok(tag)
    }

    /// Reads 4 little-endian bytes.
    #[inline]
    pub fn read_fixed32(&mut self) -> Result<u32> {
        let value = decode_fixed32(self.rest).map_err(|e| e.shifted(self.position()))?;
        self.rest = &self.rest[4..];
        Ok(value)
    }

    /// Reads 8 little-endian bytes.
    #[inline]
    pub fn read_fixed64(&mut self) -> Result<u64> {
        let value = decode_fixed64(self.rest).map_err(|e| e.shifted(self.position()))?;
        self.rest = &self.rest[8..];
        Ok(value)
    }

    /// Reads a length prefix and checks it against the bytes that remain.
    ///
    /// The comparison is done in `u64`, so a huge length cannot overflow
    /// `usize` on 32-bit targets. The error offset is that of the prefix.
    #[inline]
    pub fn read_len(&mut self) -> Result<usize> {
        let start = self.position();
        // Lengths below 128 (one byte) are the common case: read them
        // inline, and keep the general decoder out of the caller's loop.
        let len = match self.rest.split_first() {
            Some((&b, rest)) if b < 0x80 => {
                self.rest = rest;
                u64::from(b)
            }
            _ => self.read_len_varint()?,
        };
        if len > self.rest.len() as u64 {
            return Err(Error::new(ErrorKind::LengthOutOfBounds { len, remaining: self.rest.len() }, start));
        }
        Ok(len as usize)
    }

    #[inline(never)]
    fn read_len_varint(&mut self) -> Result<u64> {
        self.read_varint()
    }

    /// Reads a length-delimited value (wire type LEN) and returns its bytes.
    #[inline]
    pub fn read_len_bytes(&mut self) -> Result<&'a [u8]> {
        let len = self.read_len()?;
        let (head, rest) = self.rest.split_at(len);
        self.rest = rest;
        Ok(head)
    }

    /// Reads a length-delimited value as a nested reader that keeps this
    /// reader's offsets.
    #[inline]
    pub fn read_len_reader(&mut self) -> Result<Reader<'a>> {
        let len = self.read_len()?;
        let (head, rest) = self.rest.split_at(len);
        self.rest = rest;
        let end_offset = self.end_offset - rest.len();
        Ok(Reader { rest: head, end_offset })
    }

    /// Skips the value of a field whose tag was just read.
    ///
    /// Groups are skipped whole, their END_GROUP number checked, nested at
    /// most `depth_limit` deep. An END_GROUP tag given here is an error
    /// ([`ErrorKind::UnexpectedEndGroup`]): the caller that opened a group
    /// handles its end. Cost: linear in the bytes skipped; recursion only for
    /// nested groups, bounded by `depth_limit`.
    pub fn skip_field(&mut self, tag: Tag, depth_limit: u32) -> Result<()> {
        match tag.wire_type() {
            WireType::Varint => match skip_varint(self.rest) {
                Ok(len) => {
                    self.rest = &self.rest[len..];
                    Ok(())
                }
                Err(e) => Err(e.shifted(self.position())),
            },
            WireType::I64 => self.advance(8),
            WireType::I32 => self.advance(4),
            WireType::Len => {
                let len = self.read_len()?;
                self.rest = &self.rest[len..];
                Ok(())
            }
            WireType::StartGroup => self.skip_group(tag.field_number(), depth_limit),
            WireType::EndGroup => Err(self.err(ErrorKind::UnexpectedEndGroup(tag.field_number()))),
        }
    }

    /// Skips the body of a group whose START_GROUP tag (for `field_number`)
    /// was just read, through its matching END_GROUP tag.
    pub fn skip_group(&mut self, field_number: u32, depth_limit: u32) -> Result<()> {
        if depth_limit == 0 {
            return Err(self.err(ErrorKind::DepthLimitExceeded(0)));
        }
        loop {
            if self.is_empty() {
                return Err(self.err(ErrorKind::UnterminatedGroup(field_number)));
            }
            let start = self.position();
            let tag = self.read_tag()?;
            if tag.wire_type() == WireType::EndGroup {
                if tag.field_number() != field_number {
                    return Err(Error::new(
                        ErrorKind::GroupMismatch { expected: field_number, found: tag.field_number() },
                        start,
                    ));
                }
                return Ok(());
            }
            self.skip_field(tag, depth_limit - 1).map_err(|e| match e.kind() {
                // Report the limit the caller set, not the countdown.
                ErrorKind::DepthLimitExceeded(_) => Error::new(ErrorKind::DepthLimitExceeded(depth_limit), e.offset()),
                _ => e,
            })?;
        }
    }
}
