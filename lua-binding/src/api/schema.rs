//! Schema objects: `protolua.load(fds)` and the schema's methods.
//!
//! A schema is a userdata owning an `Rc<SchemaInner>` (plans plus the
//! reusable encode buffers). Its uservalue is a Lua table holding the Lua
//! side of the schema:
//! 1. the key table (interned field and enum-value names, by key id),
//! 2. the handle cache (the name as asked for, and the message index + 1,
//!    → handle; each handle carries its own metatable with methods bound
//!    to it, see [`crate::api::message`]),
//! 3. the int64 helper table.
//!
//! Rust heap objects are moved into a userdata *before* any Lua call that
//! can raise, so an out-of-memory error leaks nothing.

use std::cell::{Cell, OnceCell, UnsafeCell};
use std::os::raw::c_int;
use std::rc::Rc;

use crate::api::message::{MessageUd, check_ud, decode_with, encode_with, push_handle_metatable};
use crate::api::options::read_load_options;
use crate::binary::encode::EncodeBuffers;
use crate::binary::encode::keys::KeyIndex;
use crate::error::{ErrBuf, raise, raise_fmt, type_name};
use crate::json::JsonBuffers;
use crate::lua::host::{self, ModuleState};
use crate::lua::{self, ffi, lua_State, upvalue};
use crate::plan::Plans;
use crate::plan::compile::compile_descriptor_set;
use crate::plan::options::LoadOptions;
#[cfg(feature = "luajit")]
use crate::slots::KeySlot;
use crate::slots::SchemaSlot;

/// The compiled schema and its per-schema mutable state.
pub struct SchemaInner {
    /// Compiled plans.
    pub plans: Plans,
    /// Encode output buffer and scratch, reused across calls.
    pub bufs: UnsafeCell<EncodeBuffers>,
    /// Set while `bufs` is in use.
    pub busy: Cell<bool>,
    /// The JSON codec's buffers, reused across calls (`crate::api::json`).
    pub json_bufs: UnsafeCell<JsonBuffers>,
    /// Set while `json_bufs` is in use.
    pub json_busy: Cell<bool>,
    /// Options given at load.
    pub opts: LoadOptions,
    /// State shared with the module (host API, unknown-store flag).
    pub module: Rc<ModuleState>,
    /// Key string address → field, built once the key table exists.
    pub key_index: OnceCell<KeyIndex>,
    /// The descriptor set's bytes (`schema:descriptor_set()`, reflection).
    pub fds: Box<[u8]>,
    /// Its descriptor pool, decoded on the first reflection call.
    pub pool: OnceCell<Option<prost_reflect::DescriptorPool>>,
    /// Per message, the shape whose constructor the constructor table
    /// holds at its index (`crate::binary::decode::ctor::shape::KEYS_CTORS`).
    #[cfg(feature = "luajit")]
    pub ctor_memo: Box<[Cell<crate::binary::decode::ctor::shape::Shape>]>,
    /// Per message, its last whole-tree signature (`crate::binary::decode::ctor::tree`).
    #[cfg(feature = "luajit")]
    pub tree_memo: Box<[crate::binary::decode::ctor::tree::TreeMemo]>,
}

/// Userdata payload of a schema.
pub struct SchemaUd {
    /// `None` once finalized.
    pub inner: Option<Rc<SchemaInner>>,
}

/// `protolua.load(bytes [, opts])`. Upvalues: 1 schema metatable, 2 helpers.
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn load(L: *mut lua_State) -> c_int {
    // SAFETY: argument types are checked before use.
    unsafe {
        if ffi::lua_type(L, 1) != ffi::LUA_TSTRING {
            let got = type_name(L, 1);
            raise_fmt(L, format_args!("load: expected the bytes of a FileDescriptorSet, got {got}"))
        }
        let opts = read_load_options(L, 2, "load");
        let bytes = lua::string_bytes(L, 1);
        push_schema(L, bytes, opts)
    }
}

