//! The output buffer and its scratch: map entries sorted before they are
//! written, field bytes reordered by field number.

use super::*;

/// A map entry already written, waiting to be put in key order.
#[derive(Clone, Copy)]
pub struct MapEntry {
    pub(in crate::binary::encode) key: MapKey,
    pub(in crate::binary::encode) start: usize,
    pub(in crate::binary::encode) end: usize,
}

#[derive(Clone, Copy)]
pub(in crate::binary::encode) enum MapKey {
    Int(i128),
    Bool(bool),
    /// Pointer and length of a key string anchored in the map table.
    Str(*const u8, usize),
}

impl MapKey {
    pub(in crate::binary::encode) fn cmp(&self, other: &MapKey) -> Ordering {
        match (self, other) {
            (MapKey::Int(a), MapKey::Int(b)) => a.cmp(b),
            (MapKey::Bool(a), MapKey::Bool(b)) => a.cmp(b),
            (MapKey::Str(pa, la), MapKey::Str(pb, lb)) => {
                // SAFETY: both strings are keys of the map table being encoded,
                // which is on the Lua stack and not modified during the encode.
                let (a, b) = unsafe { (std::slice::from_raw_parts(*pa, *la), std::slice::from_raw_parts(*pb, *lb)) };
                a.cmp(b)
            }
            _ => Ordering::Equal,
        }
    }
}

/// The bytes of one field written by the walk, waiting to be put in
/// field-number order.
#[derive(Clone, Copy)]
pub struct FieldBytes {
    pub(in crate::binary::encode) number: u32,
    pub(in crate::binary::encode) start: usize,
    pub(in crate::binary::encode) end: usize,
}

/// The reusable state of an encode: output buffer and reordering scratch.
#[derive(Default)]
pub struct EncodeBuffers {
    /// Output.
    pub w: Writer,
    /// Map entries being sorted (stack discipline across nesting).
    pub entries: Vec<MapEntry>,
    /// Fields written by the walk (stack discipline across nesting).
    pub fields: Vec<FieldBytes>,
}

impl EncodeBuffers {
    /// Empty the buffers for a new encode (capacity is kept).
    pub fn clear(&mut self) {
        self.w.clear();
        self.entries.clear();
        self.fields.clear();
    }

    /// After a call: let go of an output buffer over 4 MiB of which the
    /// call used less than a quarter (one huge message does not pin its
    /// memory).
    pub fn trim(&mut self) {
        let (len, cap) = (self.w.len(), self.w.capacity());
        if cap > (4 << 20) && len < cap / 4 {
            self.w = Writer::new();
        }
    }
}

/// Rewrite `buf[region..]`, made of the byte ranges `parts` (in write
/// order, covering it exactly), in the order `parts` now has: append the
/// parts in order, then move the result down over the original.
pub(in crate::binary::encode) fn reorder_parts(
    buf: &mut Vec<u8>,
    region: usize,
    parts: impl Iterator<Item = (usize, usize)>,
) {
    let end = buf.len();
    for (start, stop) in parts {
        buf.extend_from_within(start..stop);
    }
    buf.copy_within(end.., region);
    buf.truncate(end);
}

/// Swap the two parts of `buf[region..]`: its first `first` bytes and the
/// rest (either may be empty: a proto3 zero value writes nothing). Up to
/// 16 bytes (two small fields, the sparse tables' common case) it is three
/// 16-byte copies through a 32-byte stack buffer holding the region twice
/// over, whose window at `first` is the rotated region; the copies may
/// carry bytes of the vector's spare capacity (16 bytes are reserved),
/// which stay past its length. `rotate_left` would make three libc calls
/// (copy out, move down, copy back) for a few bytes.
pub(in crate::binary::encode) fn rotate_region(buf: &mut Vec<u8>, region: usize, first: usize) {
    let len = buf.len();
    let m = len - region;
    if first == 0 || first >= m {
        return;
    }
    if m > 16 {
        buf[region..].rotate_left(first);
        return;
    }
    buf.reserve(16);
    let mut twice = MaybeUninit::<[u8; 32]>::uninit();
    // SAFETY: `region + 16 <= len + 16 <= capacity`, so the 16 bytes read
    // and written at `region` are inside the allocation; `m <= 16` and
    // `first < m` keep both copies into `twice` (at 0 and `m`) and the
    // copy out of it (at `first`) inside its 32 bytes. The copies move
    // possibly uninitialised bytes as raw memory, never read as values;
    // bytes `region..len` all come from the initialised region, the rest
    // land past `len`.
    unsafe {
        let p = buf.as_mut_ptr().add(region);
        let t = twice.as_mut_ptr().cast::<u8>();
        std::ptr::copy_nonoverlapping(p, t, 16);
        std::ptr::copy_nonoverlapping(p, t.add(m), 16);
        std::ptr::copy_nonoverlapping(t.add(first), p, 16);
    }
}
