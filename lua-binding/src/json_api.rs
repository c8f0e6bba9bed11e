//! The Lua entry points of the JSON codec (`crate::json`):
//! `Msg:binary_to_json(bytes [, opts])` and `Msg:json_to_binary(s [, opts])`,
//! bound to message handles like `encode`/`decode` (see
//! `crate::message_api` for the upvalues: 1. the key table, 2. the
//! handle, 3. the helper table).
//!
//! The codec is plain Rust that never calls Lua: each entry point reads
//! its arguments (which may raise: nothing of ours is live yet), runs the
//! codec into a Rust buffer, pushes the result in protected mode, and on
//! failure formats the error into a stack buffer and drops every Rust
//! value before raising.

use std::fmt::Write as _;
use std::os::raw::c_int;

use crate::error::{ErrBuf, raise, raise_fmt, type_name};
use crate::json::{self, JsonError, JsonOptions};
use crate::lua::{self, ffi, lua_State, upvalue};
use crate::message_api::bound_handle;
use crate::schema::{SchemaInner, read_options};

/// Which conversion an entry point runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Protobuf bytes → JSON text.
    BinaryToJson,
    /// JSON text → protobuf bytes.
    JsonToBinary,
}

impl Op {
    /// The method's name, for errors.
    pub fn name(self) -> &'static str {
        match self {
            Op::BinaryToJson => "binary_to_json",
            Op::JsonToBinary => "json_to_binary",
        }
    }
}

/// `Msg:binary_to_json(bytes [, opts])`: protobuf bytes → JSON text.
///
/// # Safety
/// Called by Lua as a C closure made by `push_handle_metatable`.
pub unsafe extern "C-unwind" fn message_binary_to_json(L: *mut lua_State) -> c_int {
    // SAFETY: upvalues as documented in the module doc.
    unsafe { entry(L, Op::BinaryToJson) }
}

/// `Msg:json_to_binary(s [, opts])`: JSON text → protobuf bytes.
///
/// # Safety
/// Called by Lua as a C closure made by `push_handle_metatable`.
pub unsafe extern "C-unwind" fn message_json_to_binary(L: *mut lua_State) -> c_int {
    // SAFETY: upvalues as documented in the module doc.
    unsafe { entry(L, Op::JsonToBinary) }
}

/// # Safety
/// As the entry points.
unsafe fn entry(L: *mut lua_State, op: Op) -> c_int {
    // SAFETY: the handle keeps the schema alive; the input string stays
    // on the stack (slot 2) for the whole call.
    unsafe {
        let Some(h) = bound_handle(L) else {
            raise_fmt(L, format_args!("{}: expected a message handle (call it as Msg:{}(s))", op.name(), op.name()))
        };
        let Some(inner) = h.schema.as_deref() else {
            raise_fmt(L, format_args!("{}: message handle used after collection", op.name()))
        };
        convert(L, inner, h.index, 2, 3, upvalue(3), op)
    }
}

/// Read the JSON options at `idx` (a table or nothing) over the schema's.
///
/// # Safety
/// `L` valid with 2 free slots; raises on a bad option (the caller holds
/// no Rust heap memory yet).
unsafe fn json_options(L: *mut lua_State, inner: &SchemaInner, idx: c_int, what: &str) -> JsonOptions {
    // SAFETY: option parsing with raw reads.
    unsafe {
        let base = read_options(L, idx, inner.opts, what);
        let mut o =
            JsonOptions { max_depth: base.max_depth, enums_as_number: base.enums_as_number, ..Default::default() };
        if ffi::lua_type(L, idx) != ffi::LUA_TTABLE {
            return o;
        }
        o.json_names = read_bool(L, idx, "json_names", o.json_names, what);
        o.emit_defaults = read_bool(L, idx, "emit_defaults", o.emit_defaults, what);
        o.ignore_unknown = read_bool(L, idx, "ignore_unknown", o.ignore_unknown, what);
        lua::push_bytes(L, b"indent");
        match lua::rawget(L, idx) {
            ffi::LUA_TNIL => {}
            ffi::LUA_TNUMBER => {
                let n = ffi::lua_tonumber(L, -1);
                if !(0.0..=16.0).contains(&n) || n.trunc() != n {
                    raise_fmt(L, format_args!("{what}: indent must be an integer in 0..16"))
                }
                o.indent = Some(n as u8);
            }
            _ => raise_fmt(L, format_args!("{what}: indent must be a number")),
        }
        ffi::lua_pop(L, 1);
        o
    }
}

/// The boolean option `name` of the table at `idx`, or `default`.
///
/// # Safety
/// `idx` a table; one free slot; raises on a non-boolean.
unsafe fn read_bool(L: *mut lua_State, idx: c_int, name: &str, default: bool, what: &str) -> bool {
    // SAFETY: a raw read of a table field.
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

/// Run `op` on the string at `s` as message `msg`, push the result.
///
/// # Safety
/// `inner` kept alive by a value on the stack; `helpers` indexes the
/// helper table; 3 free slots.
pub unsafe fn convert(
    L: *mut lua_State,
    inner: &SchemaInner,
    msg: u32,
    s: c_int,
    opts: c_int,
    helpers: c_int,
    op: Op,
) -> c_int {
    // SAFETY: argument checks raise before any Rust memory is held; the
    // input bytes stay anchored at `s`.
    unsafe {
        let full_name = &*inner.plans.messages[msg as usize].full_name;
        if ffi::lua_type(L, s) != ffi::LUA_TSTRING {
            let got = type_name(L, s);
            raise_fmt(L, format_args!("{} {full_name}: expected string, got {got}", op.name()))
        }
        let o = json_options(L, inner, opts, op.name());
        let input = lua::string_bytes(L, s);
        let failed: Option<ErrBuf> = {
            let result: Result<Vec<u8>, JsonError> = match op {
                Op::BinaryToJson => {
                    let mut out = Vec::with_capacity(input.len() * 2 + 16);
                    json::binary_to_json(&inner.plans, msg, input, &o, &mut out).map(|()| out)
                }
                Op::JsonToBinary => {
                    let mut w = pbwire::Writer::with_capacity(input.len() / 2 + 16);
                    json::json_to_binary(&inner.plans, msg, input, &o, &mut w).map(|()| w.into_vec())
                }
            };
            match result {
                Ok(out) => {
                    if lua::push_bytes_protected(L, helpers, &out) {
                        None
                    } else {
                        // The error object is pushed: raise it once `out` is gone.
                        drop(out);
                        ffi::lua_error(L)
                    }
                }
                Err(e) => {
                    let mut buf = ErrBuf::new();
                    let _ = write!(buf, "protolua: {} {full_name}: {e}", op.name());
                    Some(buf)
                }
            }
        };
        match failed {
            None => 1,
            Some(buf) => raise(L, &buf),
        }
    }
}
