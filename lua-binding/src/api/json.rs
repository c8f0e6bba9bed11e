//! The Lua entry points of the JSON codec (`crate::json`), on message
//! handles (`Msg:binary_to_json(bytes [, opts])`, `Msg:json_to_binary(s)`,
//! `Msg:encode_json(t)`, `Msg:decode_json(s)`, bound like `encode`/`decode`:
//! see `crate::api::message` for the upvalues 1. the key table, 2. the
//! handle, 3. the helper table) and on the schema (`schema:encode_json(name,
//! t [, opts])` ...).
//!
//! `encode_json` runs the binary encoder on the table into its buffers
//! and prints from there; `decode_json` parses into the JSON buffers and
//! runs the binary decoder from there: each one C call with no Lua string
//! in between, with exactly the table forms (and options) of
//! `encode`/`decode`.
//!
//! The codec is plain Rust that never calls Lua: each entry point reads
//! its arguments (which may raise: nothing of ours is live yet), runs the
//! codec into the schema's JSON buffers (reused across calls:
//! `SchemaInner::json_bufs`, guarded by `json_busy`), pushes the result,
//! and on failure formats the error into a stack buffer and drops every
//! Rust value before raising. A call nested in another's use of the
//! buffers (from a finalizer) takes buffers of its own and pushes in
//! protected mode, so that a raise cannot leak them.

use std::cell::Cell;
use std::fmt::Write as _;
use std::os::raw::c_int;

use crate::api::message::{MessageUd, bound_handle, call_options, decode_slice, encode_ctx, push_temp_buffers};
use crate::api::options::read_bool;
use crate::api::schema::{SchemaInner, check_schema, push_handle};
use crate::error::{CodecFailure, ErrBuf, raise, raise_fmt, type_name};
use crate::json::{self, JsonBuffers, JsonOptions};
use crate::lua::{self, ffi, lua_State, upvalue};
use crate::plan::options::{JsonLoadOptions, LoadOptions};
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
    // SAFETY: upvalues as `Msg:decode`'s (`push_handle_metatable` binds
    // both alike), so the decoder's root fast path may read them; the
    // handle keeps the schema alive.
    unsafe {
        let op = Op::DecodeJson;
        let Some(h) = bound_handle(L) else {
            raise_fmt(L, format_args!("{}: expected a message handle (call it as Msg:{}(s))", op.name(), op.name()))
        };
        let Some(inner) = h.schema.as_deref() else {
            raise_fmt(L, format_args!("{}: message handle used after collection", op.name()))
        };
        decode_json(L, inner, h.index, 2, 3, upvalue(1), upvalue(3), Some(&h.last_shape_json))
    }
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
    // the stack (slot 2) while it is read. The upvalues are pseudo-indices,
    // valid whatever the stack height (`decode_json` has its own entry).
    unsafe {
        let Some(h) = bound_handle(L) else {
            raise_fmt(L, format_args!("{}: expected a message handle (call it as Msg:{}(s))", op.name(), op.name()))
        };
        let Some(inner) = h.schema.as_deref() else {
            raise_fmt(L, format_args!("{}: message handle used after collection", op.name()))
        };
        run(L, inner, h.index, 2, 3, upvalue(1), upvalue(3), op)
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
/// `helpers` index the schema's key and helper tables (`keys` absolute,
/// or a handle closure's `upvalue(1)`, as `decode_with` takes it).
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
    // SAFETY: forwarded contract (each method sees to its own nesting).
    unsafe {
        match op {
            Op::BinaryToJson | Op::JsonToBinary => convert(L, inner, msg, arg, opts, helpers, op, op),
            Op::EncodeJson => encode_json(L, inner, msg, arg, opts, keys, helpers),
            Op::DecodeJson => decode_json(L, inner, msg, arg, opts, keys, helpers, None),
        }
    }
}

/// Why a call failed, once its Rust values are dropped. Large (the
/// message is formatted on the stack: no heap to free before the raise),
/// but made only on the failing path, once per call.
#[allow(clippy::large_enum_variant)]
enum Fail {
    /// The JSON codec's error, formatted.
    Json(ErrBuf),
    /// The binary codec's error.
    Codec(CodecFailure),
    /// A protected push failed: its error object is on the stack.
    OnStack,
}

