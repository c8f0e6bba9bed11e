//! `protolua.pb` and `protolua.protoc`: lua-protobuf's API (starwing's `pb`
//! module and its `protoc.lua`) over protolua's schemas and codec.
//!
//! Both are Lua chunks (`pb.lua` with its table walks `walk.lua`, and
//! `protoc.lua`) embedded in the library;
//! the entry points below let Lua's all-in-one C loader find them in
//! `protolua.so` for `require('protolua.pb')` with no extra files.
//! See docs/PB_COMPAT.md.

use std::cell::Cell;
use std::ffi::CStr;
use std::os::raw::c_int;

use crate::api::message::{MessageUd, decode_with, encode_with, message_decode, message_encode};
use crate::lua::{self, ffi, lua_State, upvalue};

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
    // SAFETY: see `run_chunk`; the walk constructor and the native entry
    // points' constructors are pb.lua's arguments.
    unsafe {
        ffi::luaL_checkstack(L, 6, c"protolua.pb".as_ptr());
        run_chunk(L, WALK_LUA, c"=protolua.pb.walk", 0);
        ffi::lua_createtable(L, 0, 5);
        ffi::lua_pushcfunction(L, make_entry);
        ffi::lua_setfield(L, -2, c"entry".as_ptr());
        ffi::lua_pushcfunction(L, make_last);
        ffi::lua_setfield(L, -2, c"last".as_ptr());
        ffi::lua_pushcfunction(L, reset_last);
        ffi::lua_setfield(L, -2, c"reset".as_ptr());
        ffi::lua_pushcfunction(L, make_encode);
        ffi::lua_setfield(L, -2, c"encode".as_ptr());
        ffi::lua_pushcfunction(L, make_decode);
        ffi::lua_setfield(L, -2, c"decode".as_ptr());
        run_chunk(L, PB_LUA, c"=protolua.pb", 2)
    }
}

/// Whether the value at `f` is a handle's bound `encode` or `decode`
/// (a closure made by `push_handle_metatable`, whose upvalues 1..3 are the
/// key table, the handle and the helper table).
///
/// # Safety
/// `L` valid; `f` an acceptable index.
unsafe fn is_bound_method(L: *mut lua_State, f: c_int) -> bool {
    // SAFETY: reading a value's C function pointer.
    match unsafe { ffi::lua_tocfunction(L, f) } {
        Some(g) => {
            std::ptr::fn_addr_eq(g, message_encode as ffi::lua_CFunction)
                || std::ptr::fn_addr_eq(g, message_decode as ffi::lua_CFunction)
        }
        None => false,
    }
}

/// `native.entry(Msg.encode)`: `{ handle, keys }` of a handle's bound
/// method, what [`pb_encode`]/[`pb_decode`] need of a type; an error for
/// anything else. Entries are made only here, so the entry points may
/// read them without checks.
///
/// # Safety
/// Called by Lua.
unsafe extern "C-unwind" fn make_entry(L: *mut lua_State) -> c_int {
    // SAFETY: the upvalues are read only from a closure checked to be a
    // bound method; 3 slots used above the argument.
    unsafe {
        if !is_bound_method(L, 1) {
            crate::error::raise_fmt(L, format_args!("protolua.pb: entry: expected a bound Msg.encode or Msg.decode"))
        }
        ffi::lua_settop(L, 1);
        ffi::lua_createtable(L, 2, 0);
        ffi::lua_getupvalue(L, 1, 2);
        lua::rawseti(L, 2, 1);
        ffi::lua_getupvalue(L, 1, 1);
        lua::rawseti(L, 2, 2);
        1
    }
}

/// The last type each native entry point served: the address of its name
/// string and its handle's payload, valid until pb.lua's `native.reset`
/// (every option or state change). The closure's upvalues 5..7 anchor
/// that name, handle and key table, so neither address can be reused.
#[derive(Default)]
struct LastType {
    /// `(name string address or 0, handle payload)` for `pb.encode`.
    enc: Cell<(usize, *const MessageUd)>,
    /// The same for `pb.decode`.
    dec: Cell<(usize, *const MessageUd)>,
}

