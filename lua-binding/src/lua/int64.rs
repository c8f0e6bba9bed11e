//! 64-bit integers across Lua flavours.
//!
//! * Lua 5.3+: native integers; uint64 ≥ 2^63 travels as the wrapped
//!   negative integer (the Lua convention), both ways.
//! * LuaJIT: a number when |v| ≤ 2^53 (exact in a double), otherwise a
//!   `cdata<int64_t>` / `cdata<uint64_t>`.
//!
//! LuaJIT has no C API to make or inspect cdata, so at load time we keep a
//! small helper table made by Lua code (`ffi.typeof` constructors and an
//! `ffi.istype` classifier). Making a cdata calls the constructor and then
//! writes the payload through `lua_topointer` (which LuaJIT defines as the
//! cdata payload address). These are the rare path: most 64-bit values in
//! real data fit in 53 bits.

use std::os::raw::c_int;

use crate::lua::{self, ffi, lua_State};

/// Largest magnitude a double holds exactly.
const EXACT: u64 = 1 << 53;

/// Lua source of the LuaJIT int64 helpers: `{ int64_t, uint64_t, classify }`,
/// slots 1..3 of the module's helper table.
pub const LUAJIT_HELPERS: &str = include_str!("int64.lua");

/// Push a signed 64-bit value; `helpers` indexes the helper table (LuaJIT).
///
/// # Safety
/// `L` valid with 2 free slots; `helpers` a valid index of the helper table
/// on LuaJIT. May raise on out-of-memory.
#[inline(always)]
pub unsafe fn push_i64(L: *mut lua_State, v: i64, helpers: c_int) {
    // SAFETY: caller's contract.
    unsafe {
        if lua::HAS_INTEGERS {
            ffi::lua_pushinteger(L, v as ffi::lua_Integer);
        } else if v.unsigned_abs() <= EXACT {
            ffi::lua_pushnumber(L, v as f64);
        } else {
            push_cdata(L, helpers, 1, v as u64);
        }
    }
}

/// Push an unsigned 64-bit value (see [`push_i64`]).
///
/// # Safety
/// As [`push_i64`].
#[inline(always)]
pub unsafe fn push_u64(L: *mut lua_State, v: u64, helpers: c_int) {
    // SAFETY: caller's contract.
    unsafe {
        if lua::HAS_INTEGERS {
            ffi::lua_pushinteger(L, v as i64 as ffi::lua_Integer);
        } else if v <= EXACT {
            ffi::lua_pushnumber(L, v as f64);
        } else {
            push_cdata(L, helpers, 2, v);
        }
    }
}

/// How decode returns 64-bit integers (option `int64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Int64Mode {
    /// Lua 5.4: integer. LuaJIT/5.1: a number when exact (|v| <= 2^53),
    /// else (LuaJIT) an `int64_t`/`uint64_t` cdata.
    Auto,
    /// Always a Lua number (may round above 2^53).
    Number,
    /// Always a decimal string.
    String,
    /// LuaJIT: always cdata; Lua 5.4: integer.
    Cdata,
}

/// Push `v` (signed when `signed`, else the bits of a u64) as `mode` says.
///
/// # Safety
/// As [`push_i64`].
#[inline]
pub unsafe fn push_with_mode(L: *mut lua_State, v: u64, signed: bool, mode: Int64Mode, helpers: c_int) {
    // SAFETY: caller's contract.
    unsafe {
        match mode {
            Int64Mode::Auto if signed => push_i64(L, v as i64, helpers),
            Int64Mode::Auto => push_u64(L, v, helpers),
            Int64Mode::Number => ffi::lua_pushnumber(L, if signed { v as i64 as f64 } else { v as f64 }),
            Int64Mode::String => {
                let mut buf = [0u8; 20];
                let s = if signed { fmt_i64(v as i64, &mut buf) } else { fmt_u64(v, &mut buf) };
                lua::push_bytes(L, s);
            }
            Int64Mode::Cdata if lua::HAS_INTEGERS || !lua::IS_LUAJIT => {
                if signed {
                    push_i64(L, v as i64, helpers)
                } else {
                    push_u64(L, v, helpers)
                }
            }
            Int64Mode::Cdata => push_cdata(L, helpers, if signed { 1 } else { 2 }, v),
        }
    }
}

/// Decimal digits of `v` in the tail of `buf`.
fn fmt_u64(mut v: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &buf[i..]
}

/// Decimal digits of `v` (with a sign when negative).
fn fmt_i64(v: i64, buf: &mut [u8; 20]) -> &[u8] {
    if v >= 0 {
        return fmt_u64(v as u64, buf);
    }
    let n = fmt_u64(v.unsigned_abs(), buf).len();
    // u64::MAX has 20 digits but |i64::MIN| only 19, so there is room.
    let start = buf.len() - n - 1;
    buf[start] = b'-';
    &buf[start..]
}

