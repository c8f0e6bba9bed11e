//! Schema objects: `protolua.load(fds)` and the schema's methods.
//!
//! A schema is a userdata owning an `Rc<SchemaInner>` (plans plus the
//! reusable encode buffers). Its uservalue is a Lua table holding the Lua
//! side of the schema:
//! 1. the key table (interned field and enum-value names, by key id),
//! 2. the handle cache (the name as asked for, and the message index + 1,
//!    → handle; each handle carries its own metatable with methods bound
//!    to it, see [`crate::message_api`]),
//! 3. the int64 helper table.
//!
//! Rust heap objects are moved into a userdata *before* any Lua call that
//! can raise, so an out-of-memory error leaks nothing.

use std::cell::{Cell, OnceCell, UnsafeCell};
use std::os::raw::c_int;
use std::rc::Rc;

use crate::compile::compile_descriptor_set;
use crate::encode::EncodeBuffers;
use crate::error::{ErrBuf, raise, raise_fmt, type_name};
use crate::host::{self, ModuleState};
use crate::int64::Int64Mode;
use crate::key_index::KeyIndex;
use crate::lua::{self, ffi, lua_State, upvalue};
use crate::message_api::{MessageUd, check_ud, decode_with, encode_with, push_handle_metatable};
use crate::plan::Plans;

/// Default nesting limit for decode and encode.
pub const DEFAULT_MAX_DEPTH: u32 = 100;
/// Largest accepted `max_depth`. The walk recurses on the C stack, up to
/// about 1.6 KiB per level in release builds (measured in tests/adversarial.rs),
/// and a Tarantool fiber has 512 KiB: 200 levels (~330 KiB) leave room for
/// the Lua and Tarantool frames below. 300 and more overflowed it.
pub const MAX_MAX_DEPTH: u32 = 200;

pub(crate) const S_KEYS: i64 = 1;
const S_HANDLES: i64 = 2;
pub(crate) const S_HELPERS: i64 = 3;

/// The compiled schema and its per-schema mutable state.
pub struct SchemaInner {
    /// Compiled plans.
    pub plans: Plans,
    /// Encode output buffer and scratch, reused across calls.
    pub bufs: UnsafeCell<EncodeBuffers>,
    /// Set while `bufs` is in use.
    pub busy: Cell<bool>,
    /// Options given at load.
    pub opts: LoadOptions,
    /// State shared with the module (host API, unknown-store flag).
    pub module: Rc<ModuleState>,
    /// Key string address → field, built once the key table exists.
    pub key_index: OnceCell<KeyIndex>,
    /// Per message, the shape whose constructor the constructor table
    /// holds at its index (`crate::shape_ctor::KEYS_CTORS`).
    #[cfg(feature = "luajit")]
    pub ctor_memo: Box<[Cell<crate::shape_ctor::Shape>]>,
    /// Per message, its last whole-tree signature (`crate::tree_ctor`).
    #[cfg(feature = "luajit")]
    pub tree_memo: Box<[crate::tree_ctor::TreeMemo]>,
}

/// Per-schema options (`protolua.load(bytes, opts)`).
#[derive(Clone, Copy, Debug)]
pub struct LoadOptions {
    /// Nesting limit (`max_depth`).
    pub max_depth: u32,
    /// Refuse unknown keys on encode (`strict_keys`).
    pub strict_keys: bool,
    /// Keep unknown fields on decode and write them back on encode
    /// (`unknown = 'keep'|'drop'`).
    pub keep_unknown: bool,
    /// Check proto2 `required` fields on encode and decode (`required`).
    pub check_required: bool,
    /// Decode enum values as numbers (`enums = 'name'|'number'`).
    pub enums_as_number: bool,
    /// How decode returns 64-bit integers (`int64 = 'auto'|'number'|'string'|'cdata'`).
    pub int64: Int64Mode,
    /// Check UTF-8 of proto3/editions `string` fields (`utf8`).
    pub utf8: bool,
    /// Decode absent repeated/map fields as empty tables (`empty`).
    pub empty: bool,
    /// What decode does for absent singular fields (`defaults`).
    pub defaults: DefaultsMode,
    /// Give decoded messages, maps and repeated fields Tarantool's
    /// serializer metatables (`serialize`; default on inside Tarantool).
    pub serialize: bool,
    /// Build decoded message tables with generated Lua constructors where
    /// a shape allows (`constructors`; LuaJIT only, see `shape_ctor`);
    /// off, every table is built through the C API. Same result.
    pub constructors: bool,
    /// The JSON methods' own options (`json_names`, `emit_defaults`,
    /// `ignore_unknown`, `indent`: `crate::json_api`).
    pub json: crate::json_api::JsonLoadOptions,
}

