//! The Lua entry points of the JSON codec (`crate::json`), on message
//! handles (`Msg:binary_to_json(bytes [, opts])`, `Msg:json_to_binary(s)`,
//! `Msg:encode_json(t)`, `Msg:decode_json(s)`, bound like `encode`/`decode`:
//! see `crate::api::message` for the upvalues 1. the key table, 2. the
//! handle, 3. the helper table) and on the schema (`schema:encode_json(name,
//! t [, opts])` ...).
//!
//! `encode_json` runs the binary encoder on the table, then prints its
//! bytes; `decode_json` parses into bytes, then runs the binary decoder:
//! each one C call, with exactly the table forms (and options) of
//! `encode`/`decode`.
//!
//! The codec is plain Rust that never calls Lua: each entry point reads
//! its arguments (which may raise: nothing of ours is live yet), runs the
//! codec into the schema's JSON buffers (reused across calls:
//! `SchemaInner::json_bufs`), pushes the result in protected mode, and on
//! failure formats the error into a stack buffer and drops every Rust
//! value before raising.

use std::fmt::Write as _;
use std::os::raw::c_int;

use crate::api::message::{MessageUd, bound_handle, decode_with, encode_with};
use crate::api::options::{read_bool, read_options};
use crate::api::schema::{SchemaInner, check_schema, push_handle};
use crate::error::{ErrBuf, raise, raise_fmt, type_name};
use crate::json::{self, JsonBuffers, JsonOptions};
use crate::lua::{self, ffi, lua_State, upvalue};
use crate::plan::options::JsonLoadOptions;
use crate::slots::SchemaSlot;

/// Which conversion an entry point runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Protobuf bytes → JSON text.
    BinaryToJson,
    /// JSON text → protobuf bytes.
    JsonToBinary,
    /// Lua table → JSON text.
    EncodeJson,
    /// JSON text → Lua table.
    DecodeJson,
}