impl Fail {
    /// Raise it.
    ///
    /// # Safety
    /// As [`raise`]: the caller's frames hold no Rust heap memory.
    unsafe fn raise(self, L: *mut lua_State, inner: &SchemaInner, msg: u32, op: Op) -> ! {
        // SAFETY: forwarded contract.
        unsafe {
            match self {
                Fail::Json(buf) => raise(L, &buf),
                Fail::Codec(e) => e.raise(L, op.name(), &inner.plans, msg),
                Fail::OnStack => ffi::lua_error(L),
            }
        }
    }
}

/// `Msg:encode_json(t)`: the binary encoder writes into its buffers, the
/// printer reads them there, and only the JSON text becomes a Lua string.
///
/// # Safety
/// As [`run`].
unsafe fn encode_json(
    L: *mut lua_State,
    inner: &SchemaInner,
    msg: u32,
    t: c_int,
    opts: c_int,
    keys: c_int,
    helpers: c_int,
) -> c_int {
    let op = Op::EncodeJson;
    // SAFETY: option parsing may raise (nothing of ours is live yet). The
    // encode walk raises nothing while the buffers are borrowed. An encode
    // nested in one holding the schema's buffers (from a finalizer) takes
    // buffers in a userdata (a raise cannot leak them); otherwise, if the
    // JSON push fails for lack of memory, the busy flags stay set and later
    // calls take that nested path, correct and only slower.
    unsafe {
        let o = call_options(L, inner, opts, op.name());
        let jo = json_options_of(&o);
        let (ctx, t) = encode_ctx(L, inner, &o, t, keys, helpers);
        let nested = inner.busy.replace(true);
        let bufs = if nested { push_temp_buffers(L) } else { &mut *inner.bufs.get() };
        bufs.clear();
        let fail = match ctx.encode_root(msg, t, bufs) {
            Ok(()) => print_or_parse(L, inner, msg, bufs.w.as_slice(), &jo, helpers, Op::BinaryToJson, op).err(),
            Err(e) => Some(Fail::Codec(e)),
        };
        if !nested {
            inner.busy.set(false);
            bufs.trim();
        }
        match fail {
            None => 1,
            Some(f) => f.raise(L, inner, msg, op),
        }
    }
}

/// `Msg:decode_json(s)`: the parser writes protobuf bytes into the
/// schema's JSON buffers and the binary decoder builds the table from
/// there, with no Lua string in between. `last_shape`: the handle's cell
/// for the root fast path's last constructor, when `keys` is the bound
/// closure's upvalue 1 (see `Msg:decode`).
///
/// # Safety
/// As [`run`].
#[allow(clippy::too_many_arguments)] // the entry points' stack layout, spelled out
unsafe fn decode_json(
    L: *mut lua_State,
    inner: &SchemaInner,
    msg: u32,
    s: c_int,
    opts: c_int,
    keys: c_int,
    helpers: c_int,
    last_shape: Option<&Cell<c_int>>,
) -> c_int {
    let op = Op::DecodeJson;
    // SAFETY: the checks raise before anything of ours is live; the
    // input stays anchored at `s`. While the decoder runs (and may run
    // finalizers, or fail for lack of memory: it holds only borrows) the
    // busy flag sends nested calls to buffers of their own; a failure that
    // leaves the flag set only makes later calls take that slower path.
    unsafe {
        let full_name = &*inner.plans.messages[msg as usize].full_name;
        if ffi::lua_type(L, s) != ffi::LUA_TSTRING {
            let got = type_name(L, s);
            raise_fmt(L, format_args!("{} {full_name}: expected string, got {got}", op.name()))
        }
        if inner.json_busy.get() {
            // Nested (from a finalizer) in a call holding the buffers: a
            // Lua string in between, on buffers of its own.
            convert(L, inner, msg, s, opts, helpers, Op::JsonToBinary, op);
            ffi::lua_replace(L, s);
            let o = call_options(L, inner, opts, op.name());
            let bytes = lua::string_bytes(L, s);
            return match decode_slice(L, inner, msg, bytes, o, keys, helpers, last_shape) {
                Ok(()) => 1,
                Err(e) => e.raise(L, op.name(), &inner.plans, msg),
            };
        }
        let o = call_options(L, inner, opts, op.name());
        let jo = json_options_of(&o);
        let input = lua::string_bytes(L, s);
        inner.json_busy.set(true);
        let bufs = &mut *inner.json_bufs.get();
        let fail = match json::json_to_binary_into(&inner.plans, msg, input, &jo, bufs) {
            Ok(()) => {
                decode_slice(L, inner, msg, bufs.bytes.as_slice(), o, keys, helpers, last_shape).err().map(Fail::Codec)
            }
            Err(e) => Some(Fail::Json(json_error(full_name, op, &e))),
        };
        bufs.trim();
        inner.json_busy.set(false);
        match fail {
            None => 1,
            Some(f) => f.raise(L, inner, msg, op),
        }
    }
}

