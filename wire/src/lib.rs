//! # pbwire — protobuf wire-format primitives
//!
//! Everything needed to read and write the protobuf binary format, one small
//! module per wire concept, with no dependency on generated code or a schema:
//!
//! | module | concept |
//! |---|---|
//! | [`varint`] | base-128 varints, 32-bit truncation, `encoded_len_varint` |
//! | [`zigzag`] | `sint32`/`sint64` mapping |
//! | [`fixed`] | little-endian fixed32/fixed64, float/double bits |
//! | [`wire_type`] | [`WireType`], validated [`Tag`]s |
//! | [`reader`] | [`Reader`]: a cursor with LEN bounds, skipping, groups |
//! | [`packed`] | counting and decoding packed runs |
//! | [`utf8`] | UTF-8 validation with an ASCII fast path and `simdutf8` |
//! | [`writer`] | [`Writer`] (feature `alloc`): output with one-pass nested lengths |
//! | [`error`] | the one [`Error`] type: what, and at which byte |
//!
//! ## Guarantees
//!
//! - `#![no_std]`; `alloc` only for [`Writer`].
//! - No input makes a function panic or read out of bounds: every fast path
//!   (e.g. the unrolled varint decoder, taken when 10 bytes remain) has a
//!   bounds-checked slow path. The crate denies `unsafe` code but for one
//!   call: with `std` on x86_64, the packed-run word loop's AVX2/BMI2 build,
//!   called only after `is_x86_feature_detected!` says the CPU has both.
//! - Exactly protobuf's rules: varints of at most 10 bytes whose 10th byte
//!   is 0 or 1; tags with field numbers `1..=2^29-1` and wire types `0..=5`;
//!   LEN prefixes checked against what remains, in `u64` (no overflow on
//!   32-bit targets); groups closed by the matching END_GROUP, nested to a
//!   caller-given depth.
//!
//! ## Example
//!
//! ```
//! use pbwire::{Reader, WireType};
//!
//! // field 1 = 150 (varint), field 2 = "hi" (LEN)
//! let bytes = [0x08, 0x96, 0x01, 0x12, 0x02, b'h', b'i'];
//! let mut r = Reader::new(&bytes);
//! let tag = r.read_tag()?;
//! assert_eq!((tag.field_number(), tag.wire_type()), (1, WireType::Varint));
//! assert_eq!(r.read_varint()?, 150);
//! let tag = r.read_tag()?;
//! assert_eq!(tag.field_number(), 2);
//! assert_eq!(r.read_len_bytes()?, b"hi");
//! assert!(r.is_empty());
//! # Ok::<(), pbwire::Error>(())
//! ```
#![no_std]
#![deny(unsafe_code)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod error;
pub mod fixed;
pub mod packed;
pub mod reader;
pub mod utf8;
pub mod varint;
pub mod wire_type;
#[cfg(feature = "alloc")]
pub mod writer;
pub mod zigzag;

pub use error::{Error, ErrorKind, Result};
pub use reader::Reader;
pub use wire_type::{EncodedTag, MAX_FIELD_NUMBER, Tag, WireType};
#[cfg(feature = "alloc")]
pub use writer::{LenMark, Writer};
