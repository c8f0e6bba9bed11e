//! protolua: a protobuf codec for Lua (LuaJIT, Lua 5.1, 5.4, Tarantool).
//!
//! A schema is loaded at run time from a `FileDescriptorSet`, compiled into
//! flat plans, and every `Msg:encode(t)` / `Msg:decode(s)` is one C call
//! that walks the plan. Data flows `bytes → pbwire → plan walk → Lua table`
//! and back:
//!
//! | layer | job |
//! |---|---|
//! | [`lua`], [`slots`] | raw C-API helpers, the host (Tarantool), 64-bit integers; every Lua index by number |
//! | [`plan`] | descriptor set → compiled plans (editions features resolved), the options codecs run with |
//! | [`binary`] | the binary codec: [`binary::decode`] (bytes → Lua table), [`binary::encode`] (Lua table → bytes) |
//! | [`text`] | the text format codec |
//! | [`proto`] | `.proto` sources → descriptor set (protox), no protoc |
//! | [`api`] | the Lua API: schema userdata, message handles, option tables, reflection, `protolua.grpc` |
//! | [`error`], [`unknown`] | heap-free codec errors; the side store of unknown-field bytes |
//!
//! Dependencies point one way: `slots` ← `lua` ← `plan` ← `error`, `unknown` ←
//! codecs ← `api` ← this file (checked by `tests/layers.rs`). See
//! `docs/ARCHITECTURE.md`.
//!
//! The Lua-facing surface is raw `mlua::ffi`; see `docs/LUA_API.md`.
#![allow(non_snake_case)]
// `L` is the Lua state, as in the C API.
// CodecError is large on purpose: it must carry its field path without heap
// memory (see `error`). It is only built on the cold path; Ok values are unit.
#![allow(clippy::result_large_err)]

pub mod api;
pub mod binary;
pub mod error;
pub mod json;
pub mod lua;
pub mod plan;
pub mod proto;
pub mod slots;
pub mod text;
pub mod unknown;

use std::os::raw::c_int;

use crate::lua::{ffi, lua_State};
use crate::slots::Helper;

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
        refuse_wrong_host(L);
        lua::array_part::probe(L);
        // Temporary-buffer metatable for re-entrant encodes.
        ffi::lua_pushlightuserdata(L, lua::static_key(&api::message::TEMP_BUF_MT));
        ffi::lua_createtable(L, 0, 1);
        lua::push_bytes(L, b"__gc");
        ffi::lua_pushcfunction(L, api::message::temp_buffers_gc);
        ffi::lua_rawset(L, -3);
        ffi::lua_rawset(L, ffi::LUA_REGISTRYINDEX);

        ffi::lua_createtable(L, 0, 4);
        let module = ffi::lua_gettop(L);
        api::schema::push_schema_metatable(L);
        let mt = ffi::lua_gettop(L);
        push_int64_helpers(L);
        let helpers = ffi::lua_gettop(L);
        binary::encode::fetch::install_helpers(L, helpers);
        #[cfg(feature = "luajit")]
        binary::decode::ctor::bulk::install_helpers(L, helpers);
        unknown::create_store(L, helpers);
        lua::host::create(L, helpers);
        ffi::lua_pushcfunction(L, lua::copy_bytes);
        lua::rawseti(L, helpers, Helper::CopyBytes.at());
        lua::push_bytes(L, b"unknown");
        ffi::lua_pushvalue(L, helpers);
        ffi::lua_pushcclosure(L, unknown::unknown_of, 1);
        ffi::lua_rawset(L, module);
        for (name, f) in [
            ("load", api::schema::load as ffi::lua_CFunction),
            ("load_file", api::schema::load_file),
            ("load_proto", api::proto::load_proto),
            ("parse", api::proto::parse),
        ] {
            lua::push_bytes(L, name.as_bytes());
            ffi::lua_pushvalue(L, mt);
            ffi::lua_pushvalue(L, helpers);
            ffi::lua_pushcclosure(L, f, 2);
            ffi::lua_rawset(L, module);
        }
        lua::push_bytes(L, b"grpc");
        api::grpc::push_module(L, helpers);
        ffi::lua_rawset(L, module);
        lua::push_bytes(L, b"_VERSION");
        lua::push_bytes(L, VERSION.as_bytes());
        ffi::lua_rawset(L, module);
        // For the tests: whether the strict array check's fast path is on.
        lua::push_bytes(L, b"_array_size_at");
        match lua::array_part::offset() {
            Some(at) => ffi::lua_pushnumber(L, at as f64),
            None => ffi::lua_pushboolean(L, 0),
        }
        ffi::lua_rawset(L, module);
        ffi::lua_settop(L, module);
        1
    }
}

/// Push the int64 helper table (LuaJIT: ctypes and classifier; else empty).
///
/// # Safety
/// `L` valid with 2 free slots. May raise on out-of-memory (no Rust heap
/// memory is owned here).
unsafe fn push_int64_helpers(L: *mut lua_State) {
    // SAFETY: loading and running our own constant chunk.
    unsafe {
        if lua::IS_LUAJIT {
            let src = lua::int64::LUAJIT_HELPERS;
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

/// A Lua 5.1 build refuses to load into LuaJIT (which also runs Lua 5.1
/// modules): it would lack LuaJIT's 64-bit integers and fast paths and fail
/// where the LuaJIT build works. Other wrong pairings fail at `require`
/// already (undefined symbols).
///
/// # Safety
/// `L` valid with two free slots; raises (no Rust heap held) under LuaJIT.
unsafe fn refuse_wrong_host(L: *mut lua_State) {
    #[cfg(feature = "lua51")]
    // SAFETY: a global read and a pop; the raise owns nothing.
    unsafe {
        ffi::lua_getglobal_(L, c"jit".as_ptr());
        let is_luajit = ffi::lua_type(L, -1) == ffi::LUA_TTABLE;
        ffi::lua_pop(L, 1);
        if is_luajit {
            crate::error::raise_fmt(
                L,
                format_args!("this build is for PUC Lua 5.1; under LuaJIT or Tarantool install the LuaJIT build"),
            )
        }
    }
    #[cfg(not(feature = "lua51"))]
    let _ = L;
}
