//! The bench harness's floors (`bench-harness/src/floor.rs`, included
//! here, not copied) as a Lua module for Tarantool's LuaJIT: bench-only,
//! not part of the protolua rock.
//!
//! `require('protolua_floors')` returns the function the embedded harness
//! installs as the global `protolua_floors`; `bench-harness/tarantool/run.lua`
//! installs it the same way when `PROTOLUA_FLOORS` names the directory of
//! this library (built as `protolua_floors.so` by
//! `bench-harness/tarantool/floors.sh`), and `matrix.lua` then times the
//! floor, protolua and msgpack in the same repetitions.

// `L` is the Lua state, as in the C API.
#![allow(non_snake_case)]

#[path = "../../src/floor.rs"]
mod floor;

use std::os::raw::c_int;

use protolua::lua::{ffi, lua_State};

/// `luaopen_protolua_floors`: pushes `protolua_floors` (see the harness's
/// `floor.rs`).
///
/// # Safety
/// Called by Lua (`require`).
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn luaopen_protolua_floors(L: *mut lua_State) -> c_int {
    // SAFETY: a C function gets LUA_MINSTACK free slots; one is used.
    unsafe { ffi::lua_pushcfunction(L, floor::make_floors) };
    1
}
