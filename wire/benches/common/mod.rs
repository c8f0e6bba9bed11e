//! Deterministic inputs shared by the criterion and iai-callgrind benches,
//! so both measure the same bytes.
#![allow(dead_code)]

use pbwire::varint::{MAX_VARINT_LEN, encode_varint};

pub mod scalar_ref;

/// How many varints one decode/encode iteration handles.
pub const N: usize = 256;

/// A small xorshift generator: no dependency, same sequence everywhere.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

/// A random value whose varint is exactly `len` bytes (1..=10).
pub fn value_of_len(rng: &mut Rng, len: usize) -> u64 {
    assert!((1..=MAX_VARINT_LEN).contains(&len));
    let bits = (7 * len).min(64) as u32;
    let lo = if len == 1 { 0 } else { 1u64 << (7 * (len - 1)) };
    let r = rng.next();
    let v = if bits == 64 { r } else { r & ((1u64 << bits) - 1) };
    v | lo
}

pub fn push_varint(out: &mut Vec<u8>, v: u64) {
    let mut b = [0u8; MAX_VARINT_LEN];
    let n = encode_varint(v, &mut b);
    out.extend_from_slice(&b[..n]);
}

/// `n` values whose varints are all `len` bytes long.
pub fn values_of_len(len: usize, n: usize) -> Vec<u64> {
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15 ^ len as u64);
    (0..n).map(|_| value_of_len(&mut rng, len)).collect()
}

/// A "realistic" mix of field values, by encoded length: 60 % 1 byte
/// (small ints, enums, bools), 20 % 2, 8 % 3, 4 % 4, 4 % 5 (32-bit
/// hashes, timestamps in seconds), 4 % 10 (negative int32/int64).
pub fn mixed_values(n: usize) -> Vec<u64> {
    let mut rng = Rng::new(0x1234_5678);
    (0..n)
        .map(|_| {
            let len = match rng.next() % 100 {
                0..60 => 1,
                60..80 => 2,
                80..88 => 3,
                88..92 => 4,
                92..96 => 5,
                _ => 10,
            };
            value_of_len(&mut rng, len)
        })
        .collect()
}

pub fn encode_all(values: &[u64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 10);
    for &v in values {
        push_varint(&mut out, v);
    }
    out
}

/// Tags as they appear in real messages: mostly fields 1..=15 (1-byte
/// tags), some 16..=2047 (2 bytes), wire types 0, 1, 2, 5.
pub fn tag_values(n: usize) -> Vec<(u32, u8)> {
    let mut rng = Rng::new(42);
    (0..n)
        .map(|_| {
            let r = rng.next();
            let field = if r % 100 < 85 { 1 + (r >> 8) % 15 } else { 16 + (r >> 8) % 2032 } as u32;
            let wt = [0u8, 0, 0, 2, 2, 1, 5][((r >> 32) % 7) as usize];
            (field, wt)
        })
        .collect()
}

pub fn tag_bytes(tags: &[(u32, u8)]) -> Vec<u8> {
    let mut out = Vec::new();
    for &(f, w) in tags {
        push_varint(&mut out, (u64::from(f) << 3) | u64::from(w));
    }
    out
}

/// sint64 values: small magnitudes of both signs, some large.
pub fn sint_values(n: usize) -> Vec<i64> {
    let mut rng = Rng::new(7);
    (0..n)
        .map(|_| {
            let r = rng.next();
            match r % 10 {
                0..6 => (r >> 8) as i64 % 64 - 32,
                6..9 => (r >> 8) as i64 % 100_000 - 50_000,
                _ => r as i64,
            }
        })
        .collect()
}

pub fn zigzag_bytes(values: &[i64]) -> Vec<u8> {
    let mut out = Vec::new();
    for &v in values {
        push_varint(&mut out, pbwire::zigzag::encode_zigzag64(v));
    }
    out
}

/// A packed run body (no length prefix) of `n` varints: all 1-byte, or mixed.
pub fn packed_run(n: usize, mixed: bool) -> (Vec<u64>, Vec<u8>) {
    let values = if mixed { mixed_values(n) } else { values_of_len(1, n) };
    let bytes = encode_all(&values);
    (values, bytes)
}

/// The same run with its length prefix, as prost's `merge_repeated` expects.
pub fn with_len_prefix(run: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    push_varint(&mut out, run.len() as u64);
    out.extend_from_slice(run);
    out
}

/// `len` bytes of ASCII text.
pub fn ascii_string(len: usize) -> Vec<u8> {
    let text = b"The quick brown fox jumps over the lazy dog. 0123456789 ";
    text.iter().copied().cycle().take(len).collect()
}

/// `len` bytes of valid UTF-8 mixing 1-, 2-, 3- and 4-byte characters
/// (padded with ASCII to exactly `len`).
pub fn multibyte_string(len: usize) -> Vec<u8> {
    let chars = ['h', 'é', 'l', 'ö', '✓', 'w', '🦀', 'ß', '中', ' '];
    let mut s = String::new();
    let mut i = 0;
    while s.len() + 4 <= len {
        s.push(chars[i % chars.len()]);
        i += 1;
    }
    while s.len() < len {
        s.push('x');
    }
    assert!(s.len() == len && !s.is_ascii() || len < 4);
    s.into_bytes()
}