/// `protolua.load_file(path [, opts])`.
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn load_file(L: *mut lua_State) -> c_int {
    // SAFETY: argument types are checked before use; the file contents are
    // moved into a Lua string before anything else can raise.
    unsafe {
        if ffi::lua_type(L, 1) != ffi::LUA_TSTRING {
            let got = type_name(L, 1);
            raise_fmt(L, format_args!("load_file: expected a path, got {got}"))
        }
        let opts = read_load_options(L, 2, "load_file");
        let path = lua::string_bytes(L, 1);
        let path = String::from_utf8_lossy(path).into_owned();
        let read = std::fs::read(&path);
        match read {
            Ok(data) => {
                // Anchor the bytes in Lua (slot 3), then drop the Vec. The
                // copy runs protected: out of memory there is raised only
                // once the Vec and the path are freed.
                ffi::lua_settop(L, 2);
                let copied = lua::push_bytes_protected(L, upvalue(2), &data);
                drop(data);
                drop(path);
                if !copied {
                    ffi::lua_error(L);
                }
                let bytes = lua::string_bytes(L, 3);
                push_schema(L, bytes, opts)
            }
            Err(e) => {
                let mut buf = ErrBuf::new();
                let _ =
                    std::fmt::Write::write_fmt(&mut buf, format_args!("protolua: load_file: cannot read {path}: {e}"));
                drop(path);
                drop(e);
                raise(L, &buf)
            }
        }
    }
}

/// Compile `bytes` and push the schema userdata.
///
/// # Safety
/// Called from a C function whose upvalues 1 and 2 are the schema
/// metatable and the helper table; `bytes` stays anchored (a Lua string on
/// the stack) for the call; 5 free slots. Raises on a compile error or out of
/// memory, owning no Rust heap memory then (the plans belong to the userdata).
pub(crate) unsafe fn push_schema(L: *mut lua_State, bytes: &[u8], opts: LoadOptions) -> c_int {
    // SAFETY: the userdata is made first (with its __gc) so the compiled
    // schema is owned by Lua from the moment it exists.
    unsafe {
        let ud = ffi::lua_newuserdata(L, size_of::<SchemaUd>()) as *mut SchemaUd;
        ud.write(SchemaUd { inner: None });
        ffi::lua_pushvalue(L, upvalue(1));
        ffi::lua_setmetatable(L, -2);
        let schema_idx = ffi::lua_gettop(L);
        // A panic inside the descriptor crate must not cross into Lua.
        let compiled = std::panic::catch_unwind(|| {
            compile_descriptor_set(bytes).map(|mut plans| {
                if opts.encode_zeros {
                    plans.write_zeros();
                }
                if opts.short_ext_keys {
                    plans.short_ext_keys();
                }
                plans.hash_int64 = opts.hash_int64;
                plans
            })
        })
        .unwrap_or_else(|_| Err("the descriptor set could not be processed (descriptor library panicked)".into()));
        match compiled {
            Ok(plans) => {
                // No Lua call between taking the Rc and storing it.
                let module = host::get(L, upvalue(2));
                (*ud).inner = Some(Rc::new(SchemaInner {
                    #[cfg(feature = "luajit")]
                    ctor_memo: plans.messages.iter().map(|_| Cell::new([0; _])).collect(),
                    #[cfg(feature = "luajit")]
                    tree_memo: plans.messages.iter().map(|_| Default::default()).collect(),
                    plans,
                    bufs: UnsafeCell::new(EncodeBuffers::default()),
                    busy: Cell::new(false),
                    json_bufs: UnsafeCell::new(JsonBuffers::default()),
                    json_busy: Cell::new(false),
                    opts,
                    module,
                    key_index: OnceCell::new(),
                    fds: bytes.into(),
                    pool: OnceCell::new(),
                }));
            }
            Err(msg) => {
                let mut buf = ErrBuf::new();
                let _ = std::fmt::Write::write_fmt(&mut buf, format_args!("protolua: load: {msg}"));
                drop(msg);
                raise(L, &buf)
            }
        }
        let inner: &SchemaInner = (*ud).inner.as_deref().expect("just set");
        // The uservalue table.
        ffi::lua_createtable(L, 4, 0);
        let state = ffi::lua_gettop(L);
        ffi::lua_createtable(L, inner.plans.keys.len() as c_int, 0);
        for (i, k) in inner.plans.keys.iter().enumerate() {
            lua::push_bytes(L, k.as_bytes());
            lua::rawseti(L, -2, i as i64 + 1);
        }
        let keys = ffi::lua_gettop(L);
        #[cfg(feature = "luajit")]
        {
            ffi::lua_createtable(L, inner.plans.messages.len() as c_int, 0);
            lua::rawseti(L, keys, KeySlot::Ctors.at());
        }
        // The addresses are read only now: the calls above may raise (out
        // of memory), and no Rust heap value may be alive across them.
        // These reads cannot raise. The table anchors the strings, so the
        // addresses hold while the schema lives (Lua's collectors do not
        // move objects).
        let mut key_addr = Vec::with_capacity(inner.plans.keys.len());
        for i in 1..=inner.plans.keys.len() {
            lua::push_rawgeti(L, keys, i as i64);
            key_addr.push(lua::string_id(L, -1));
            ffi::lua_settop(L, keys);
        }
        let _ = inner.key_index.set(KeyIndex::new(&inner.plans, &key_addr));
        drop(key_addr);
        ffi::lua_pushvalue(L, upvalue(2));
        let helpers = ffi::lua_gettop(L);
        ffi::lua_pushvalue(L, keys);
        lua::rawseti(L, state, SchemaSlot::Keys.at());
        ffi::lua_pushvalue(L, helpers);
        lua::rawseti(L, state, SchemaSlot::Helpers.at());
        ffi::lua_createtable(L, 0, 8);
        lua::rawseti(L, state, SchemaSlot::Handles.at());
        ffi::lua_settop(L, state);
        ffi::lua_setuservalue(L, schema_idx);
        ffi::lua_settop(L, schema_idx);
        1
    }
}