/// Option `defaults = 'none'|'values'|'metatable'`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultsMode {
    /// Absent fields stay nil.
    None,
    /// Absent scalar/enum/string fields (outside oneofs) get their declared
    /// default or the type's zero value, in the table itself.
    Values,
    /// The table gets a metatable, shared by every table of the message type,
    /// whose `__index` holds those defaults: no per-message copy, `pairs()`
    /// shows only what was on the wire.
    Metatable,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            max_depth: DEFAULT_MAX_DEPTH,
            strict_keys: true,
            keep_unknown: true,
            check_required: true,
            enums_as_number: false,
            int64: Int64Mode::Auto,
            utf8: true,
            empty: false,
            defaults: DefaultsMode::None,
            serialize: false,
            constructors: true,
            json: crate::json_api::JsonLoadOptions::DEFAULT,
        }
    }
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
        let opts = read_options(L, 2, base_options(L), "load");
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
        let opts = read_options(L, 2, base_options(L), "load_file");
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

/// The defaults of every option in this host (upvalue 2: the helpers).
///
/// # Safety
/// Called from `load`/`load_file` with their upvalues; one free slot.
unsafe fn base_options(L: *mut lua_State) -> LoadOptions {
    // SAFETY: upvalue 2 is the helper table.
    let module = unsafe { host::get(L, upvalue(2)) };
    LoadOptions { serialize: module.serialize_default(), ..LoadOptions::default() }
}

/// Read an options table at `idx` (optional) over `base`; `what` names the
/// call in errors. See [`LoadOptions`] and docs/LUA_API.md.
///
/// # Safety
/// `L` valid with 2 free slots; raises on a bad option (no Rust heap is
/// held by the callers at that point).
pub unsafe fn read_options(L: *mut lua_State, idx: c_int, base: LoadOptions, what: &str) -> LoadOptions {
    let mut o = base;
    // SAFETY: option parsing; field reads are raw.
    unsafe {
        match ffi::lua_type(L, idx) {
            ffi::LUA_TNONE | ffi::LUA_TNIL => {}
            ffi::LUA_TTABLE => {
                lua::push_bytes(L, b"max_depth");
                match lua::rawget(L, idx) {
                    ffi::LUA_TNIL => {}
                    ffi::LUA_TNUMBER => {
                        let d = ffi::lua_tonumber(L, -1);
                        if !(1.0..=MAX_MAX_DEPTH as f64).contains(&d) || d.trunc() != d {
                            raise_fmt(L, format_args!("{what}: max_depth must be an integer in 1..{MAX_MAX_DEPTH}"))
                        }
                        o.max_depth = d as u32;
                    }
                    _ => raise_fmt(L, format_args!("{what}: max_depth must be a number")),
                }
                ffi::lua_pop(L, 1);
                o.strict_keys = read_bool(L, idx, "strict_keys", o.strict_keys, what);
                o.check_required = read_bool(L, idx, "required", o.check_required, what);
                o.utf8 = read_bool(L, idx, "utf8", o.utf8, what);
                o.empty = read_bool(L, idx, "empty", o.empty, what);
                o.serialize = read_bool(L, idx, "serialize", o.serialize, what);
                o.constructors = read_bool(L, idx, "constructors", o.constructors, what);
                if let Some(i) = read_choice(L, idx, "unknown", &["keep", "drop"], what) {
                    o.keep_unknown = i == 0;
                }
                if let Some(i) = read_choice(L, idx, "enums", &["name", "number"], what) {
                    o.enums_as_number = i == 1;
                }
                if let Some(i) = read_choice(L, idx, "defaults", &["none", "values", "metatable"], what) {
                    o.defaults = [DefaultsMode::None, DefaultsMode::Values, DefaultsMode::Metatable][i];
                }
                if let Some(i) = read_choice(L, idx, "int64", &["auto", "number", "string", "cdata"], what) {
                    o.int64 = [Int64Mode::Auto, Int64Mode::Number, Int64Mode::String, Int64Mode::Cdata][i];
                }
                o.json = crate::json_api::read_json_options(L, idx, o.json, what);
            }
            _ => {
                let got = type_name(L, idx);
                raise_fmt(L, format_args!("{what}: options must be a table, got {got}"))
            }
        }
    }
    o
}

