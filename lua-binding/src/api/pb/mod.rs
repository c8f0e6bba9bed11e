//! `protolua.pb` and `protolua.protoc`: lua-protobuf's API (starwing's `pb`
//! module and its `protoc.lua`) over protolua's schemas and codec.
//!
//! Both are Lua chunks (`pb.lua` with its table walks `walk.lua`, and
//! `protoc.lua`) embedded in the library;
//! the entry points below let Lua's all-in-one C loader find them in
//! `protolua.so` for `require('protolua.pb')` with no extra files.
//! See docs/PB_COMPAT.md.

use std::ffi::CStr;
use std::os::raw::c_int;

use crate::lua::{ffi, lua_State};

/// The `pb` facade: one schema registry per state, lua-protobuf's options.
const PB_LUA: &str = include_str!("pb.lua");
/// The facade's walks over Lua tables (hooks, '#' int64 strings, defaults):
/// a chunk returning the constructor `pb.lua` receives as its argument.
const WALK_LUA: &str = include_str!("walk.lua");
/// The `protoc` facade: `.proto` text through `protolua.parse`.
const PROTOC_LUA: &str = include_str!("protoc.lua");

/// Load one embedded chunk and call it with the `nargs` values below it on
/// the stack, leaving its one result.
///
/// # Safety
/// `L` valid with 2 free slots and `nargs` values pushed. Raises on a load
/// or run error (nothing on the Rust heap is owned here).
unsafe fn run_chunk(L: *mut lua_State, src: &'static str, name: &CStr, nargs: c_int) -> c_int {
    // SAFETY: our own constant chunk; `lua_error` only propagates the load
    // error message through this frame, which owns no heap memory.
    unsafe {
        if ffi::luaL_loadbuffer(L, src.as_ptr().cast(), src.len(), name.as_ptr()) != 0 {
            ffi::lua_error(L);
        }
        ffi::lua_insert(L, -1 - nargs);
        ffi::lua_call(L, nargs, 1);
        1
    }
}

/// `require('protolua.pb')`: the lua-protobuf `pb` facade.
///
/// # Safety
/// Called by Lua (`require`) with a valid state.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn luaopen_protolua_pb(L: *mut lua_State) -> c_int {
    // SAFETY: see `run_chunk`; the walk constructor is pb.lua's argument.
    unsafe {
        ffi::luaL_checkstack(L, 4, c"protolua.pb".as_ptr());
        run_chunk(L, WALK_LUA, c"=protolua.pb.walk", 0);
        run_chunk(L, PB_LUA, c"=protolua.pb", 1)
    }
}

/// `require('protolua.protoc')`: the lua-protobuf `protoc` facade.
///
/// # Safety
/// Called by Lua (`require`) with a valid state.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn luaopen_protolua_protoc(L: *mut lua_State) -> c_int {
    // SAFETY: see `run_chunk`.
    unsafe {
        ffi::luaL_checkstack(L, 2, c"protolua.protoc".as_ptr());
        run_chunk(L, PROTOC_LUA, c"=protolua.protoc", 0)
    }
}