/// `__gc` of schemas.
///
/// # Safety
/// Called by Lua with a schema userdata.
pub unsafe extern "C-unwind" fn schema_gc(L: *mut lua_State) -> c_int {
    // SAFETY: the metatable is only set on SchemaUd userdata.
    unsafe {
        if let Some(p) = (ffi::lua_touserdata(L, 1) as *mut SchemaUd).as_mut() {
            drop(p.inner.take());
        }
    }
    0
}

/// Check arg 1 is a live schema; upvalue 1 is the schema metatable.
///
/// # Safety
/// Called from a C function whose upvalue 1 is the schema metatable; one
/// free slot. The result borrows the schema at argument 1: `'a` must not
/// outlive it there. Raises if argument 1 is not a live schema.
pub(crate) unsafe fn check_schema<'a>(L: *mut lua_State, what: &str) -> &'a SchemaInner {
    // SAFETY: check_ud verifies the metatable.
    unsafe {
        match check_ud::<SchemaUd>(L, 1, upvalue(1)).and_then(|s| s.inner.as_deref()) {
            Some(s) => s,
            None => raise_fmt(L, format_args!("{what}: expected a schema (call it as schema:{what}(...))")),
        }
    }
}

/// Push the handle of the message named by the string at `name_idx`
/// (cached per schema), or raise if the schema has no such message.
///
/// # Safety
/// Argument 1 is the schema `inner` belongs to (as [`check_schema`] found
/// it); `name_idx` absolute; 13 free slots (5, and [`push_handle_metatable`]'s
/// 8). Raises on a bad name or out of memory, owning no Rust heap memory.
pub(crate) unsafe fn push_handle(L: *mut lua_State, inner: &SchemaInner, name_idx: c_int, what: &str) {
    // SAFETY: raw access to our own state table; the name is type-checked.
    unsafe {
        if ffi::lua_type(L, name_idx) != ffi::LUA_TSTRING {
            let got = type_name(L, name_idx);
            raise_fmt(L, format_args!("{what}: expected a message name, got {got}"))
        }
        ffi::lua_getuservalue(L, 1);
        let state = ffi::lua_gettop(L);
        lua::rawgeti(L, state, SchemaSlot::Handles.at());
        let handles = ffi::lua_gettop(L);
        ffi::lua_pushvalue(L, name_idx);
        if lua::rawget(L, handles) == ffi::LUA_TUSERDATA {
            ffi::lua_replace(L, state);
            ffi::lua_settop(L, state);
            return;
        }
        ffi::lua_pop(L, 1);
        let name = lua::string_bytes(L, name_idx);
        let index = std::str::from_utf8(name).ok().and_then(|n| inner.plans.message_index(n));
        let Some(index) = index else {
            let shown = crate::error::ShortStr::new(name);
            raise_fmt(L, format_args!("{what}: unknown message type \"{shown}\""))
        };
        // Another spelling of the name ('.pkg.Msg' for 'pkg.Msg') gets the
        // same handle: handles are also kept under their message index.
        if lua::rawgeti(L, handles, index as i64 + 1) == ffi::LUA_TUSERDATA {
            ffi::lua_pushvalue(L, name_idx);
            ffi::lua_pushvalue(L, -2);
            ffi::lua_rawset(L, handles);
            ffi::lua_replace(L, state);
            ffi::lua_settop(L, state);
            return;
        }
        ffi::lua_pop(L, 1);
        let h = ffi::lua_newuserdata(L, size_of::<MessageUd>()) as *mut MessageUd;
        h.write(MessageUd {
            schema: None,
            index: index as u32,
            last_shape: Default::default(),
            last_shape_json: Default::default(),
        });
        let handle = ffi::lua_gettop(L);
        lua::rawgeti(L, state, SchemaSlot::Keys.at());
        lua::rawgeti(L, state, SchemaSlot::Helpers.at());
        push_handle_metatable(L, handle, handle + 1, handle + 2, &inner.plans.messages[index]);
        ffi::lua_settop(L, handle);
        // Only now take the reference: the userdata (and its __gc) exists.
        let rc = (*(ffi::lua_touserdata(L, 1) as *const SchemaUd)).inner.clone();
        (*h).schema = rc;
        ffi::lua_pushvalue(L, name_idx);
        ffi::lua_pushvalue(L, -2);
        ffi::lua_rawset(L, handles);
        ffi::lua_pushvalue(L, -1);
        lua::rawseti(L, handles, index as i64 + 1);
        ffi::lua_replace(L, state);
        ffi::lua_settop(L, state);
    }
}

