//! Schema reflection: `schema:descriptor_set()`, `files()`, `services()`,
//! `service(name)`, `method(name_or_path)`, `enum_info(name)`,
//! `Msg:options()` and the extra keys of `Msg:fields()` entries, as plain
//! Lua tables.
//!
//! Answers come from the schema's descriptor pool (decoded from its
//! descriptor set on the first reflection call, then kept), are built as
//! Rust trees ([`value::LValue`]) owned by a userdata, then pushed.

pub mod build;
pub mod value;

use std::os::raw::c_int;

use prost_reflect::DescriptorPool;

use crate::api::message::bound_handle;
use crate::api::schema::{SchemaInner, check_schema, push_handle};
use crate::error::{ErrBuf, ShortStr, raise, raise_fmt, type_name};
use crate::lua::{self, ffi, lua_State, upvalue};
use crate::slots::SchemaSlot;
use build::Shape;
use value::{LValue, PushCtx, own, push, release};

/// Methods added to the schema metatable (each gets the metatable as
/// upvalue 1, as the others).
pub const SCHEMA_METHODS: &[(&str, ffi::lua_CFunction)] = &[
    ("descriptor_set", schema_descriptor_set),
    ("files", schema_files),
    ("services", schema_services),
    ("service", schema_service),
    ("method", schema_method),
    ("enum_info", schema_enum_info),
];

/// The schema's descriptor pool, decoded once (`None` if it cannot be: a
/// set protolua compiled always decodes, so only a library panic gives it).
fn pool_of(inner: &SchemaInner) -> Option<&DescriptorPool> {
    inner
        .pool
        .get_or_init(|| {
            let fds: &[u8] = &inner.fds;
            std::panic::catch_unwind(|| {
                let (set, _) = crate::plan::features::rewrite_editions(fds).ok()?;
                DescriptorPool::decode(&set[..]).ok()
            })
            .ok()
            .flatten()
        })
        .as_ref()
}

fn shape(inner: &SchemaInner) -> Shape {
    Shape { enums_as_number: inner.opts.enums_as_number }
}