/// Read the boolean option `name` of the table at `idx`, or `default`.
unsafe fn read_bool(L: *mut lua_State, idx: c_int, name: &str, default: bool, what: &str) -> bool {
    // SAFETY: option parsing; one free slot.
    unsafe {
        lua::push_bytes(L, name.as_bytes());
        let v = match lua::rawget(L, idx) {
            ffi::LUA_TNIL => default,
            ffi::LUA_TBOOLEAN => ffi::lua_toboolean(L, -1) != 0,
            _ => raise_fmt(L, format_args!("{what}: {name} must be a boolean")),
        };
        ffi::lua_pop(L, 1);
        v
    }
}

/// Read the string option `name` (one of `choices`): its index, or `None`.
unsafe fn read_choice(L: *mut lua_State, idx: c_int, name: &str, choices: &[&str], what: &str) -> Option<usize> {
    // SAFETY: option parsing; one free slot.
    unsafe {
        lua::push_bytes(L, name.as_bytes());
        let ty = lua::rawget(L, idx);
        let found = match ty {
            ffi::LUA_TNIL => None,
            ffi::LUA_TSTRING => {
                let s = lua::string_bytes(L, -1);
                choices.iter().position(|c| c.as_bytes() == s)
            }
            _ => Some(usize::MAX),
        };
        ffi::lua_pop(L, 1);
        match found {
            Some(i) if i != usize::MAX => Some(i),
            None if ty == ffi::LUA_TNIL => None,
            _ => {
                let mut list = ErrBuf::new();
                for (i, c) in choices.iter().enumerate() {
                    let _ = std::fmt::Write::write_fmt(
                        &mut list,
                        format_args!(
                            "{}'{c}'",
                            if i == 0 {
                                ""
                            } else if i + 1 == choices.len() {
                                " or "
                            } else {
                                ", "
                            }
                        ),
                    );
                }
                raise_fmt(L, format_args!("{what}: {name} must be {}", list.as_str()))
            }
        }
    }
}

/// Compile `bytes` and push the schema userdata.
unsafe fn push_schema(L: *mut lua_State, bytes: &[u8], opts: LoadOptions) -> c_int {
    // SAFETY: the userdata is made first (with its __gc) so the compiled
    // schema is owned by Lua from the moment it exists.
    unsafe {
        let ud = ffi::lua_newuserdata(L, size_of::<SchemaUd>()) as *mut SchemaUd;
        ud.write(SchemaUd { inner: None });
        ffi::lua_pushvalue(L, upvalue(1));
        ffi::lua_setmetatable(L, -2);
        let schema_idx = ffi::lua_gettop(L);
        // A panic inside the descriptor crate must not cross into Lua.
        let compiled = std::panic::catch_unwind(|| compile_descriptor_set(bytes))
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
                    opts,
                    module,
                    key_index: OnceCell::new(),
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
            lua::rawseti(L, keys, crate::shape_ctor::KEYS_CTORS);
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
        lua::rawseti(L, state, S_KEYS);
        ffi::lua_pushvalue(L, helpers);
        lua::rawseti(L, state, S_HELPERS);
        ffi::lua_createtable(L, 0, 8);
        lua::rawseti(L, state, S_HANDLES);
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
pub(crate) unsafe fn push_handle(L: *mut lua_State, inner: &SchemaInner, name_idx: c_int, what: &str) {
    // SAFETY: raw access to our own state table; the name is type-checked.
    unsafe {
        if ffi::lua_type(L, name_idx) != ffi::LUA_TSTRING {
            let got = type_name(L, name_idx);
            raise_fmt(L, format_args!("{what}: expected a message name, got {got}"))
        }
        ffi::lua_getuservalue(L, 1);
        let state = ffi::lua_gettop(L);
        lua::rawgeti(L, state, S_HANDLES);
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
        h.write(MessageUd { schema: None, index: index as u32, last_shape: Default::default() });
        let handle = ffi::lua_gettop(L);
        lua::rawgeti(L, state, S_KEYS);
        lua::rawgeti(L, state, S_HELPERS);
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
        lua::rawgeti(L, 6, S_KEYS);
        lua::rawgeti(L, 6, S_HELPERS);
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
        lua::rawgeti(L, 6, S_KEYS);
        lua::rawgeti(L, 6, S_HELPERS);
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
        let methods: [(&str, ffi::lua_CFunction); 10] = [
            ("message", schema_message),
            ("encode", schema_encode),
            ("decode", schema_decode),
            ("messages", schema_messages),
            ("enums", schema_enums),
            ("enum", schema_enum),
            ("encode_json", crate::json_api::schema_encode_json),
            ("decode_json", crate::json_api::schema_decode_json),
            ("binary_to_json", crate::json_api::schema_binary_to_json),
            ("json_to_binary", crate::json_api::schema_json_to_binary),
        ];
        for (name, f) in methods {
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
