//! ZigZag: the mapping that `sint32`/`sint64` apply before varint encoding,
//! so that small negative numbers stay short (0→0, -1→1, 1→2, -2→3, …).

/// ZigZag-encodes an `sint32` value.
#[inline]
pub const fn encode_zigzag32(value: i32) -> u32 {
    ((value << 1) ^ (value >> 31)) as u32
}

/// ZigZag-decodes an `sint32` value.
#[inline]
pub const fn decode_zigzag32(value: u32) -> i32 {
    ((value >> 1) as i32) ^ -((value & 1) as i32)
}

/// ZigZag-encodes an `sint64` value.
#[inline]
pub const fn encode_zigzag64(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

/// ZigZag-decodes an `sint64` value.
#[inline]
pub const fn decode_zigzag64(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}
