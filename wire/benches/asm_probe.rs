//! Not a benchmark: `#[inline(never)]` wrappers around the hot primitives so
//! their machine code can be read with `cargo asm` (see docs/WIRE_AARCH64.md):
//!
//! ```text
//! cargo asm -p pbwire --bench asm_probe --target aarch64-unknown-linux-gnu probe_decode_varint
//! ```
//!
//! Running it (`cargo bench --bench asm_probe`) only calls each wrapper once.
#![allow(missing_docs)]

use std::hint::black_box;

use pbwire::packed::{count_packed_varints, decode_packed_varints};
use pbwire::utf8::validate_utf8;
use pbwire::varint::decode_varint;
use pbwire::{Reader, Result, Tag, Writer};

/// `decode_varint` on its own: the 1-byte test, the unrolled path, the slow path call.
#[inline(never)]
pub fn probe_decode_varint(buf: &[u8]) -> Result<(u64, usize)> {
    decode_varint(buf)
}

/// `Reader::read_varint`: decode plus the cursor update.
#[inline(never)]
pub fn probe_read_varint(r: &mut Reader<'_>) -> Result<u64> {
    r.read_varint()
}

/// `Reader::read_tag`: decode plus validation.
#[inline(never)]
pub fn probe_read_tag(r: &mut Reader<'_>) -> Result<Tag> {
    r.read_tag()
}

/// The packed decode loop.
#[inline(never)]
pub fn probe_decode_packed(run: &[u8], out: &mut [u64]) -> Result<usize> {
    decode_packed_varints(run, 0, out)
}

/// The packed count (the vectorised byte compare).
#[inline(never)]
pub fn probe_count_packed(run: &[u8]) -> usize {
    count_packed_varints(run)
}

/// `validate_utf8`: the short (< SIMD_THRESHOLD) ASCII path and the dispatch.
#[inline(never)]
pub fn probe_validate_utf8(bytes: &[u8]) -> Result<()> {
    validate_utf8(bytes, 0)
}

/// `Writer::put_varint`.
#[inline(never)]
pub fn probe_put_varint(w: &mut Writer, v: u64) {
    w.put_varint(v)
}

fn main() {
    let bytes = [0x96u8, 0x01, 0x08, 0x01];
    let _ = black_box(probe_decode_varint(black_box(&bytes)));
    let mut r = Reader::new(&bytes);
    let _ = black_box(probe_read_varint(&mut r));
    let _ = black_box(probe_read_tag(&mut r));
    let mut out = [0u64; 4];
    let _ = black_box(probe_decode_packed(black_box(&bytes), &mut out));
    black_box(probe_count_packed(black_box(&bytes)));
    let _ = black_box(probe_validate_utf8(black_box(b"hello")));
    let mut w = Writer::new();
    probe_put_varint(&mut w, black_box(300));
    black_box(w.len());
}