/// `schema:message(name)`.
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn schema_message(L: *mut lua_State) -> c_int {
    // SAFETY: checked arguments.
    unsafe {
        let inner = check_schema(L, "message");
        ffi::lua_settop(L, 2);
        push_handle(L, inner, 2, "message");
        1
    }
}

/// `schema:encode(name, t [, opts])`.
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn schema_encode(L: *mut lua_State) -> c_int {
    // SAFETY: checked arguments; the handle and state tables stay on the stack.
    unsafe {
        let inner = check_schema(L, "encode");
        ffi::lua_settop(L, 4);
        push_handle(L, inner, 2, "encode");
        let index = (*(ffi::lua_touserdata(L, 5) as *const MessageUd)).index;
        ffi::lua_getuservalue(L, 1);
        lua::rawgeti(L, 6, SchemaSlot::Keys.at());
        lua::rawgeti(L, 6, SchemaSlot::Helpers.at());
        encode_with(L, inner, index, 3, 4, 7, 8)
    }
}

/// `schema:decode(name, s [, opts])`.
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn schema_decode(L: *mut lua_State) -> c_int {
    // SAFETY: as schema_encode.
    unsafe {
        let inner = check_schema(L, "decode");
        ffi::lua_settop(L, 4);
        push_handle(L, inner, 2, "decode");
        let index = (*(ffi::lua_touserdata(L, 5) as *const MessageUd)).index;
        ffi::lua_getuservalue(L, 1);
        lua::rawgeti(L, 6, SchemaSlot::Keys.at());
        lua::rawgeti(L, 6, SchemaSlot::Helpers.at());
        decode_with(L, inner, index, 3, 4, 7, 8, None)
    }
}

/// `schema:messages()`: array of full names (map entries left out).
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn schema_messages(L: *mut lua_State) -> c_int {
    // SAFETY: borrows of the plans, kept alive by arg 1.
    unsafe {
        let inner = check_schema(L, "messages");
        let names = inner.plans.messages.iter().filter(|m| !m.is_map_entry).map(|m| &*m.full_name);
        push_names(L, names);
        1
    }
}

