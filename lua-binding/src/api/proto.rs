//! `protolua.load_proto(paths, opts)` and `protolua.parse(src, opts)`:
//! schemas from `.proto` sources, through the front end in [`crate::proto`].
//!
//! Arguments are checked first (errors raised while no Rust heap memory
//! exists), then copied into a [`Request`] with calls that cannot raise,
//! compiled, and the resulting descriptor set moved into a Lua string
//! before the schema is built from it exactly as `protolua.load` does.

use std::os::raw::c_int;

use crate::api::options::read_load_options;
use crate::api::schema::push_schema;
use crate::error::{ErrBuf, raise, raise_fmt, type_name};
use crate::lua::{self, ffi, lua_State, upvalue};
use crate::proto::{Request, compile};

/// `protolua.load_proto(path_or_paths [, opts])`. Upvalues: 1 schema
/// metatable, 2 helpers (as `load`).
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn load_proto(L: *mut lua_State) -> c_int {
    // SAFETY: every argument is type-checked before it is read.
    unsafe {
        ffi::lua_settop(L, 2);
        match ffi::lua_type(L, 1) {
            ffi::LUA_TSTRING => {}
            ffi::LUA_TTABLE => check_strings(L, 1, "load_proto", "paths"),
            _ => {
                let got = type_name(L, 1);
                raise_fmt(L, format_args!("load_proto: expected a path or an array of paths, got {got}"))
            }
        }
        let opts = read_load_options(L, 2, "load_proto");
        push_import_paths(L, "load_proto");
        // Nothing below raises (no Lua allocation) until the request is
        // compiled and dropped.
        let mut req = Request { files_on_disk: true, ..Default::default() };
        if ffi::lua_type(L, 1) == ffi::LUA_TSTRING {
            req.files.push(lossy(L, 1));
        } else {
            req.files = strings(L, 1);
        }
        req.import_paths = strings(L, 3);
        finish(L, req, opts, "load_proto")
    }
}

/// `protolua.parse(src [, { name =, sources =, import_paths = }])`.
/// Upvalues as [`load_proto`].
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn parse(L: *mut lua_State) -> c_int {
    // SAFETY: every argument is type-checked before it is read.
    unsafe {
        ffi::lua_settop(L, 2);
        if ffi::lua_type(L, 1) != ffi::LUA_TSTRING {
            let got = type_name(L, 1);
            raise_fmt(L, format_args!("parse: expected the .proto source as a string, got {got}"))
        }
        let opts = read_load_options(L, 2, "parse");
        push_import_paths(L, "parse"); // slot 3
        match push_opt(L, "name") {
            ffi::LUA_TNIL | ffi::LUA_TSTRING => {} // slot 4
            t => raise_fmt(L, format_args!("parse: name must be a string, got {}", crate::error::lua_type_name(t))),
        }
        match push_opt(L, "sources") {
            ffi::LUA_TNIL => {} // slot 5
            ffi::LUA_TTABLE => check_sources(L, 5),
            t => raise_fmt(
                L,
                format_args!(
                    "parse: sources must be a table of file name -> source, got {}",
                    crate::error::lua_type_name(t)
                ),
            ),
        }
        // Nothing below raises (no Lua allocation) until the request is
        // compiled and dropped.
        let mut req = Request::default();
        let name = if ffi::lua_type(L, 4) == ffi::LUA_TSTRING { lossy(L, 4) } else { "input.proto".to_owned() };
        if ffi::lua_type(L, 5) == ffi::LUA_TTABLE {
            ffi::lua_pushnil(L);
            while ffi::lua_next(L, 5) != 0 {
                req.sources.push((lossy(L, -2), lua::string_bytes(L, -1).to_vec()));
                ffi::lua_pop(L, 1);
            }
        }
        req.sources.retain(|(n, _)| *n != name);
        req.sources.insert(0, (name.clone(), lua::string_bytes(L, 1).to_vec()));
        req.files.push(name);
        req.import_paths = strings(L, 3);
        finish(L, req, opts, "parse")
    }
}