/// `protolua: <op> <full name>: <error>`, in a stack buffer.
fn json_error(full_name: &str, op: Op, e: &json::JsonError) -> ErrBuf {
    let mut buf = ErrBuf::new();
    let _ = write!(buf, "protolua: {} {full_name}: {e}", op.name());
    buf
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

/// The JSON codec's options out of a call's options.
fn json_options_of(o: &LoadOptions) -> JsonOptions {
    let j = o.json;
    JsonOptions {
        json_names: j.json_names,
        emit_defaults: j.emit_defaults,
        enums_as_number: o.enums_as_number,
        ignore_unknown: j.ignore_unknown,
        indent: j.indent,
        max_depth: o.max_depth,
        check_required: o.check_required,
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
    // input bytes stay anchored at `s`; `print_or_parse` returns with
    // every Rust value of its own dropped.
    unsafe {
        if ffi::lua_type(L, s) != ffi::LUA_TSTRING {
            let full_name = &*inner.plans.messages[msg as usize].full_name;
            let got = type_name(L, s);
            raise_fmt(L, format_args!("{} {full_name}: expected string, got {got}", shown.name()))
        }
        let o = call_options(L, inner, opts, shown.name());
        let jo = json_options_of(&o);
        let input = lua::string_bytes(L, s);
        match print_or_parse(L, inner, msg, input, &jo, helpers, op, shown) {
            Ok(()) => 1,
            Err(f) => f.raise(L, inner, msg, shown),
        }
    }
}

/// Run `op` (`BinaryToJson` or `JsonToBinary`) on `input` and push the
/// result string; errors are named after `shown`. Returns with every Rust
/// value it made dropped, so the caller can raise.
///
/// # Safety
/// `inner` kept alive by a value on the stack; `input` valid for the
/// call; `helpers` indexes the helper table; 3 free slots.
#[allow(clippy::too_many_arguments)] // the entry points' stack layout, spelled out
unsafe fn print_or_parse(
    L: *mut lua_State,
    inner: &SchemaInner,
    msg: u32,
    input: &[u8],
    o: &JsonOptions,
    helpers: c_int,
    op: Op,
    shown: Op,
) -> Result<(), Fail> {
    fn run<'b>(
        inner: &SchemaInner,
        msg: u32,
        input: &[u8],
        o: &JsonOptions,
        op: Op,
        bufs: &'b mut JsonBuffers,
    ) -> Result<&'b [u8], json::JsonError> {
        match op {
            Op::BinaryToJson | Op::EncodeJson => {
                json::binary_to_json_into(&inner.plans, msg, input, o, bufs).map(|()| &bufs.text[..])
            }
            Op::JsonToBinary | Op::DecodeJson => {
                json::json_to_binary_into(&inner.plans, msg, input, o, bufs).map(|()| bufs.bytes.as_slice())
            }
        }
    }
    let full_name = &*inner.plans.messages[msg as usize].full_name;
    // SAFETY: the schema's buffers are borrowed only by the call that set
    // `json_busy` (a nested call sees it set and takes buffers of its
    // own). With the schema's buffers the frame owns no heap memory, so
    // the push may raise (out of memory: the flag then stays set, and
    // later calls take buffers of their own, correct and only slower);
    // with buffers of its own the push is protected and they are dropped
    // before the caller raises.
    unsafe {
        if inner.json_busy.replace(true) {
            let mut own = JsonBuffers::default();
            return match run(inner, msg, input, o, op, &mut own) {
                Ok(out) if lua::push_bytes_protected(L, helpers, out) => Ok(()),
                Ok(_) => Err(Fail::OnStack),
                Err(e) => Err(Fail::Json(json_error(full_name, shown, &e))),
            };
        }
        let bufs = &mut *inner.json_bufs.get();
        let r = match run(inner, msg, input, o, op, bufs) {
            Ok(out) => {
                lua::push_bytes(L, out);
                Ok(())
            }
            Err(e) => Err(Fail::Json(json_error(full_name, shown, &e))),
        };
        bufs.trim();
        inner.json_busy.set(false);
        r
    }
}
