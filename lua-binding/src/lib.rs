//! protolua: a protobuf codec for Lua (LuaJIT, Lua 5.1, 5.4, Tarantool).
//!
//! A schema is loaded at run time from a `FileDescriptorSet`, compiled into
//! flat plans, and every `Msg:encode(t)` / `Msg:decode(s)` is one C call
//! that walks the plan. Data flows `bytes → pbwire → plan walk → Lua table`
//! and back:
//!
//! | module | job |
//! |---|---|
//! | [`plan`] | the compiled, index-linked description of messages and enums |
//! | [`compile`] | descriptor set (via `prost-reflect`) → plans |
//! | [`features`] | editions: feature resolution into the same plan |
//! | [`decode`] | bytes → Lua table |
//! | [`encode`] | Lua table → bytes |
//! | [`key_index`] | key string → field by address, for encode's table walk |
//! | [`unknown`] | the side store of unknown-field bytes, `protolua.unknown` |
//! | [`int64`] | 64-bit integers across Lua flavours |
//! | [`host`] | Tarantool's exported C API (dlsym), state shared by a module's schemas |
//! | [`error`] | heap-free codec errors and raising them |
//! | [`lua`] | thin helpers over the raw C API |
//! | [`schema`] | schema userdata, `load`, schema methods |
//! | [`message_api`] | message handles and the encode/decode entry points |
//!
//! The Lua-facing surface is raw `mlua::ffi`; see `docs/LUA_API.md`.
#![allow(non_snake_case)]
// `L` is the Lua state, as in the C API.
// CodecError is large on purpose: it must carry its field path without heap
// memory (see `error`). It is only built on the cold path; Ok values are unit.
#![allow(clippy::result_large_err)]

#[cfg(feature = "luajit")]
pub mod bulk_array;
pub mod compile;
pub mod decode;
pub mod encode;
pub mod error;
pub mod features;
pub mod host;
pub mod int64;
pub mod json;
pub mod json_api;
pub mod key_index;
pub mod lua;
pub mod message_api;
pub mod plan;
pub mod schema;
#[cfg(feature = "luajit")]
pub mod shape_ctor;
#[cfg(feature = "luajit")]
pub mod tree_ctor;
#[cfg(feature = "luajit")]
pub mod tree_program;
pub mod unknown;

use std::os::raw::c_int;

use crate::lua::{ffi, lua_State};

/// Module version, exposed as `protolua._VERSION`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `require('protolua')`: build and return the module table.
///
/// # Safety
/// Called by Lua (`require`) with a valid state.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn luaopen_protolua(L: *mut lua_State) -> c_int {
    // SAFETY: setup-time construction of plain tables and closures.
    unsafe {
        ffi::luaL_checkstack(L, 16, c"protolua: luaopen".as_ptr());
        // Temporary-buffer metatable for re-entrant encodes.
        ffi::lua_pushlightuserdata(L, lua::static_key(&message_api::TEMP_BUF_MT));
        ffi::lua_createtable(L, 0, 1);
        lua::push_bytes(L, b"__gc");
        ffi::lua_pushcfunction(L, message_api::temp_buffers_gc);
        ffi::lua_rawset(L, -3);
        ffi::lua_rawset(L, ffi::LUA_REGISTRYINDEX);

        ffi::lua_createtable(L, 0, 4);
        let module = ffi::lua_gettop(L);
        schema::push_schema_metatable(L);
        let mt = ffi::lua_gettop(L);
        push_int64_helpers(L);
        let helpers = ffi::lua_gettop(L);
        unknown::create_store(L, helpers);
        host::create(L, helpers);
        ffi::lua_pushcfunction(L, lua::copy_bytes);
        lua::rawseti(L, helpers, lua::HELPER_COPY_BYTES);
        lua::push_bytes(L, b"unknown");
        ffi::lua_pushvalue(L, helpers);
        ffi::lua_pushcclosure(L, unknown::unknown_of, 1);
        ffi::lua_rawset(L, module);
        for (name, f) in [("load", schema::load as ffi::lua_CFunction), ("load_file", schema::load_file)] {
            lua::push_bytes(L, name.as_bytes());
            ffi::lua_pushvalue(L, mt);
            ffi::lua_pushvalue(L, helpers);
            ffi::lua_pushcclosure(L, f, 2);
            ffi::lua_rawset(L, module);
        }
        lua::push_bytes(L, b"_VERSION");
        lua::push_bytes(L, VERSION.as_bytes());
        ffi::lua_rawset(L, module);
        ffi::lua_settop(L, module);
        1
    }
}

/// Push the int64 helper table (LuaJIT: ctypes and classifier; else empty).
unsafe fn push_int64_helpers(L: *mut lua_State) {
    // SAFETY: loading and running our own constant chunk.
    unsafe {
        if lua::IS_LUAJIT {
            let src = int64::LUAJIT_HELPERS;
            let name = c"=protolua.int64";
            if ffi::luaL_loadbuffer(L, src.as_ptr().cast(), src.len(), name.as_ptr()) == 0
                && ffi::lua_pcall(L, 0, 1, 0) == 0
                && ffi::lua_type(L, -1) == ffi::LUA_TTABLE
            {
                return;
            }
            ffi::lua_pop(L, 1);
        }
        ffi::lua_createtable(L, 0, 0);
    }
}
