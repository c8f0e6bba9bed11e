//! Thin, version-aware helpers over `mlua::ffi` (the raw Lua C API).
//!
//! Everything here is `#[inline(always)]` and maps to one or two C API
//! calls; the differences between LuaJIT/5.1 (doubles only, cdata for
//! 64-bit values) and 5.4 (native integers) are confined to this file and
//! [`crate::lua::int64`].

pub mod array_part;
pub mod host;
pub mod int64;
pub mod table;

use crate::slots::Helper;
use std::os::raw::{c_int, c_void};

pub use mlua::ffi::{self, lua_State};

/// LuaJIT's type tag for cdata (no PUC Lua type has this number).
pub const LUA_TCDATA: c_int = 10;

/// True when built for LuaJIT.
pub const IS_LUAJIT: bool = cfg!(feature = "luajit");

/// True when Lua has a native 64-bit integer subtype (5.3+).
pub const HAS_INTEGERS: bool = cfg!(any(feature = "lua54"));

/// Pseudo-index of upvalue `i` (1-based).
#[inline(always)]
pub fn upvalue(i: c_int) -> c_int {
    ffi::lua_upvalueindex(i)
}

/// Push a byte string (copied or interned by Lua).
///
/// # Safety
/// `L` valid with a free slot. May raise on out-of-memory.
#[inline(always)]
pub unsafe fn push_bytes(L: *mut lua_State, bytes: &[u8]) {
    // SAFETY: caller's contract; Lua copies the bytes (none for length 0,
    // so an empty slice's dangling pointer is never read).
    unsafe {
        // mlua's 5.1/LuaJIT wrapper also calls lua_tolstring to return the
        // pointer, one C API call per string the hot paths never use.
        #[cfg(any(feature = "luajit", feature = "lua51"))]
        ffi::lua_pushlstring_(L, bytes.as_ptr().cast(), bytes.len());
        #[cfg(not(any(feature = "luajit", feature = "lua51")))]
        ffi::lua_pushlstring(L, bytes.as_ptr().cast(), bytes.len());
    }
}

/// A C function `(lightuserdata p, integer n) -> string`: the `n` bytes at
/// `p` as a Lua string. Kept in the helper table so that
/// [`push_bytes_protected`] can call it without allocating a closure.
///
/// # Safety
/// Called only by [`push_bytes_protected`], with a pointer to `n` readable bytes.
pub unsafe extern "C-unwind" fn copy_bytes(L: *mut lua_State) -> c_int {
    // SAFETY: the caller passes a live buffer and its length.
    unsafe {
        let p = ffi::lua_touserdata(L, 1) as *const u8;
        let n = ffi::lua_tointeger(L, 2) as usize;
        push_bytes(L, std::slice::from_raw_parts(p, n));
    }
    1
}

/// Push `bytes` as a string in protected mode: an out-of-memory error is
/// caught, and returned as `false` with the error object pushed instead, so
/// that the caller can drop the Rust memory it holds before raising it
/// (`lua_error`). Allocates nothing outside the protected call.
///
/// # Safety
/// `L` valid with 3 free slots; `helpers` indexes the module's helper table.
pub unsafe fn push_bytes_protected(L: *mut lua_State, helpers: c_int, bytes: &[u8]) -> bool {
    // SAFETY: rawgeti, pushlightuserdata and pushnumber do not allocate;
    // copy_bytes reads `bytes` while it is borrowed here.
    unsafe {
        rawgeti(L, helpers, Helper::CopyBytes.at());
        ffi::lua_pushlightuserdata(L, bytes.as_ptr() as *mut c_void);
        ffi::lua_pushnumber(L, bytes.len() as f64);
        ffi::lua_pcall(L, 2, 1, 0) == 0
    }
}

/// The bytes of the string at `idx`; the caller has checked `lua_type == LUA_TSTRING`.
///
/// The slice lives as long as the string stays reachable (on the stack or
/// in a table that is not modified), which the codec guarantees by only
/// using it while the value is anchored.
///
/// # Safety
/// `idx` holds a string.
#[inline(always)]
pub unsafe fn string_bytes<'a>(L: *mut lua_State, idx: c_int) -> &'a [u8] {
    let mut len = 0usize;
    // SAFETY: a string slot: lua_tolstring does not convert and cannot raise.
    unsafe {
        let p = ffi::lua_tolstring(L, idx, &mut len);
        std::slice::from_raw_parts(p.cast::<u8>(), len)
    }
}

