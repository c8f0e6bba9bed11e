//! The parse floor: the matrix's payloads read by parsers written for their
//! schemas (what a schema compiler such as prost generates, without its
//! allocations), every value folded into a checksum. No Lua, no plan, no
//! table; the cheapest known way to read the wire format protolua reads.
//!
//! With the constructor floor's tape after it ([`crate::floor`]), it makes
//! the *parse + constructor floor*: a lower bound for a one-call decode
//! that reads the wire format and builds its tables the cheapest known way.
//! It checks what protolua must check: tags, lengths, varints, and the
//! UTF-8 of proto3 `string` fields. Unknown fields are skipped (groups are
//! taken for bad input: the matrix has none). It is tuned as protolua
//! is (short varints inline): a floor slower than protolua's own walk would
//! bound nothing.
//!
//! Only for the matrix's two schemas, `hello.Person` and
//! `proto2_basic.BenchPayload` (and the messages inside them).

use pbwire::utf8::validate_utf8;
use pbwire::varint::decode_varint;
use pbwire::zigzag::decode_zigzag64;

/// Which matrix message a parse floor reads.
#[derive(Clone, Copy)]
pub enum Schema {
    /// `hello.Person`.
    Person,
    /// `proto2_basic.BenchPayload`.
    BenchPayload,
}

impl Schema {
    /// The schema of full message name `name`, if it is one of the matrix's.
    pub fn by_name(name: &[u8]) -> Option<Schema> {
        match name {
            b"hello.Person" => Some(Schema::Person),
            b"proto2_basic.BenchPayload" => Some(Schema::BenchPayload),
            _ => None,
        }
    }

    /// Parse `b` as this message: a checksum of its values, or `None` for
    /// bad input (the floor needs no error detail).
    pub fn parse(self, b: &[u8]) -> Option<u64> {
        match self {
            Schema::Person => person(b),
            Schema::BenchPayload => bench_payload(b),
        }
    }
}

// Tags as encoded (field number << 3 | wire type), one byte each in these
// schemas but for BenchPayload's fields 16 and 17 (two bytes).
const VARINT: u8 = 0;
const I64: u8 = 1;
const LEN: u8 = 2;
const I32: u8 = 5;

const fn tag(number: u8, wire: u8) -> u8 {
    number << 3 | wire
}

// Constant patterns, so that each `match` is one jump table.
const T1_LEN: u8 = tag(1, LEN);
const T1_VARINT: u8 = tag(1, VARINT);
const T2_LEN: u8 = tag(2, LEN);
const T2_VARINT: u8 = tag(2, VARINT);
const T3_LEN: u8 = tag(3, LEN);
const T3_VARINT: u8 = tag(3, VARINT);
const T4_I64: u8 = tag(4, I64);
const T4_LEN: u8 = tag(4, LEN);
const T5_LEN: u8 = tag(5, LEN);
const T5_VARINT: u8 = tag(5, VARINT);
const T6_VARINT: u8 = tag(6, VARINT);
const T7_LEN: u8 = tag(7, LEN);
const T8_VARINT: u8 = tag(8, VARINT);
const T9_I32: u8 = tag(9, I32);
const T10_VARINT: u8 = tag(10, VARINT);
const T11_I64: u8 = tag(11, I64);
const T12_LEN: u8 = tag(12, LEN);
const T13_VARINT: u8 = tag(13, VARINT);
const T14_LEN: u8 = tag(14, LEN);
const T15_LEN: u8 = tag(15, LEN);

/// The varint at the start of `b`, `b` moved past it: 1- to 3-byte
/// values inline, longer ones by pbwire's unrolled decoder.
#[inline(always)]
fn varint(b: &mut &[u8]) -> Option<u64> {
    match **b {
        [b0, ref rest @ ..] if b0 < 0x80 => {
            *b = rest;
            Some(u64::from(b0))
        }
        [b0, b1, ref rest @ ..] if b1 < 0x80 => {
            *b = rest;
            Some(u64::from(b0 & 0x7f) | u64::from(b1) << 7)
        }
        [b0, b1, b2, ref rest @ ..] if b2 < 0x80 => {
            *b = rest;
            Some(u64::from(b0 & 0x7f) | u64::from(b1 & 0x7f) << 7 | u64::from(b2) << 14)
        }
        _ => {
            let (v, n) = decode_varint(b).ok()?;
            *b = &b[n..];
            Some(v)
        }
    }
}