/// Compile `req`, anchor the set in Lua (slot 3) and build the schema; or
/// raise `protolua: <what>: <error>` once every Rust value is dropped.
///
/// # Safety
/// Called from `load_proto`/`parse` with their upvalues, the arguments at
/// 1 and 2 and at least 5 free slots. Raises after dropping `req` and
/// every other Rust value.
unsafe fn finish(L: *mut lua_State, req: Request, opts: crate::plan::options::LoadOptions, what: &str) -> c_int {
    // A panic inside the parser must not cross into Lua.
    let compiled = std::panic::catch_unwind(|| compile(&req))
        .unwrap_or_else(|_| Err("the .proto files could not be processed (parser panicked)".into()));
    drop(req);
    // SAFETY: slots 1-2 are the arguments; the Vec is dropped before any
    // raise, the string copy runs protected.
    unsafe {
        ffi::lua_settop(L, 2);
        match compiled {
            Ok(set) => {
                let copied = lua::push_bytes_protected(L, upvalue(2), &set);
                drop(set);
                if !copied {
                    ffi::lua_error(L);
                }
                push_schema(L, lua::string_bytes(L, 3), opts)
            }
            Err(msg) => {
                let mut buf = ErrBuf::new();
                let _ = std::fmt::Write::write_fmt(&mut buf, format_args!("protolua: {what}: {msg}"));
                drop(msg);
                raise(L, &buf)
            }
        }
    }
}

/// The string at `idx` as UTF-8 (lossy: file names and paths).
///
/// # Safety
/// `idx` holds a string.
unsafe fn lossy(L: *mut lua_State, idx: c_int) -> String {
    // SAFETY: the caller checked the slot holds a string.
    String::from_utf8_lossy(unsafe { lua::string_bytes(L, idx) }).into_owned()
}

/// Raise unless the table at `idx` is an array of strings.
///
/// # Safety
/// `idx` an absolute table index, one free slot; raises on a non-string
/// element (the callers hold no Rust heap memory then).
unsafe fn check_strings(L: *mut lua_State, idx: c_int, what: &str, field: &str) {
    // SAFETY: raw reads of a table; one free slot.
    unsafe {
        let n = lua::rawlen(L, idx);
        for i in 1..=n {
            let t = lua::rawgeti(L, idx, i as i64);
            ffi::lua_pop(L, 1);
            if t != ffi::LUA_TSTRING {
                raise_fmt(
                    L,
                    format_args!("{what}: {field}[{i}] must be a string, got {}", crate::error::lua_type_name(t)),
                )
            }
        }
    }
}

/// The array of strings at `idx` (checked by [`check_strings`]; empty
/// when the slot is not a table).
///
/// # Safety
/// `idx` absolute, one free slot; the elements of a table checked by
/// [`check_strings`] first. Raises nothing.
unsafe fn strings(L: *mut lua_State, idx: c_int) -> Vec<String> {
    // SAFETY: raw reads of checked string slots; cannot raise.
    unsafe {
        if ffi::lua_type(L, idx) != ffi::LUA_TTABLE {
            return Vec::new();
        }
        let n = lua::rawlen(L, idx);
        let mut out = Vec::with_capacity(n);
        for i in 1..=n {
            lua::rawgeti(L, idx, i as i64);
            out.push(lossy(L, -1));
            ffi::lua_pop(L, 1);
        }
        out
    }
}

/// Push `opts[field]` (opts at 2; nil when opts is not a table) and
/// return its type.
///
/// # Safety
/// `L` valid with the options (or nil) at 2 and two free slots.
unsafe fn push_opt(L: *mut lua_State, field: &str) -> c_int {
    // SAFETY: raw read; two free slots.
    unsafe {
        if ffi::lua_type(L, 2) != ffi::LUA_TTABLE {
            ffi::lua_pushnil(L);
            return ffi::LUA_TNIL;
        }
        lua::push_bytes(L, field.as_bytes());
        lua::rawget(L, 2)
    }
}

/// Push `opts.import_paths` (nil or a checked array of strings).
///
/// # Safety
/// As [`push_opt`]; raises on a bad `import_paths` (no Rust heap held).
unsafe fn push_import_paths(L: *mut lua_State, what: &str) {
    // SAFETY: raw reads; two free slots.
    unsafe {
        match push_opt(L, "import_paths") {
            ffi::LUA_TNIL => {}
            ffi::LUA_TTABLE => check_strings(L, ffi::lua_gettop(L), what, "import_paths"),
            t => raise_fmt(
                L,
                format_args!(
                    "{what}: import_paths must be an array of strings, got {}",
                    crate::error::lua_type_name(t)
                ),
            ),
        }
    }
}

/// Raise unless the table at `idx` maps string names to string sources.
///
/// # Safety
/// `idx` an absolute table index, two free slots; raises on a bad entry
/// (no Rust heap held by the callers then).
unsafe fn check_sources(L: *mut lua_State, idx: c_int) {
    // SAFETY: lua_next over a table we do not modify; keys are not converted.
    unsafe {
        ffi::lua_pushnil(L);
        while ffi::lua_next(L, idx) != 0 {
            if ffi::lua_type(L, -2) != ffi::LUA_TSTRING || ffi::lua_type(L, -1) != ffi::LUA_TSTRING {
                raise_fmt(L, format_args!("parse: sources must map file names (strings) to sources (strings)"))
            }
            ffi::lua_pop(L, 1);
        }
    }
}