/// An address identifying the string at `idx` (the caller has checked
/// `lua_type == LUA_TSTRING`), never 0: on LuaJIT and Lua 5.4 the string
/// object (`lua_topointer`, which 5.4 documents for strings and LuaJIT
/// answers with the object: cheaper than `lua_tolstring`, which also
/// stores the length), on 5.1 (whose `lua_topointer` gives strings none)
/// its bytes. Two interned strings with the same bytes are one object, so
/// they have one address; the address holds while the string is reachable
/// (no Lua collector moves objects).
///
/// # Safety
/// `idx` holds a string.
#[inline(always)]
pub unsafe fn string_id(L: *mut lua_State, idx: c_int) -> usize {
    // SAFETY: a string slot: neither call converts or raises.
    unsafe {
        if cfg!(feature = "lua51") && !IS_LUAJIT {
            string_bytes(L, idx).as_ptr() as usize
        } else {
            ffi::lua_topointer(L, idx) as usize
        }
    }
}

/// Push a 32-bit-or-smaller integer the way this Lua represents integers.
/// Where `lua_Integer` has 64 bits, that is `lua_pushinteger` on every Lua:
/// on LuaJIT and 5.1 it makes the same double as `lua_pushnumber` without
/// its NaN check (callgrind: ~3 instructions less per value). A 32-bit
/// `lua_Integer` (32-bit LuaJIT and 5.1) would wrap uint32 values of 2^31
/// and up, so there the value goes as a double.
///
/// # Safety
/// `L` valid with a free slot.
#[inline(always)]
pub unsafe fn push_small_int(L: *mut lua_State, v: i64) {
    // SAFETY: caller's contract.
    unsafe {
        if HAS_INTEGERS || size_of::<ffi::lua_Integer>() >= 8 {
            ffi::lua_pushinteger(L, v as ffi::lua_Integer);
        } else {
            ffi::lua_pushnumber(L, v as f64);
        }
    }
}

/// Push a Lua number.
///
/// # Safety
/// `L` valid with a free slot.
#[inline(always)]
pub unsafe fn push_number(L: *mut lua_State, v: f64) {
    // SAFETY: caller's contract.
    unsafe { ffi::lua_pushnumber(L, v) }
}

/// Push a boolean.
///
/// # Safety
/// `L` valid with a free slot.
#[inline(always)]
pub unsafe fn push_bool(L: *mut lua_State, v: bool) {
    // SAFETY: caller's contract.
    unsafe { ffi::lua_pushboolean(L, v as c_int) }
}

/// `lua_rawgeti(L, idx, n)`, returning the type pushed.
///
/// # Safety
/// `idx` is a table, `L` has a free slot.
#[inline(always)]
pub unsafe fn rawgeti(L: *mut lua_State, idx: c_int, n: i64) -> c_int {
    // SAFETY: caller's contract; raw access runs no metamethods and cannot raise.
    unsafe {
        let ty;
        // 5.3+'s `lua_rawgeti` returns the type pushed: one C API call
        // instead of two (per array element in `each_element`).
        #[cfg(not(any(feature = "luajit", feature = "lua51")))]
        {
            ty = ffi::lua_rawgeti(L, idx, n as ffi::lua_Integer);
        }
        #[cfg(any(feature = "luajit", feature = "lua51"))]
        {
            push_rawgeti(L, idx, n);
            ty = ffi::lua_type(L, -1);
        }
        ty
    }
}

/// `lua_rawgeti(L, idx, n)` without asking for the type: one C API call.
///
/// mlua's 5.1/LuaJIT compatibility wrapper adds a `lua_type` call (to mimic
/// the 5.3+ return value) and a checked index conversion; the hot paths
/// push key strings this way and never look at the type.
///
/// # Safety
/// `idx` is a table, `L` has a free slot; `n` fits a C `int` on 5.1/LuaJIT.
#[inline(always)]
pub unsafe fn push_rawgeti(L: *mut lua_State, idx: c_int, n: i64) {
    // SAFETY: caller's contract.
    unsafe {
        #[cfg(any(feature = "luajit", feature = "lua51"))]
        ffi::lua_rawgeti_(L, idx, n as c_int);
        #[cfg(not(any(feature = "luajit", feature = "lua51")))]
        ffi::lua_rawgeti(L, idx, n as ffi::lua_Integer);
    }
}