/// A length-delimited value's bytes, `b` moved past them.
#[inline(always)]
fn len_bytes<'a>(b: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = usize::try_from(varint(b)?).ok()?;
    let (head, rest) = b.split_at_checked(len)?;
    *b = rest;
    Some(head)
}

/// `N` little-endian bytes, `b` moved past them.
#[inline(always)]
fn fixed<const N: usize>(b: &mut &[u8]) -> Option<[u8; N]> {
    let (head, rest) = b.split_first_chunk::<N>()?;
    *b = rest;
    Some(*head)
}

/// A string's checksum: its length (the parse has found its bytes, as a
/// push of them would need).
#[inline(always)]
fn str_sum(s: &[u8]) -> u64 {
    s.len() as u64
}

/// A proto3 `string`: validated, then summed.
#[inline(always)]
fn utf8_str(b: &mut &[u8]) -> Option<u64> {
    let s = len_bytes(b)?;
    validate_utf8(s, 0).ok()?;
    Some(str_sum(s))
}

/// A packed run of varints, summed (`zigzag`: as `sint64`).
#[inline(always)]
fn packed_varints(b: &mut &[u8], zigzag: bool) -> Option<u64> {
    let mut run = len_bytes(b)?;
    let mut sum = 0u64;
    while !run.is_empty() {
        let v = varint(&mut run)?;
        sum = sum.wrapping_add(if zigzag { decode_zigzag64(v) as u64 } else { v });
    }
    Some(sum)
}

/// Skip the value of an unknown (or differently typed) field whose tag's
/// first byte was `t` (its wire type; groups are not expected in these
/// payloads: `None`).
#[cold]
fn skip(b: &mut &[u8], t: u8) -> Option<u64> {
    match t & 7 {
        VARINT => varint(b).map(|_| 0),
        I64 => fixed::<8>(b).map(|_| 0),
        LEN => len_bytes(b).map(|_| 0),
        I32 => fixed::<4>(b).map(|_| 0),
        _ => None,
    }
}

/// Skip a field with a tag of two or more bytes (`t`, its first, read).
#[cold]
fn skip_long(b: &mut &[u8], t: u8) -> Option<u64> {
    let mut more = true;
    for _ in 0..4 {
        let (&x, rest) = b.split_first()?;
        *b = rest;
        if x < 0x80 {
            more = false;
            break;
        }
    }
    if more {
        return None;
    }
    skip(b, t)
}

/// A message body's fields: `field` reads the value after each tag's first
/// byte (`b` just past it) and returns its checksum, or `None` to reject
/// the input; the checksums are summed.
#[inline(always)]
fn fields(mut b: &[u8], mut field: impl FnMut(u8, &mut &[u8]) -> Option<u64>) -> Option<u64> {
    let mut sum = 0u64;
    while let Some((&t, rest)) = b.split_first() {
        b = rest;
        sum = sum.wrapping_add(field(t, &mut b)?);
    }
    Some(sum)
}

/// The value of a field the parser does not take (tag first byte `t`).
#[inline(always)]
fn other(b: &mut &[u8], t: u8) -> Option<u64> {
    if t >= 0x80 { skip_long(b, t) } else { skip(b, t) }
}

fn person(b: &[u8]) -> Option<u64> {
    fields(b, |t, b| {
        Some(match t {
            T1_LEN | T3_LEN => utf8_str(b)?,
            T2_VARINT => varint(b)? as i32 as u64,
            T4_LEN => address(len_bytes(b)?)?,
            T5_LEN => packed_varints(b, false)?,
            T5_VARINT => varint(b)?,
            _ => other(b, t)?,
        })
    })
}

