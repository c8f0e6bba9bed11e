//! Unknown fields: where a decoded table's unknown bytes live.
//!
//! A decode keeps the raw bytes of every field the schema does not know (in
//! wire order, tags included) and an encode writes them back after the known
//! fields, as protobuf C++ does. The bytes are not stored in the table
//! itself — they would show in `pairs()` and in Tarantool's msgpack/json —
//! but in one weak-keyed side table per Lua state, kept as slot
//! [`Helper::Unknown`] of the module's helper table. `store[t]` is one string
//! or, when the unknown fields came in several runs (interleaved with known
//! ones, or merged from repeated sub-messages), a table of pieces in wire
//! order: appending never copies what is there, so the cost stays linear.
//! Encode writes the pieces one after another; `protolua.unknown(t)` joins
//! them once and keeps the joined string. A table that is collected drops
//! its entry with it.
//!
//! Cost: nothing for messages without unknown fields on decode. Encode
//! looks in the store only once some decode has put bytes there (a flag in
//! [`crate::lua::host::ModuleState`]); from then on, one raw lookup per message
//! table.

use std::os::raw::c_int;

use crate::lua::{self, ffi, lua_State, upvalue};
use crate::slots::Helper;

/// Create the weak-keyed store and put it in the helper table at `helpers`.
///
/// # Safety
/// `L` valid with 4 free slots; `helpers` an absolute index of a table.
pub unsafe fn create_store(L: *mut lua_State, helpers: c_int) {
    // SAFETY: plain table construction.
    unsafe {
        ffi::lua_createtable(L, 0, 0);
        ffi::lua_createtable(L, 0, 1);
        lua::push_bytes(L, b"__mode");
        lua::push_bytes(L, b"k");
        ffi::lua_rawset(L, -3);
        ffi::lua_setmetatable(L, -2);
        lua::rawseti(L, helpers, Helper::Unknown.at());
    }
}

/// Push the store and return its index (`None`, nothing pushed, if missing).
///
/// # Safety
/// `L` valid with 1 free slot; `helpers` indexes the helper table.
pub unsafe fn push_store(L: *mut lua_State, helpers: c_int) -> Option<c_int> {
    // SAFETY: raw read of our own table.
    unsafe {
        if lua::rawgeti(L, helpers, Helper::Unknown.at()) != ffi::LUA_TTABLE {
            ffi::lua_pop(L, 1);
            return None;
        }
        Some(ffi::lua_gettop(L))
    }
}

/// Call `f` with each string of the pieces table at `idx` (as decode
/// stores interleaved unknown fields), in order.
///
/// # Safety
/// `L` valid with one free slot; `idx` holds a table. Raw reads only: no
/// Lua error can be raised while `f` runs.
pub unsafe fn for_each_piece(L: *mut lua_State, idx: c_int, mut f: impl FnMut(&[u8])) {
    // SAFETY: raw reads of a table we made; each piece is popped after use.
    unsafe {
        let idx = lua::absindex(L, idx);
        for i in 1..=lua::rawlen(L, idx) as i64 {
            if lua::rawgeti(L, idx, i) == ffi::LUA_TSTRING {
                f(lua::string_bytes(L, -1));
            }
            ffi::lua_pop(L, 1);
        }
    }
}

/// `protolua.unknown(t)`: the raw bytes of `t`'s unknown fields, or nil.
/// Upvalue 1: the helper table.
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn unknown_of(L: *mut lua_State) -> c_int {
    // SAFETY: raw reads; the argument is only used as a key.
    unsafe {
        if ffi::lua_type(L, 1) != ffi::LUA_TTABLE {
            ffi::lua_pushnil(L);
            return 1;
        }
        if lua::rawgeti(L, upvalue(1), Helper::Unknown.at()) != ffi::LUA_TTABLE {
            ffi::lua_pushnil(L);
            return 1;
        }
        let store = ffi::lua_gettop(L);
        ffi::lua_pushvalue(L, 1);
        if lua::rawget(L, store) == ffi::LUA_TTABLE {
            // Pieces: join them once (protected, so that out of memory is
            // raised after the Vec is freed), and keep the string.
            let mut joined = Vec::new();
            for_each_piece(L, -1, |b| joined.extend_from_slice(b));
            let ok = lua::push_bytes_protected(L, upvalue(1), &joined);
            drop(joined);
            if !ok {
                ffi::lua_error(L);
            }
            ffi::lua_pushvalue(L, 1);
            ffi::lua_pushvalue(L, -2);
            ffi::lua_rawset(L, store);
        }
        1
    }
}