/// Compute a value from the pool and push it; raise `protolua: <what>:
/// <error>` (after dropping every Rust value) when `compute` fails.
///
/// # Safety
/// `L` valid with 8 free slots; `helpers` indexes the helper table.
unsafe fn answer(
    L: *mut lua_State,
    inner: &SchemaInner,
    helpers: c_int,
    what: &str,
    compute: impl FnOnce(&DescriptorPool, Shape) -> Result<LValue, String>,
) {
    // SAFETY: the tree is owned by a userdata on the stack while it is
    // pushed; errors are formatted into a stack buffer before raising.
    unsafe {
        let slot = own(L);
        let idx = ffi::lua_gettop(L);
        let result = match pool_of(inner) {
            Some(pool) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compute(pool, shape(inner))))
                .unwrap_or_else(|_| Err("the descriptors could not be read (descriptor library panicked)".into())),
            None => Err("the descriptor set could not be decoded for reflection".into()),
        };
        match result {
            Ok(v) => {
                slot.0 = Some(v);
                let cx = PushCtx { int64: inner.opts.int64, helpers };
                push(L, slot.0.as_ref().expect("just set"), cx);
                release(L, idx);
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

/// Push the helper table of the schema at 1 and return its index.
///
/// # Safety
/// `L` valid with a schema userdata at 1 and two free slots.
unsafe fn schema_helpers(L: *mut lua_State) -> c_int {
    // SAFETY: raw reads of the schema's own state table.
    unsafe {
        ffi::lua_getuservalue(L, 1);
        lua::rawgeti(L, -1, SchemaSlot::Helpers.at());
        ffi::lua_remove(L, -2);
        ffi::lua_gettop(L)
    }
}

/// The string argument at `idx` (or raise naming `what`).
///
/// # Safety
/// `L` valid, `idx` acceptable; raises (no Rust heap held by the callers)
/// on a non-string or invalid UTF-8. The string lives while on the stack.
unsafe fn name_arg<'a>(L: *mut lua_State, idx: c_int, what: &str, of: &str) -> &'a str {
    // SAFETY: type-checked slot; the string stays on the stack.
    unsafe {
        if ffi::lua_type(L, idx) != ffi::LUA_TSTRING {
            let got = type_name(L, idx);
            raise_fmt(L, format_args!("{what}: expected {of}, got {got}"))
        }
        let b = lua::string_bytes(L, idx);
        match std::str::from_utf8(b) {
            Ok(s) => s,
            Err(_) => {
                let shown = ShortStr::new(b);
                raise_fmt(L, format_args!("{what}: no {of} \"{shown}\""))
            }
        }
    }
}

/// `schema:descriptor_set()`: the bytes of the `FileDescriptorSet` the
/// schema was built from (imports included; loadable by `protolua.load`).
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn schema_descriptor_set(L: *mut lua_State) -> c_int {
    // SAFETY: checked schema, kept alive by arg 1 while its bytes are copied.
    unsafe {
        let inner = check_schema(L, "descriptor_set");
        lua::push_bytes(L, &inner.fds);
        1
    }
}

/// `schema:files()`: the file names in the set, imports first.
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn schema_files(L: *mut lua_State) -> c_int {
    // SAFETY: see `answer`.
    unsafe {
        let inner = check_schema(L, "files");
        let h = schema_helpers(L);
        answer(L, inner, h, "files", |pool, _| Ok(LValue::Arr(pool.files().map(|f| LValue::str(f.name())).collect())));
        1
    }
}

/// `schema:services()`: the full names of the services in the set.
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn schema_services(L: *mut lua_State) -> c_int {
    // SAFETY: see `answer`.
    unsafe {
        let inner = check_schema(L, "services");
        let h = schema_helpers(L);
        answer(L, inner, h, "services", |pool, _| {
            Ok(LValue::Arr(pool.services().map(|s| LValue::str(s.full_name())).collect()))
        });
        1
    }
}

/// `schema:service(name)`: `{ name, full_name, file, options, methods }`.
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn schema_service(L: *mut lua_State) -> c_int {
    // SAFETY: see `answer`; the name stays on the stack (arg 2).
    unsafe {
        let inner = check_schema(L, "service");
        let name = name_arg(L, 2, "service", "a service name");
        let h = schema_helpers(L);
        answer(L, inner, h, "service", |pool, s| {
            let n = name.strip_prefix('.').unwrap_or(name);
            match pool.get_service_by_name(n) {
                Some(svc) => Ok(build::service(&svc, s)),
                None => Err(format!("unknown service \"{}\"", ShortStr::new(name.as_bytes()))),
            }
        });
        1
    }
}

/// `schema:method(name_or_path)`: the method's description with `input`
/// and `output` message handles (and `input_type`/`output_type` names).
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn schema_method(L: *mut lua_State) -> c_int {
    // SAFETY: see `answer`; handles are pushed by name from the table.
    unsafe {
        let inner = check_schema(L, "method");
        ffi::lua_settop(L, 2);
        let name = name_arg(L, 2, "method", "a method name or path");
        let h = schema_helpers(L);
        answer(L, inner, h, "method", |pool, s| match build::find_method(pool, name) {
            Some(m) => Ok(build::method(&m, s).done()),
            None => Err(format!("unknown method \"{}\"", ShortStr::new(name.as_bytes()))),
        });
        let t = ffi::lua_gettop(L);
        for (key, ty) in [(&b"input"[..], &b"input_type"[..]), (b"output", b"output_type")] {
            lua::push_bytes(L, key);
            lua::push_bytes(L, ty);
            lua::rawget(L, t);
            push_handle(L, inner, ffi::lua_gettop(L), "method");
            ffi::lua_remove(L, -2);
            ffi::lua_rawset(L, t);
        }
        crate::api::grpc::set_method_metatable(L, t);
        ffi::lua_settop(L, t);
        1
    }
}

/// `schema:enum_info(name)`: `{ name, full_name, file, options, values =
/// { { name, number, options }, ... } }` (values in declaration order).
///
/// # Safety
/// Called by Lua.
pub unsafe extern "C-unwind" fn schema_enum_info(L: *mut lua_State) -> c_int {
    // SAFETY: see `answer`.
    unsafe {
        let inner = check_schema(L, "enum_info");
        let name = name_arg(L, 2, "enum_info", "an enum name");
        let h = schema_helpers(L);
        answer(L, inner, h, "enum_info", |pool, s| {
            let n = name.strip_prefix('.').unwrap_or(name);
            match pool.get_enum_by_name(n) {
                Some(e) => Ok(build::enum_info(&e, s)),
                None => Err(format!("unknown enum type \"{}\"", ShortStr::new(name.as_bytes()))),
            }
        });
        1
    }
}

/// `Msg:options()`: the message's options as a table.
///
/// # Safety
/// Called by Lua as a closure made by `push_handle_metatable` (upvalue 3:
/// the helpers).
pub unsafe extern "C-unwind" fn message_options(L: *mut lua_State) -> c_int {
    // SAFETY: the bound handle keeps the schema alive during the call.
    unsafe {
        let Some(h) = bound_handle(L) else { raise_fmt(L, format_args!("options: expected a message handle")) };
        let Some(inner) = h.schema.as_deref() else {
            raise_fmt(L, format_args!("options: message handle used after collection"))
        };
        let name: &str = &inner.plans.messages[h.index as usize].full_name;
        answer(L, inner, upvalue(3), "options", |pool, s| match pool.get_message_by_name(name) {
            Some(m) => Ok(build::options(&m.options(), s)),
            None => Ok(LValue::Map(Vec::new())),
        });
        1
    }
}

/// Add `json_name`, `default` and `options` to each entry of the
/// `Msg:fields()` array on top of the stack.
///
/// # Safety
/// `L` valid, the array on top; `inner` kept alive by the caller's handle;
/// `helpers` indexes the helper table.
pub unsafe fn add_field_details(L: *mut lua_State, inner: &SchemaInner, index: usize, helpers: c_int) {
    // SAFETY: see `answer`; the details array is merged entry by entry.
    unsafe {
        let arr = ffi::lua_gettop(L);
        answer(L, inner, helpers, "fields", |pool, s| {
            let rows = build::field_details(pool, &inner.plans, index, s);
            Ok(LValue::Arr(rows.into_iter().map(|r| r.done()).collect()))
        });
        let details = ffi::lua_gettop(L);
        let n = lua::rawlen(L, details);
        for i in 1..=n {
            lua::rawgeti(L, arr, i as i64);
            lua::rawgeti(L, details, i as i64);
            ffi::lua_pushnil(L);
            while ffi::lua_next(L, -2) != 0 {
                ffi::lua_pushvalue(L, -2);
                ffi::lua_insert(L, -2);
                ffi::lua_rawset(L, -5);
            }
            ffi::lua_settop(L, details);
        }
        ffi::lua_settop(L, arr);
    }
}