/// Upvalues of the [`pb_encode`]/[`pb_decode`] closures.
#[derive(Clone, Copy)]
enum Up {
    /// Type name -> entry ([`make_entry`]) of the types served here.
    Fast = 1,
    /// The Lua function serving every other call.
    Slow,
    /// The module's helper table.
    Helpers,
    /// The [`LastType`] userdata, shared by both closures.
    Last,
    /// The last type's name string, handle and key table (anchors).
    Name,
    Handle,
    Keys,
}

impl Up {
    fn at(self) -> c_int {
        upvalue(self as c_int)
    }
}

/// The handle payload for the type named at slot 1 (a string), from the
/// closure's last type or its entry table; for a type not served here
/// `None`. On success the key table is at the returned index (an upvalue
/// on a repeat, slot 5 after a lookup, which also makes it the last type).
///
/// # Safety
/// `L` valid with 3 free slots and exactly 2 values; called from a
/// [`make_closure`] closure; `last` its cell.
#[inline(always)]
unsafe fn served<'a>(L: *mut lua_State, last: &Cell<(usize, *const MessageUd)>) -> Option<(&'a MessageUd, c_int)> {
    // SAFETY: the cached payload belongs to the handle anchored by upvalue
    // `Handle` (set together with the cell); an entry table holds a handle
    // (a MessageUd userdata) and its key table, as `make_entry` made it.
    unsafe {
        // The name's address: `lua_topointer` takes any value (0 for those
        // that are not objects; no object shares an anchored string's
        // address); 5.1 reads a string's bytes, so checks the type first.
        let id = if cfg!(feature = "lua51") && !lua::IS_LUAJIT {
            if ffi::lua_type(L, 1) != ffi::LUA_TSTRING {
                return None;
            }
            lua::string_id(L, 1)
        } else {
            ffi::lua_topointer(L, 1) as usize
        };
        let (addr, h) = last.get();
        if addr == id {
            return h.as_ref().map(|h| (h, Up::Keys.at()));
        }
        ffi::lua_pushvalue(L, 1);
        if lua::rawget(L, Up::Fast.at()) != ffi::LUA_TTABLE {
            return None;
        }
        lua::push_rawgeti(L, 3, 1);
        lua::push_rawgeti(L, 3, 2);
        let h = ffi::lua_touserdata(L, 4) as *const MessageUd;
        ffi::lua_pushvalue(L, 1);
        ffi::lua_replace(L, Up::Name.at());
        ffi::lua_pushvalue(L, 4);
        ffi::lua_replace(L, Up::Handle.at());
        ffi::lua_pushvalue(L, 5);
        ffi::lua_replace(L, Up::Keys.at());
        last.set((id, h));
        h.as_ref().map(|h| (h, 5))
    }
}

/// The [`LastType`] of the running closure.
///
/// # Safety
/// Called from a [`make_closure`] closure.
#[inline(always)]
unsafe fn last_type<'a>(L: *mut lua_State) -> &'a LastType {
    // SAFETY: upvalue `Last` is the LastType userdata `native.last` made,
    // kept alive by the closure.
    unsafe { &*(ffi::lua_touserdata(L, Up::Last.at()) as *const LastType) }
}

/// `pb.encode(type, t)`. The types whose plain encode is the whole job
/// (pb.lua's entry table) are encoded here with no Lua call in between:
/// on an interpreted Lua that call, and even the entry lookup, cost a
/// tenth of encoding a small message; the last type is remembered by its
/// name string's address. Every other call goes to the Lua `pb.encode`.
///
/// # Safety
/// Called by Lua as a closure made by [`make_encode`].
unsafe extern "C-unwind" fn pb_encode(L: *mut lua_State) -> c_int {
    // SAFETY: slots 1..2 are the arguments, 3..5 the entry, handle and
    // keys after a lookup; `encode_with` takes them as `Msg:encode` passes
    // its own (it pushes at most 2 more and the root's reserve: 7 above
    // the base at most, within what it allows).
    unsafe {
        if ffi::lua_gettop(L) == 2
            && let Some((h, keys)) = served(L, &last_type(L).enc)
            && let Some(inner) = h.schema.as_deref()
        {
            return encode_with(L, inner, h.index, 2, 6, keys, Up::Helpers.at());
        }
        ffi::lua_settop(L, 2);
        ffi::lua_pushvalue(L, Up::Slow.at());
        ffi::lua_insert(L, 1);
        ffi::lua_call(L, 2, 1);
        1
    }
}

