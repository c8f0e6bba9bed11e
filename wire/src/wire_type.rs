//! The six wire types and the tag (field number + wire type) that precedes
//! every field.

use crate::error::{Error, ErrorKind, Result};
use crate::varint::MAX_VARINT_LEN;

/// The largest field number protobuf allows: 2^29 - 1.
pub const MAX_FIELD_NUMBER: u32 = (1 << 29) - 1;

/// How a field's value is laid out on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum WireType {
    /// 0: a varint (`int32`, `int64`, `uint32`, `uint64`, `sint32`, `sint64`, `bool`, `enum`).
    Varint = 0,
    /// 1: 8 little-endian bytes (`fixed64`, `sfixed64`, `double`).
    I64 = 1,
    /// 2: a varint length, then that many bytes (strings, bytes, messages, packed runs).
    Len = 2,
    /// 3: the start of a group (deprecated, proto2).
    StartGroup = 3,
    /// 4: the end of a group.
    EndGroup = 4,
    /// 5: 4 little-endian bytes (`fixed32`, `sfixed32`, `float`).
    I32 = 5,
}

impl WireType {
    /// The wire type of the low three bits of a tag; `None` for 6 and 7.
    #[inline]
    pub const fn from_bits(bits: u8) -> Option<WireType> {
        Some(match bits {
            0 => WireType::Varint,
            1 => WireType::I64,
            2 => WireType::Len,
            3 => WireType::StartGroup,
            4 => WireType::EndGroup,
            5 => WireType::I32,
            _ => return None,
        })
    }
}

/// A validated tag: a field number in `1..=MAX_FIELD_NUMBER` and a wire type
/// in `0..=5`, kept as the raw 32-bit value (`field << 3 | wire_type`) so that
/// comparing a tag against an expected one is a single integer compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tag(u32);

impl Tag {
    /// The tag of `field_number` with `wire_type`.
    ///
    /// Errors with [`ErrorKind::FieldNumberOutOfRange`] (offset 0) for 0 and
    /// numbers above [`MAX_FIELD_NUMBER`].
    #[inline]
    pub const fn new(field_number: u32, wire_type: WireType) -> Result<Tag> {
        if field_number == 0 || field_number > MAX_FIELD_NUMBER {
            return Err(Error::new(ErrorKind::FieldNumberOutOfRange(field_number), 0));
        }
        Ok(Tag((field_number << 3) | wire_type as u32))
    }

    /// Validates a decoded tag varint. Offsets in errors are 0 (the caller
    /// knows where the tag started).
    #[inline]
    pub const fn from_varint(varint: u64) -> Result<Tag> {
        if varint > u32::MAX as u64 {
            return Err(Error::new(ErrorKind::TagOverflow, 0));
        }
        let raw = varint as u32;
        let wire_bits = (raw & 7) as u8;
        if wire_bits > 5 {
            return Err(Error::new(ErrorKind::InvalidWireType(wire_bits), 0));
        }
        if raw >> 3 == 0 {
            return Err(Error::new(ErrorKind::FieldNumberZero, 0));
        }
        Ok(Tag(raw))
    }

    /// The raw value, `field_number << 3 | wire_type`.
    #[inline]
    pub const fn raw(self) -> u32 {
        self.0
    }

    /// The field number (1..=2^29-1).
    #[inline]
    pub const fn field_number(self) -> u32 {
        self.0 >> 3
    }

    /// The wire type.
    #[inline]
    pub const fn wire_type(self) -> WireType {
        match WireType::from_bits((self.0 & 7) as u8) {
            Some(w) => w,
            // Unreachable: every constructor validates the wire type.
            None => WireType::Varint,
        }
    }

    /// The tag's varint bytes, for precomputing per-field tag prefixes.
    #[inline]
    pub fn encode(self) -> EncodedTag {
        let mut bytes = [0u8; MAX_VARINT_LEN];
        let len = crate::varint::encode_varint(u64::from(self.0), &mut bytes);
        let mut out = [0u8; 5];
        out.copy_from_slice(&bytes[..5]);
        EncodedTag { bytes: out, len: len as u8 }
    }
}

/// A tag's varint bytes (1..=5 of them), ready to copy into output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodedTag {
    bytes: [u8; 5],
    len: u8,
}

impl EncodedTag {
    /// The encoded bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// The encoded bytes as a fixed-size array (zero padded) and how many
    /// of them count.
    #[inline]
    pub fn parts(&self) -> (&[u8; 5], usize) {
        (&self.bytes, self.len as usize)
    }
}
