//! `protolua.pb` and `protolua.protoc`: lua-protobuf's API (starwing's `pb`
//! module and its `protoc.lua`) over protolua's schemas and codec.
//!
//! Both are Lua chunks (`pb.lua`, `protoc.lua`) embedded in the library;
//! the entry points below let Lua's all-in-one C loader find them in
//! `protolua.so` for `require('protolua.pb')` with no extra files.
//! See docs/PB_COMPAT.md.

use std::ffi::CStr;
use std::os::raw::c_int;

use crate::lua::{ffi, lua_State};

/// The `pb` facade: one schema registry per state, lua-protobuf's options.
const PB_LUA: &str = include_str!("pb.lua");
/// The `protoc` facade: `.proto` text through `protolua.parse`.
const PROTOC_LUA: &str = include_str!("protoc.lua");

/// Load and run one embedded chunk, leaving its result on the stack.
///
/// # Safety
/// `L` valid with 2 free slots. Raises on a load or run error (nothing on
/// the Rust heap is owned here).
unsafe fn run_chunk(L: *mut lua_State, src: &'static str, name: &CStr) -> c_int {
    // SAFETY: our own constant chunk; `lua_error` only propagates the load
    // error message through this frame, which owns no heap memory.
    unsafe {
        if ffi::luaL_loadbuffer(L, src.as_ptr().cast(), src.len(), name.as_ptr()) != 0 {
            ffi::lua_error(L);
        }
        ffi::lua_call(L, 0, 1);
        1
    }
}

/// `require('protolua.pb')`: the lua-protobuf `pb` facade.
///
/// # Safety
/// Called by Lua (`require`) with a valid state.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn luaopen_protolua_pb(L: *mut lua_State) -> c_int {
    // SAFETY: see `run_chunk`.
    unsafe { run_chunk(L, PB_LUA, c"=protolua.pb") }
}

/// `require('protolua.protoc')`: the lua-protobuf `protoc` facade.
///
/// # Safety
/// Called by Lua (`require`) with a valid state.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn luaopen_protolua_protoc(L: *mut lua_State) -> c_int {
    // SAFETY: see `run_chunk`.
    unsafe { run_chunk(L, PROTOC_LUA, c"=protolua.protoc") }
}