impl Op {
    /// The method's name, for errors.
    pub fn name(self) -> &'static str {
        match self {
            Op::BinaryToJson => "binary_to_json",
            Op::JsonToBinary => "json_to_binary",
            Op::EncodeJson => "encode_json",
            Op::DecodeJson => "decode_json",
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

/// `Msg:encode_json(t [, opts])`: Lua table → JSON text.
///
/// # Safety
/// Called by Lua as a C closure made by `push_handle_metatable`.
pub unsafe extern "C-unwind" fn message_encode_json(L: *mut lua_State) -> c_int {
    // SAFETY: upvalues as documented in the module doc.
    unsafe { entry(L, Op::EncodeJson) }
}

/// `Msg:decode_json(s [, opts])`: JSON text → Lua table.
///
/// # Safety
/// Called by Lua as a C closure made by `push_handle_metatable`.
pub unsafe extern "C-unwind" fn message_decode_json(L: *mut lua_State) -> c_int {
    // SAFETY: upvalues as documented in the module doc.
    unsafe { entry(L, Op::DecodeJson) }
}

/// `schema:binary_to_json(name, bytes [, opts])`.
///
/// # Safety
/// Called by Lua as a schema method (upvalue 1: the schema metatable).
pub unsafe extern "C-unwind" fn schema_binary_to_json(L: *mut lua_State) -> c_int {
    // SAFETY: as schema_entry.
    unsafe { schema_entry(L, Op::BinaryToJson) }
}

/// `schema:json_to_binary(name, s [, opts])`.
///
/// # Safety
/// Called by Lua as a schema method (upvalue 1: the schema metatable).
pub unsafe extern "C-unwind" fn schema_json_to_binary(L: *mut lua_State) -> c_int {
    // SAFETY: as schema_entry.
    unsafe { schema_entry(L, Op::JsonToBinary) }
}

/// `schema:encode_json(name, t [, opts])`.
///
/// # Safety
/// Called by Lua as a schema method (upvalue 1: the schema metatable).
pub unsafe extern "C-unwind" fn schema_encode_json(L: *mut lua_State) -> c_int {
    // SAFETY: as schema_entry.
    unsafe { schema_entry(L, Op::EncodeJson) }
}

/// `schema:decode_json(name, s [, opts])`.
///
/// # Safety
/// Called by Lua as a schema method (upvalue 1: the schema metatable).
pub unsafe extern "C-unwind" fn schema_decode_json(L: *mut lua_State) -> c_int {
    // SAFETY: as schema_entry.
    unsafe { schema_entry(L, Op::DecodeJson) }
}

/// # Safety
/// As the message entry points.
unsafe fn entry(L: *mut lua_State, op: Op) -> c_int {
    // SAFETY: the handle keeps the schema alive; the argument stays on
    // the stack (slot 2) while it is read.
    unsafe {
        let Some(h) = bound_handle(L) else {
            raise_fmt(L, format_args!("{}: expected a message handle (call it as Msg:{}(s))", op.name(), op.name()))
        };
        let Some(inner) = h.schema.as_deref() else {
            raise_fmt(L, format_args!("{}: message handle used after collection", op.name()))
        };
        ffi::lua_settop(L, 3);
        // An absolute index of the key table: decode reads its root fast
        // path's upvalues only when given `upvalue(1)` of its own closure.
        ffi::lua_pushvalue(L, upvalue(1));
        run(L, inner, h.index, 2, 3, 4, upvalue(3), op)
    }
}

/// # Safety
/// As the schema methods.
unsafe fn schema_entry(L: *mut lua_State, op: Op) -> c_int {
    // SAFETY: as `schema:encode`: the handle and state tables stay on the
    // stack; the schema (arg 1) keeps `inner` alive.
    unsafe {
        let inner = check_schema(L, op.name());
        ffi::lua_settop(L, 4);
        push_handle(L, inner, 2, op.name());
        let index = (*(ffi::lua_touserdata(L, 5) as *const MessageUd)).index;
        ffi::lua_getuservalue(L, 1);
        lua::rawgeti(L, 6, SchemaSlot::Keys.at());
        lua::rawgeti(L, 6, SchemaSlot::Helpers.at());
        run(L, inner, index, 3, 4, 7, 8, op)
    }
}

/// Run `op` on the argument at `arg`, push the result. `keys` and
/// `helpers` index the schema's key and helper tables (`keys` absolute).
///
/// # Safety
/// `inner` kept alive by a value on the stack; called from a C function
/// that has pushed at most 8 values above its base (as `encode_with`).
#[allow(clippy::too_many_arguments)] // the entry points' stack layout, spelled out
unsafe fn run(
    L: *mut lua_State,
    inner: &SchemaInner,
    msg: u32,
    arg: c_int,
    opts: c_int,
    keys: c_int,
    helpers: c_int,
    op: Op,
) -> c_int {
    // SAFETY: each step leaves its result on top, which replaces `arg`
    // (whose value is no longer needed) to keep the stack within bounds.
    unsafe {
        match op {
            Op::BinaryToJson | Op::JsonToBinary => convert(L, inner, msg, arg, opts, helpers, op, op),
            Op::EncodeJson => {
                encode_with(L, inner, msg, arg, opts, keys, helpers);
                ffi::lua_replace(L, arg);
                convert(L, inner, msg, arg, opts, helpers, Op::BinaryToJson, op)
            }
            Op::DecodeJson => {
                convert(L, inner, msg, arg, opts, helpers, Op::JsonToBinary, op);
                ffi::lua_replace(L, arg);
                decode_with(L, inner, msg, arg, opts, keys, helpers, None)
            }
        }
    }
}

/// Read the JSON options of the options table at `idx` over `base`
/// (called by `read_options` for `load` and every call).
///
/// # Safety
/// `idx` a table; 2 free slots; raises on a bad option (the callers hold
/// no Rust heap memory).
pub unsafe fn read_json_options(L: *mut lua_State, idx: c_int, base: JsonLoadOptions, what: &str) -> JsonLoadOptions {
    let mut o = base;
    // SAFETY: raw reads of table fields.
    unsafe {
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
    }
    o
}

/// The JSON options of a call: the schema's, overridden by the options
/// table at `idx` if any.
///
/// # Safety
/// `L` valid with 2 free slots; raises on a bad option (the caller holds
/// no Rust heap memory yet).
unsafe fn json_options(L: *mut lua_State, inner: &SchemaInner, idx: c_int, what: &str) -> JsonOptions {
    // SAFETY: option parsing with raw reads.
    let base = unsafe { read_options(L, idx, inner.opts, what) };
    let j = base.json;
    JsonOptions {
        json_names: j.json_names,
        emit_defaults: j.emit_defaults,
        enums_as_number: base.enums_as_number,
        ignore_unknown: j.ignore_unknown,
        indent: j.indent,
        max_depth: base.max_depth,
        check_required: base.check_required,
    }
}

/// Run `op` (a conversion of strings) on the string at `s` as message
/// `msg`, push the result; errors are named after `shown`.
///
/// # Safety
/// `inner` kept alive by a value on the stack; `helpers` indexes the
/// helper table; 3 free slots.
#[allow(clippy::too_many_arguments)] // the entry points' stack layout, spelled out
unsafe fn convert(
    L: *mut lua_State,
    inner: &SchemaInner,
    msg: u32,
    s: c_int,
    opts: c_int,
    helpers: c_int,
    op: Op,
    shown: Op,
) -> c_int {
    // SAFETY: argument checks raise before any Rust memory is held; the
    // input bytes stay anchored at `s`; the schema's JSON buffers are
    // borrowed only by the call that set `json_busy` (a nested call sees
    // it set and takes buffers of its own).
    unsafe {
        let full_name = &*inner.plans.messages[msg as usize].full_name;
        if ffi::lua_type(L, s) != ffi::LUA_TSTRING {
            let got = type_name(L, s);
            raise_fmt(L, format_args!("{} {full_name}: expected string, got {got}", shown.name()))
        }
        let o = json_options(L, inner, opts, shown.name());
        let input = lua::string_bytes(L, s);
        // Every Rust value of the call lives in this block, which raises
        // nothing (the push is protected): it ends before any raise.
        // False: the push failed, its error object is on the stack.
        let mut pushed = true;
        let failed: Option<ErrBuf> = {
            // The schema's buffers, unless a call nested in this one's push
            // (a finalizer run by the GC step of the copy) holds them:
            // then buffers of its own.
            let nested = inner.json_busy.replace(true);
            let mut own = nested.then(JsonBuffers::default);
            let bufs = match own.as_mut() {
                Some(b) => b,
                None => &mut *inner.json_bufs.get(),
            };
            let result = match op {
                Op::BinaryToJson | Op::EncodeJson => {
                    json::binary_to_json_into(&inner.plans, msg, input, &o, bufs).map(|()| &bufs.text[..])
                }
                Op::JsonToBinary | Op::DecodeJson => {
                    json::json_to_binary_into(&inner.plans, msg, input, &o, bufs).map(|()| bufs.bytes.as_slice())
                }
            };
            let failed = match result {
                Ok(out) => {
                    pushed = lua::push_bytes_protected(L, helpers, out);
                    None
                }
                Err(e) => {
                    let mut buf = ErrBuf::new();
                    let _ = write!(buf, "protolua: {} {full_name}: {e}", shown.name());
                    Some(buf)
                }
            };
            if !nested {
                bufs.trim();
                inner.json_busy.set(false);
            }
            failed
        };
        match failed {
            Some(buf) => raise(L, &buf),
            None if pushed => 1,
            None => ffi::lua_error(L),
        }
    }
}
