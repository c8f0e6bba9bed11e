//! Setting named fields of the table on top of the stack: the cold paths
//! that build descriptive tables (reflection, `Msg:fields()`).

use crate::lua::{self, ffi, lua_State};

/// `t[name] = s` for the table on top.
///
/// # Safety
/// Table on top, 2 free slots.
pub unsafe fn set_str(L: *mut lua_State, name: &str, s: &str) {
    // SAFETY: caller's contract.
    unsafe {
        lua::push_bytes(L, name.as_bytes());
        lua::push_bytes(L, s.as_bytes());
        ffi::lua_rawset(L, -3);
    }
}

/// `t[name] = n` for the table on top.
///
/// # Safety
/// Table on top, 2 free slots.
pub unsafe fn set_int(L: *mut lua_State, name: &str, n: i64) {
    // SAFETY: caller's contract.
    unsafe {
        lua::push_bytes(L, name.as_bytes());
        lua::push_small_int(L, n);
        ffi::lua_rawset(L, -3);
    }
}

/// `t[name] = b` for the table on top.
///
/// # Safety
/// Table on top, 2 free slots.
pub unsafe fn set_bool(L: *mut lua_State, name: &str, b: bool) {
    // SAFETY: caller's contract.
    unsafe {
        lua::push_bytes(L, name.as_bytes());
        lua::push_bool(L, b);
        ffi::lua_rawset(L, -3);
    }
}