/// Push `bits` as a new cdata of the ctype in helper slot `ctor` (1:
/// `int64_t`, 2: `uint64_t`), or as a decimal string where there is none.
///
/// # Safety
/// As [`push_i64`] (LuaJIT); `ctor` is 1 or 2.
#[cold]
unsafe fn push_cdata(L: *mut lua_State, helpers: c_int, ctor: i64, bits: u64) {
    // SAFETY: the helper table holds a ctype at `ctor`; calling a ctype with
    // no arguments makes a zeroed scalar cdata whose payload `lua_topointer`
    // returns (8 bytes, 8-aligned); we overwrite it with the value.
    unsafe {
        if lua::rawgeti(L, helpers, ctor) == ffi::LUA_TNIL {
            // No ffi library in this state (the helper chunk could not load
            // it): a decimal string, which encode takes back unchanged.
            ffi::lua_pop(L, 1);
            let mut buf = [0u8; 20];
            let s = if ctor == 1 { fmt_i64(bits as i64, &mut buf) } else { fmt_u64(bits, &mut buf) };
            lua::push_bytes(L, s);
            return;
        }
        ffi::lua_call(L, 0, 1);
        let p = ffi::lua_topointer(L, -1) as *mut u64;
        p.write_unaligned(bits);
    }
}

/// What a cdata value on the stack is, as an integer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CdataInt {
    /// `int64_t`.
    I64(i64),
    /// `uint64_t`.
    U64(u64),
    /// A NULL pointer (`box.NULL`).
    Null,
    /// Some other cdata.
    Other,
}

/// Classify the cdata at `idx` (LuaJIT only; elsewhere always `Other`).
///
/// Runs the Lua classifier in protected mode, so no Lua error escapes.
///
/// # Safety
/// `L` valid with 3 free slots; `idx` absolute; `helpers` the helper table index.
pub unsafe fn read_cdata(L: *mut lua_State, idx: c_int, helpers: c_int) -> CdataInt {
    if !lua::IS_LUAJIT {
        return CdataInt::Other;
    }
    // SAFETY: helper slot 3 is the classifier; pcall catches any error it
    // raises (including out-of-memory) and leaves one value on the stack.
    unsafe {
        if lua::rawgeti(L, helpers, 3) != ffi::LUA_TFUNCTION {
            ffi::lua_pop(L, 1);
            return CdataInt::Other;
        }
        ffi::lua_pushvalue(L, idx);
        if ffi::lua_pcall(L, 1, 1, 0) != 0 {
            ffi::lua_pop(L, 1);
            return CdataInt::Other;
        }
        let class = ffi::lua_tonumber(L, -1) as i32;
        ffi::lua_pop(L, 1);
        let p = ffi::lua_topointer(L, idx) as *const u64;
        match class {
            1 => CdataInt::I64(p.read_unaligned() as i64),
            2 => CdataInt::U64(p.read_unaligned()),
            3 => CdataInt::Null,
            _ => CdataInt::Other,
        }
    }
}

/// Parse an optionally negative decimal integer (for 64-bit fields given as
/// strings). Returns `(negative, magnitude)`; `None` if malformed or > u64.
pub fn parse_decimal(s: &[u8]) -> Option<(bool, u64)> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some((neg, v))
}

/// lua-protobuf's `'#'` form of a 64-bit integer (`'#123'`, `'#-0x10'`:
/// `#`, an optional `-`, then decimal digits or `0x` and up to 16 hex
/// digits): sign and magnitude, or `None`.
pub fn parse_hash(s: &[u8]) -> Option<(bool, u64)> {
    let s = s.strip_prefix(b"#")?;
    let (neg, body) = match s.strip_prefix(b"-") {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let hex = body.strip_prefix(b"0x").or_else(|| body.strip_prefix(b"0X"));
    let Some(hex) = hex else {
        if body.first().is_some_and(|c| !c.is_ascii_digit()) {
            return None;
        }
        return parse_decimal(body).map(|(_, v)| (neg, v));
    };
    if hex.is_empty() || hex.len() > 16 {
        return None;
    }
    let mut v: u64 = 0;
    for &d in hex {
        v = v << 4 | u64::from((d as char).to_digit(16)?);
    }
    Some((neg, v))
}

#[cfg(test)]
mod tests {
    use super::{parse_decimal, parse_hash};

    #[test]
    fn hash_strings() {
        assert_eq!(parse_hash(b"#123"), Some((false, 123)));
        assert_eq!(parse_hash(b"#-9007199254740993"), Some((true, 9007199254740993)));
        assert_eq!(parse_hash(b"#0x20000000000001"), Some((false, 0x20000000000001)));
        assert_eq!(parse_hash(b"#-0X10"), Some((true, 16)));
        assert_eq!(parse_hash(b"#0xFFFFFFFFFFFFFFFF"), Some((false, u64::MAX)));
        assert_eq!(parse_hash(b"#0x10000000000000000"), None);
        assert_eq!(parse_hash(b"123"), None);
        assert_eq!(parse_hash(b"#"), None);
        assert_eq!(parse_hash(b"#0x"), None);
        assert_eq!(parse_hash(b"#--1"), None);
        assert_eq!(parse_hash(b"#+1"), None);
        assert_eq!(parse_hash(b"#0xg"), None);
    }

    #[test]
    fn decimal_strings() {
        assert_eq!(parse_decimal(b"0"), Some((false, 0)));
        assert_eq!(parse_decimal(b"-9223372036854775808"), Some((true, 1 << 63)));
        assert_eq!(parse_decimal(b"18446744073709551615"), Some((false, u64::MAX)));
        assert_eq!(parse_decimal(b"18446744073709551616"), None);
        assert_eq!(parse_decimal(b""), None);
        assert_eq!(parse_decimal(b"-"), None);
        assert_eq!(parse_decimal(b"12a"), None);
        assert_eq!(parse_decimal(b" 1"), None);
    }
}
