//! The values an error message shows: keys, names and numbers, each a
//! fixed-size `Copy` type so that a [`super::CodecError`] owns no heap.

use core::fmt::{self, Write};
use std::os::raw::c_int;

/// A short copy of a Lua string (a key, an enum name) for an error message.
#[derive(Clone, Copy)]
pub struct ShortStr {
    buf: [u8; 48],
    len: u8,
    truncated: bool,
}

impl ShortStr {
    /// Copy up to 48 bytes of `s`.
    pub fn new(s: &[u8]) -> Self {
        let mut buf = [0u8; 48];
        let n = s.len().min(buf.len());
        buf[..n].copy_from_slice(&s[..n]);
        ShortStr { buf, len: n as u8, truncated: n < s.len() }
    }
}

impl fmt::Display for ShortStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for chunk in self.buf[..self.len as usize].utf8_chunks() {
            for c in chunk.valid().chars() {
                if c.is_control() {
                    write!(f, "\\{}", c as u32)?;
                } else {
                    f.write_char(c)?;
                }
            }
            for b in chunk.invalid() {
                write!(f, "\\x{b:02x}")?;
            }
        }
        if self.truncated {
            f.write_str("…")?;
        }
        Ok(())
    }
}

/// A key of an array table that is no index ([`super::ErrorKind::ArrayKey`]).
#[derive(Clone, Copy)]
pub enum ArrayKey {
    /// A string key (shown quoted).
    Str(ShortStr),
    /// An integer key (0 or negative).
    Int(i64),
    /// A non-integral number key, or one beyond 64-bit integers.
    Num(f64),
    /// A boolean key.
    Bool(bool),
    /// A key of another type (its type name).
    Other(&'static str),
}

impl fmt::Display for ArrayKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ArrayKey::Str(s) => write!(f, "key \"{s}\""),
            ArrayKey::Int(i) => write!(f, "key {i}"),
            ArrayKey::Num(v) if (1e-4..1e16).contains(&v.abs()) => write!(f, "key {v}"),
            ArrayKey::Num(v) => write!(f, "key {v:e}"),
            ArrayKey::Bool(b) => write!(f, "key {b}"),
            ArrayKey::Other(t) => write!(f, "a key of type {t}"),
        }
    }
}

/// A value for an out-of-range message.
#[derive(Clone, Copy)]
pub enum IntValue {
    /// A float that was integral.
    Float(f64),
    /// A signed integer.
    Signed(i64),
    /// An unsigned integer.
    Unsigned(u64),
}

impl fmt::Display for IntValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            IntValue::Float(v) if v.abs() < 1e16 => write!(f, "{v:.0}"),
            IntValue::Float(v) => write!(f, "{v:e}"),
            IntValue::Signed(v) => write!(f, "{v}"),
            IntValue::Unsigned(v) => write!(f, "{v}"),
        }
    }
}

/// A map entry's key as an error path names it: `m["a"]`, `m[5]`, `m[true]`.
#[derive(Clone, Copy, Debug)]
pub enum EntryKey<'k> {
    /// Not known: the entry failed before its key was read (`m[<entry>]`).
    Unknown,
    /// A string key: quoted, unprintable bytes escaped, long ones cut.
    Str(&'k [u8]),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A Lua number that is not an integer (or is beyond 64 bits).
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A key of another Lua type (its type tag), named by its type (`m[<table>]`).
    Other(c_int),
}