/// `schema:enums()`: array of full names.
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn schema_enums(L: *mut lua_State) -> c_int {
    // SAFETY: as schema_messages.
    unsafe {
        let inner = check_schema(L, "enums");
        push_names(L, inner.plans.enums.iter().map(|e| &*e.full_name));
        1
    }
}

/// Push an array of `names`.
///
/// # Safety
/// `L` valid with 2 free slots. May raise on out-of-memory: `names` must
/// own no heap memory (a raise skips its drop).
unsafe fn push_names<'a>(L: *mut lua_State, names: impl Iterator<Item = &'a str>) {
    // SAFETY: table on top while filling.
    unsafe {
        ffi::lua_createtable(L, 0, 0);
        for (i, n) in names.enumerate() {
            lua::push_bytes(L, n.as_bytes());
            lua::rawseti(L, -2, i as i64 + 1);
        }
    }
}

/// `schema:enum(name)`: `{ NAME = number, ... }`.
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn schema_enum(L: *mut lua_State) -> c_int {
    // SAFETY: checked arguments; borrows of the plans.
    unsafe {
        let inner = check_schema(L, "enum");
        if ffi::lua_type(L, 2) != ffi::LUA_TSTRING {
            let got = type_name(L, 2);
            raise_fmt(L, format_args!("enum: expected an enum name, got {got}"))
        }
        let name = lua::string_bytes(L, 2);
        let Some(e) = std::str::from_utf8(name).ok().and_then(|n| inner.plans.enum_index(n)) else {
            let shown = crate::error::ShortStr::new(name);
            raise_fmt(L, format_args!("enum: unknown enum type \"{shown}\""))
        };
        let e = &inner.plans.enums[e];
        ffi::lua_createtable(L, 0, e.values.len() as c_int);
        for (n, name) in e.values.iter() {
            lua::push_bytes(L, name.as_bytes());
            lua::push_small_int(L, *n as i64);
            ffi::lua_rawset(L, -3);
        }
        1
    }
}

/// Push the (per-state) schema metatable, creating it on first use.
///
/// # Safety
/// `L` valid with 8 free slots.
pub unsafe fn push_schema_metatable(L: *mut lua_State) {
    // SAFETY: setup-time table construction.
    unsafe {
        ffi::lua_createtable(L, 0, 4);
        let mt = ffi::lua_gettop(L);
        ffi::lua_createtable(L, 0, 6);
        let methods: [(&str, ffi::lua_CFunction); 14] = [
            ("message", schema_message),
            ("encode", schema_encode),
            ("decode", schema_decode),
            ("messages", schema_messages),
            ("enums", schema_enums),
            ("enum", schema_enum),
            ("encode_json", crate::api::json::schema_encode_json),
            ("decode_json", crate::api::json::schema_decode_json),
            ("binary_to_json", crate::api::json::schema_binary_to_json),
            ("json_to_binary", crate::api::json::schema_json_to_binary),
            ("encode_text", crate::api::text::schema_encode_text),
            ("decode_text", crate::api::text::schema_decode_text),
            ("binary_to_text", crate::api::text::schema_binary_to_text),
            ("text_to_binary", crate::api::text::schema_text_to_binary),
        ];
        for (name, f) in methods.into_iter().chain(crate::api::reflect::SCHEMA_METHODS.iter().copied()) {
            lua::push_bytes(L, name.as_bytes());
            ffi::lua_pushvalue(L, mt);
            ffi::lua_pushcclosure(L, f, 1);
            ffi::lua_rawset(L, -3);
        }
        lua::push_bytes(L, b"__index");
        ffi::lua_insert(L, -2);
        ffi::lua_rawset(L, mt);
        lua::push_bytes(L, b"__gc");
        ffi::lua_pushcfunction(L, schema_gc);
        ffi::lua_rawset(L, mt);
        lua::push_bytes(L, b"__metatable");
        lua::push_bytes(L, b"protolua.Schema");
        ffi::lua_rawset(L, mt);
    }
}