/// `lua_rawseti(L, idx, n)`: pops the value.
///
/// # Safety
/// `idx` is a table (absolute or pseudo index), a value is on top. May raise
/// on out-of-memory when the table grows.
#[inline(always)]
pub unsafe fn rawseti(L: *mut lua_State, idx: c_int, n: i64) {
    // SAFETY: caller's contract.
    unsafe {
        // mlua's 5.1/LuaJIT wrapper converts with a panicking `try_into`.
        // No index here passes i32::MAX: decoded arrays have at most one
        // element per input byte, and a 5.1/LuaJIT string is shorter than
        // 2^31 bytes, so the plain conversion is exact.
        #[cfg(any(feature = "luajit", feature = "lua51"))]
        ffi::lua_rawseti_(L, idx, n as c_int);
        #[cfg(not(any(feature = "luajit", feature = "lua51")))]
        ffi::lua_rawseti(L, idx, n as ffi::lua_Integer);
    }
}

/// `lua_rawget`: pops the key, pushes the value, returns its type.
///
/// # Safety
/// `idx` is a table, a key is on top.
#[inline(always)]
pub unsafe fn rawget(L: *mut lua_State, idx: c_int) -> c_int {
    // SAFETY: caller's contract; `lua_rawget` returns the type on 5.3+ and
    // in mlua's 5.1 compatibility wrapper alike.
    unsafe { ffi::lua_rawget(L, idx) }
}

/// Raw length (`#t` without `__len`).
///
/// # Safety
/// `idx` is a table.
#[inline(always)]
pub unsafe fn rawlen(L: *mut lua_State, idx: c_int) -> usize {
    // SAFETY: caller's contract.
    unsafe { ffi::lua_rawlen(L, idx) }
}

/// Convert a relative index to an absolute one.
///
/// # Safety
/// `idx` acceptable.
#[inline(always)]
pub unsafe fn absindex(L: *mut lua_State, idx: c_int) -> c_int {
    if idx > 0 || idx <= ffi::LUA_REGISTRYINDEX {
        idx
    } else {
        // SAFETY: caller's contract.
        unsafe { ffi::lua_gettop(L) + idx + 1 }
    }
}

/// Light-userdata address of a static, usable as a unique registry key.
pub fn static_key(k: &'static u8) -> *mut c_void {
    (k as *const u8).cast_mut().cast()
}

/// Integer value of a number slot, if it is an exact integer.
///
/// On 5.4 an integer subtype is taken as is; floats (and all LuaJIT numbers)
/// must be integral. `Err(v)` returns the float that is not integral.
///
/// # Safety
/// `idx` holds a number.
#[inline(always)]
pub unsafe fn number_to_int(L: *mut lua_State, idx: c_int) -> Result<NumInt, f64> {
    // SAFETY: caller's contract; these calls never raise on a number slot.
    unsafe {
        if HAS_INTEGERS && ffi::lua_isinteger(L, idx) != 0 {
            return Ok(NumInt::Int(ffi::lua_tointeger(L, idx) as i64));
        }
        let v = ffi::lua_tonumber(L, idx);
        float_to_int(v)
    }
}

/// The number at `idx` as an integer, if it is one (an integer, or a float
/// with an integral value in range): one C API call. Lua 5.3+ only.
///
/// # Safety
/// `idx` holds a number (a numeric string would convert too).
#[cfg(feature = "lua54")]
#[inline(always)]
pub unsafe fn number_as_integer(L: *mut lua_State, idx: c_int) -> Option<i64> {
    let mut isnum: c_int = 0;
    // SAFETY: caller's contract; never raises.
    let i = unsafe { ffi::lua_tointegerx(L, idx, &mut isnum) };
    (isnum != 0).then_some(i as i64)
}

/// Without integers in the Lua build this is never called.
///
/// # Safety
/// None needed; kept `unsafe` to match the Lua 5.3+ signature.
#[cfg(not(feature = "lua54"))]
#[inline(always)]
pub unsafe fn number_as_integer(_: *mut lua_State, _: c_int) -> Option<i64> {
    None
}

/// An integral float as an integer (signed when it fits, else unsigned).
#[inline(always)]
pub fn float_to_int(v: f64) -> Result<NumInt, f64> {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    const TWO_64: f64 = 18_446_744_073_709_551_616.0;
    if v.trunc() != v {
        return Err(v); // fraction, NaN
    }
    if (-TWO_63..TWO_63).contains(&v) {
        Ok(NumInt::Int(v as i64))
    } else if (TWO_63..TWO_64).contains(&v) {
        Ok(NumInt::UInt(v as u64))
    } else {
        Ok(NumInt::Huge(v)) // integral, but beyond any 64-bit integer (or inf)
    }
}

/// An integer read from Lua.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NumInt {
    /// Fits i64.
    Int(i64),
    /// ≥ 2^63, fits u64 (LuaJIT numbers, uint64 cdata).
    UInt(u64),
    /// Integral but beyond 64 bits (or infinite).
    Huge(f64),
}