/// `pb.decode(type, data [, t])`, as [`pb_encode`].
///
/// # Safety
/// Called by Lua as a closure made by [`make_decode`].
unsafe extern "C-unwind" fn pb_decode(L: *mut lua_State) -> c_int {
    // SAFETY: as `pb_encode`; `decode_with` gets the key table as a stack
    // slot or an upvalue of this closure (not `Msg:decode`'s key
    // upvalues), which it supports.
    unsafe {
        if ffi::lua_gettop(L) == 2
            && ffi::lua_type(L, 2) == ffi::LUA_TSTRING
            && let Some((h, keys)) = served(L, &last_type(L).dec)
            && let Some(inner) = h.schema.as_deref()
        {
            // A stack slot: decode takes a negative index for `Msg:decode`'s
            // own key upvalues.
            let keys = if keys < 0 {
                ffi::lua_pushvalue(L, keys);
                3
            } else {
                keys
            };
            return decode_with(L, inner, h.index, 2, 6, keys, Up::Helpers.at(), None);
        }
        ffi::lua_settop(L, 3);
        ffi::lua_pushvalue(L, Up::Slow.at());
        ffi::lua_insert(L, 1);
        ffi::lua_call(L, 3, 1);
        1
    }
}

/// `native.last()`: the [`LastType`] userdata both entry points share.
///
/// # Safety
/// Called by Lua.
unsafe extern "C-unwind" fn make_last(L: *mut lua_State) -> c_int {
    // SAFETY: a plain userdata (no drop needed: it holds addresses only).
    unsafe {
        let p = ffi::lua_newuserdata(L, size_of::<LastType>()) as *mut LastType;
        p.write(LastType::default());
        1
    }
}

/// `native.reset(last)`: forget the last types (pb.lua calls it whenever
/// its entry tables change).
///
/// # Safety
/// Called by Lua.
unsafe extern "C-unwind" fn reset_last(L: *mut lua_State) -> c_int {
    // SAFETY: pb.lua passes the userdata `native.last` made.
    unsafe {
        if let Some(last) = (ffi::lua_touserdata(L, 1) as *const LastType).as_ref() {
            last.enc.set((0, std::ptr::null()));
            last.dec.set((0, std::ptr::null()));
        }
        0
    }
}

/// `native.encode(fast, slow, Msg.encode, last)`: the [`pb_encode`]
/// closure, with the helper table of the module that made `Msg` (every
/// schema of a Lua state shares it).
///
/// # Safety
/// Called by pb.lua.
unsafe extern "C-unwind" fn make_encode(L: *mut lua_State) -> c_int {
    // SAFETY: as `make_closure`.
    unsafe { make_closure(L, pb_encode) }
}

/// `native.decode(fast, slow, Msg.encode, last)`: the [`pb_decode`] closure.
///
/// # Safety
/// Called by pb.lua.
unsafe extern "C-unwind" fn make_decode(L: *mut lua_State) -> c_int {
    // SAFETY: as `make_closure`.
    unsafe { make_closure(L, pb_decode) }
}

/// `f` closed over [`Up`]: slots 1 and 2, the helper table (upvalue 3 of
/// the bound method at slot 3), the [`LastType`] at slot 4, and three
/// empty anchors.
///
/// # Safety
/// Called from a C function called by Lua with 4 arguments.
unsafe fn make_closure(L: *mut lua_State, f: ffi::lua_CFunction) -> c_int {
    // SAFETY: the third argument's upvalue is read only once it is known
    // to be a bound method; 7 slots used.
    unsafe {
        if !is_bound_method(L, 3) || ffi::lua_type(L, 4) != ffi::LUA_TUSERDATA {
            crate::error::raise_fmt(L, format_args!("protolua.pb: expected a bound Msg.encode and native.last()"))
        }
        ffi::lua_settop(L, 4);
        ffi::lua_getupvalue(L, 3, 3);
        ffi::lua_replace(L, 3);
        ffi::lua_pushnil(L);
        ffi::lua_pushnil(L);
        ffi::lua_pushnil(L);
        ffi::lua_pushcclosure(L, f, 7);
        1
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
