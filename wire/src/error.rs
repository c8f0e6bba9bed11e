//! The one error type of the crate: what went wrong, and at which byte.

use core::fmt;

/// What went wrong while reading or writing the wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ended inside a value (a varint, a fixed-width value, a tag).
    Truncated,
    /// A varint ran past 10 bytes, or its 10th byte was above 1 (more than 64 bits).
    VarintOverflow,
    /// A tag whose varint does not fit in 32 bits.
    TagOverflow,
    /// A tag varint longer than 5 bytes (zero-padded), whatever its value.
    TagTooLong,
    /// A tag with field number 0.
    FieldNumberZero,
    /// A tag with wire type 6 or 7.
    InvalidWireType(u8),
    /// A field number outside `1..=MAX_FIELD_NUMBER` given to an encoder.
    FieldNumberOutOfRange(u32),
    /// A length prefix that claims more bytes than remain.
    LengthOutOfBounds {
        /// The length the prefix claims.
        len: u64,
        /// The bytes that actually remain after the prefix.
        remaining: usize,
    },
    /// An END_GROUP tag whose field number is not that of the open group.
    GroupMismatch {
        /// The field number of the START_GROUP tag.
        expected: u32,
        /// The field number of the END_GROUP tag found.
        found: u32,
    },
    /// An END_GROUP tag with no open group.
    UnexpectedEndGroup(u32),
    /// A group that the input never closes.
    UnterminatedGroup(u32),
    /// Groups nested deeper than the caller's limit.
    DepthLimitExceeded(u32),
    /// A packed fixed-width run whose length is not a multiple of the element size.
    PackedLengthMisaligned {
        /// The run's length in bytes.
        len: usize,
        /// The element width in bytes (4 or 8).
        width: usize,
    },
    /// Bytes that are not valid UTF-8; the offset is that of the first invalid byte.
    InvalidUtf8,
}

/// A wire error: what went wrong ([`ErrorKind`]) and the byte offset where it did.
///
/// The offset counts from the start of the buffer the [`Reader`](crate::Reader)
/// was created over (nested readers keep the outer numbering), so it points
/// into the bytes the user handed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    offset: usize,
}

impl Error {
    /// An error of `kind` at byte `offset`.
    #[inline]
    #[cold]
    pub const fn new(kind: ErrorKind, offset: usize) -> Self {
        Error { kind, offset }
    }

    /// What went wrong.
    #[inline]
    pub const fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The byte offset where it went wrong.
    #[inline]
    pub const fn offset(&self) -> usize {
        self.offset
    }

    /// The same error, its offset shifted by `base` (for a slice that starts
    /// `base` bytes into a larger buffer).
    #[inline]
    pub const fn shifted(self, base: usize) -> Self {
        Error { kind: self.kind, offset: self.offset + base }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ErrorKind::Truncated => f.write_str("truncated input"),
            ErrorKind::VarintOverflow => f.write_str("varint longer than 64 bits"),
            ErrorKind::TagOverflow => f.write_str("tag does not fit in 32 bits"),
            ErrorKind::TagTooLong => f.write_str("tag varint longer than 5 bytes"),
            ErrorKind::FieldNumberZero => f.write_str("field number 0 in tag"),
            ErrorKind::InvalidWireType(w) => write!(f, "invalid wire type {w}"),
            ErrorKind::FieldNumberOutOfRange(n) => {
                write!(f, "field number {n} outside 1..=536870911")
            }
            ErrorKind::LengthOutOfBounds { len, remaining } => {
                write!(f, "length {len} exceeds the {remaining} bytes remaining")
            }
            ErrorKind::GroupMismatch { expected, found } => {
                write!(f, "END_GROUP for field {found} closes group {expected}")
            }
            ErrorKind::UnexpectedEndGroup(n) => write!(f, "END_GROUP for field {n} outside a group"),
            ErrorKind::UnterminatedGroup(n) => write!(f, "group {n} is not terminated"),
            ErrorKind::DepthLimitExceeded(n) => write!(f, "nesting deeper than {n}"),
            ErrorKind::PackedLengthMisaligned { len, width } => {
                write!(f, "packed run of {len} bytes is not a multiple of {width}")
            }
            ErrorKind::InvalidUtf8 => f.write_str("invalid UTF-8"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.kind, self.offset)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}

/// The crate's result type.
pub type Result<T> = core::result::Result<T, Error>;