fn address(b: &[u8]) -> Option<u64> {
    fields(b, |t, b| {
        Some(match t {
            T1_LEN | T2_LEN | T3_LEN => utf8_str(b)?,
            _ => other(b, t)?,
        })
    })
}

fn bench_payload(b: &[u8]) -> Option<u64> {
    fields(b, |t, b| {
        Some(match t {
            // int32 (`id`, unpacked `values`), enum (`kind`, closed: a
            // value it does not declare would be an unknown field)
            T1_VARINT | T13_VARINT => varint(b)? as i32 as u64,
            T6_VARINT => match varint(b)? {
                k @ 0..=3 => k,
                _ => 0,
            },
            // int64, uint64, bool, sint32
            T3_VARINT | T10_VARINT => varint(b)?,
            T5_VARINT => u64::from(varint(b)? != 0),
            T8_VARINT => decode_zigzag64(varint(b)?) as i32 as u64,
            T4_I64 | T11_I64 => u64::from_le_bytes(fixed(b)?),
            T9_I32 => u64::from(u32::from_le_bytes(fixed(b)?)),
            // proto2 strings and bytes: not validated (protolua does not either)
            T2_LEN | T7_LEN | T12_LEN | T15_LEN => str_sum(len_bytes(b)?),
            T14_LEN => {
                let run = len_bytes(b)?;
                if run.len() % 4 != 0 {
                    return None;
                }
                run.chunks_exact(4)
                    .fold(0u64, |s, c| s.wrapping_add(u64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]]))))
            }
            // Fields 16 and 17 (LEN): two-byte tags.
            0x82 if b.first() == Some(&1) => {
                *b = &b[1..];
                inner(len_bytes(b)?)?
            }
            0x8a if b.first() == Some(&1) => {
                *b = &b[1..];
                inner(len_bytes(b)?)?
            }
            _ => other(b, t)?,
        })
    })
}

fn inner(b: &[u8]) -> Option<u64> {
    fields(b, |t, b| {
        Some(match t {
            T1_VARINT => varint(b)? as i32 as u64,
            T2_LEN => str_sum(len_bytes(b)?),
            T3_LEN => packed_varints(b, true)?,
            _ => other(b, t)?,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::Schema;

    fn golden(name: &str) -> Vec<u8> {
        let path = format!("{}/../fixtures/golden/{name}.bin", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn reads_every_matrix_payload() {
        for size in ["10B", "100B", "1KB", "10KB", "100KB"] {
            assert!(Schema::Person.parse(&golden(&format!("person_{size}"))).is_some(), "Person {size}");
        }
        for size in ["min", "mid", "mid_ext"] {
            assert!(Schema::BenchPayload.parse(&golden(&format!("bench_{size}"))).is_some(), "BenchPayload {size}");
        }
    }

    #[test]
    fn sums_the_values() {
        // Person 10B: name "Alexey" (6 bytes) and age 30.
        assert_eq!(Schema::Person.parse(&golden("person_10B")), Some(6 + 30));
        // BenchPayload min: id 1, name "a".
        assert_eq!(Schema::BenchPayload.parse(&golden("bench_min")), Some(1 + 1));
        // Packed lucky numbers 1 and 300, an unknown varint field 9 skipped.
        assert_eq!(Schema::Person.parse(&[0x2a, 3, 1, 0xac, 0x02, 0x48, 7]), Some(301));
    }

    #[test]
    fn rejects_bad_input_without_panicking() {
        // A cut varint, a length past the end, invalid UTF-8 in a proto3 string.
        assert_eq!(Schema::Person.parse(&[0x10, 0x80]), None);
        assert_eq!(Schema::Person.parse(&[0x0a, 5, b'a']), None);
        assert_eq!(Schema::Person.parse(&[0x0a, 1, 0xff]), None);
        // Every prefix of the largest payloads: `None` or a sum, no panic.
        for (schema, name) in [(Schema::Person, "person_1KB"), (Schema::BenchPayload, "bench_mid")] {
            let b = golden(name);
            for n in 0..b.len() {
                let _ = schema.parse(&b[..n]);
            }
        }
    }
}
