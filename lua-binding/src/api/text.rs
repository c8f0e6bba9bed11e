//! The text format's Lua entry points (`crate::text` does the work):
//!
//! ```lua
//! Msg:binary_to_text(bytes [, opts])   Msg:text_to_binary(s [, opts])
//! Msg:encode_text(t [, opts])          Msg:decode_text(s [, opts])
//! schema:encode_text('pkg.Msg', t [, opts])   -- and the other three
//! ```
//!
//! `encode_text` is `Msg:encode` then the printer, `decode_text` the
//! parser then `Msg:decode`: the table side is the binary codec's, options
//! and all. The message methods are closures bound like `Msg:encode`
//! (upvalues: key table, handle, helper table).

use std::fmt::Write as _;
use std::os::raw::c_int;

use crate::api::message::MessageUd;
use crate::api::options::read_options;
use crate::api::schema::SchemaInner;
use crate::error::{ErrBuf, raise, raise_fmt, type_name};
use crate::lua::{self, ffi, lua_State, upvalue};
use crate::plan::options::LoadOptions;
use crate::text::{self, ParseOptions, PrintOptions};

/// The bound handle's schema and message index, or a raised error.
///
/// # Safety
/// Called from a closure bound to a handle (upvalue 2).
unsafe fn bound<'a>(L: *mut lua_State, what: &str) -> (&'a SchemaInner, usize) {
    // SAFETY: upvalue 2 is the handle's MessageUd (see message_api); it
    // outlives this call, and so does the schema it holds.
    unsafe {
        let own = ffi::lua_touserdata(L, upvalue(2)) as *const MessageUd;
        if ffi::lua_touserdata(L, 1) as *const MessageUd != own {
            raise_fmt(L, format_args!("{what}: expected a message handle (call it as Msg:{what}(...))"))
        }
        let h = &*own;
        match h.schema.as_deref() {
            Some(inner) => (&*(inner as *const SchemaInner), h.index as usize),
            None => raise_fmt(L, format_args!("{what}: message handle used after collection")),
        }
    }
}

/// The string argument at `idx`, or a raised error.
///
/// # Safety
/// `L` valid, one free slot.
unsafe fn check_string<'a>(L: *mut lua_State, idx: c_int, what: &str) -> &'a [u8] {
    // SAFETY: type checked before reading; the string stays on the stack.
    unsafe {
        if ffi::lua_type(L, idx) != ffi::LUA_TSTRING {
            let got = type_name(L, idx);
            raise_fmt(L, format_args!("{what}: expected a string, got {got}"))
        }
        lua::string_bytes(L, idx)
    }
}

/// Read a boolean field of the options table at `idx` (nil: `default`).
///
/// # Safety
/// `L` valid, two free slots.
unsafe fn opt_bool(L: *mut lua_State, idx: c_int, name: &str, default: bool, what: &str) -> bool {
    // SAFETY: raw reads of a table.
    unsafe {
        if ffi::lua_type(L, idx) != ffi::LUA_TTABLE {
            return default;
        }
        crate::api::options::read_bool(L, idx, name, default, what)
    }
}

/// The per-call options (the schema's, overridden by the table at `idx`).
///
/// # Safety
/// `L` valid, two free slots; raises on a bad option.
unsafe fn call_options(L: *mut lua_State, idx: c_int, inner: &SchemaInner, what: &str) -> LoadOptions {
    // SAFETY: forwarded contract.
    unsafe { read_options(L, idx, inner.opts, what) }
}

/// The printer's options from the table at `idx`.
///
/// # Safety
/// `L` valid, two free slots; raises on a bad option.
unsafe fn print_options(L: *mut lua_State, idx: c_int, inner: &SchemaInner, what: &str) -> PrintOptions {
    // SAFETY: forwarded contract.
    unsafe {
        let o = call_options(L, idx, inner, what);
        PrintOptions {
            single_line: opt_bool(L, idx, "single_line", false, what),
            print_unknown: opt_bool(L, idx, "print_unknown", false, what),
            max_depth: o.max_depth,
            enums_as_number: o.enums_as_number,
        }
    }
}

/// Push `out` (dropped first if pushing fails), or raise `err` prefixed by
/// `what` and the message name. Nothing of Rust's is left when raising.
///
/// # Safety
/// `L` valid with 3 free slots; `upvalue(3)` is the helper table.
unsafe fn push_or_raise(L: *mut lua_State, res: Result<Vec<u8>, String>, what: &str, msg: &str) -> c_int {
    match res {
        Ok(out) => {
            // SAFETY: the helper table is upvalue 3 of every bound method.
            let ok = unsafe { lua::push_bytes_protected(L, upvalue(3), &out) };
            drop(out);
            if !ok {
                // SAFETY: the error object is on top; no Rust heap is held.
                unsafe { ffi::lua_error(L) };
            }
            1
        }
        Err(e) => {
            let mut buf = ErrBuf::new();
            let _ = write!(buf, "protolua: {what} {msg}: {e}");
            drop(e);
            // SAFETY: only stack memory is held.
            unsafe { raise(L, &buf) }
        }
    }
}

/// Call method `name` of the handle at 1 with the values at `args`
/// (stack indices), leaving its one result on top.
///
/// # Safety
/// `L` valid; the handle at 1. The method may raise (nothing of Rust's is
/// held by the callers at that point).
unsafe fn call_method(L: *mut lua_State, name: &std::ffi::CStr, args: &[c_int]) {
    // SAFETY: plain stack operations; the method is the handle's own.
    unsafe {
        ffi::luaL_checkstack(L, 3 + args.len() as c_int, c"protolua: text".as_ptr());
        ffi::lua_getfield(L, 1, name.as_ptr());
        ffi::lua_pushvalue(L, 1);
        for &a in args {
            ffi::lua_pushvalue(L, a);
        }
        ffi::lua_call(L, args.len() as c_int + 1, 1);
    }
}

/// Print the wire bytes at `at` as text and push it.
///
/// # Safety
/// `L` valid; `at` holds a string; upvalues as for a bound method.
unsafe fn print_at(
    L: *mut lua_State,
    inner: &SchemaInner,
    mi: usize,
    at: c_int,
    opts: PrintOptions,
    what: &str,
) -> c_int {
    // SAFETY: the string at `at` stays on the stack during the print.
    unsafe {
        let bytes = lua::string_bytes(L, at);
        let res = text::binary_to_text(&inner.plans, mi, bytes, opts).map(String::into_bytes);
        push_or_raise(L, res, what, &inner.plans.messages[mi].full_name)
    }
}

/// Parse the text at `at` and push its wire bytes.
///
/// # Safety
/// `L` valid; `at` holds a string; upvalues as for a bound method.
unsafe fn parse_at(L: *mut lua_State, inner: &SchemaInner, mi: usize, at: c_int, o: LoadOptions, what: &str) -> c_int {
    // SAFETY: the string at `at` stays on the stack during the parse.
    unsafe {
        let s = lua::string_bytes(L, at);
        let po = ParseOptions { max_depth: o.max_depth, check_required: o.check_required };
        let res = text::text_to_binary(&inner.plans, mi, s, po).map_err(|e| e.to_string());
        push_or_raise(L, res, what, &inner.plans.messages[mi].full_name)
    }
}

/// `Msg:binary_to_text(bytes [, opts])`.
///
/// # Safety
/// Called by Lua as a closure bound to a handle.
pub unsafe extern "C-unwind" fn message_binary_to_text(L: *mut lua_State) -> c_int {
    // SAFETY: checked arguments; see the helpers.
    unsafe {
        let (inner, mi) = bound(L, "binary_to_text");
        check_string(L, 2, "binary_to_text");
        let opts = print_options(L, 3, inner, "binary_to_text");
        print_at(L, inner, mi, 2, opts, "binary_to_text")
    }
}

/// `Msg:text_to_binary(s [, opts])`.
///
/// # Safety
/// Called by Lua as a closure bound to a handle.
pub unsafe extern "C-unwind" fn message_text_to_binary(L: *mut lua_State) -> c_int {
    // SAFETY: checked arguments; see the helpers.
    unsafe {
        let (inner, mi) = bound(L, "text_to_binary");
        check_string(L, 2, "text_to_binary");
        let o = call_options(L, 3, inner, "text_to_binary");
        parse_at(L, inner, mi, 2, o, "text_to_binary")
    }
}

/// `Msg:encode_text(t [, opts])`: `Msg:encode(t, opts)`, then printed.
///
/// # Safety
/// Called by Lua as a closure bound to a handle.
pub unsafe extern "C-unwind" fn message_encode_text(L: *mut lua_State) -> c_int {
    // SAFETY: checked arguments; encode may raise before any Rust state.
    unsafe {
        let (inner, mi) = bound(L, "encode_text");
        ffi::lua_settop(L, 3);
        let opts = print_options(L, 3, inner, "encode_text");
        call_method(L, c"encode", &[2, 3]);
        let at = ffi::lua_gettop(L);
        print_at(L, inner, mi, at, opts, "encode_text")
    }
}

/// `Msg:decode_text(s [, opts])`: parsed, then `Msg:decode(bytes, opts)`.
///
/// # Safety
/// Called by Lua as a closure bound to a handle.
pub unsafe extern "C-unwind" fn message_decode_text(L: *mut lua_State) -> c_int {
    // SAFETY: checked arguments; decode runs after the Rust state is gone.
    unsafe {
        let (inner, mi) = bound(L, "decode_text");
        ffi::lua_settop(L, 3);
        check_string(L, 2, "decode_text");
        let o = call_options(L, 3, inner, "decode_text");
        parse_at(L, inner, mi, 2, o, "decode_text");
        let bytes = ffi::lua_gettop(L);
        call_method(L, c"decode", &[bytes, 3]);
        1
    }
}

/// `schema:<method>(name, ...)`: `schema:message(name):<method>(...)`.
///
/// # Safety
/// Called by Lua with the schema at 1.
unsafe fn schema_forward(L: *mut lua_State, method: &std::ffi::CStr) -> c_int {
    // SAFETY: plain stack operations; the methods raise their own errors.
    unsafe {
        let n = ffi::lua_gettop(L).max(2);
        ffi::lua_settop(L, n);
        ffi::luaL_checkstack(L, n + 4, c"protolua: text".as_ptr());
        ffi::lua_getfield(L, 1, c"message".as_ptr());
        ffi::lua_pushvalue(L, 1);
        ffi::lua_pushvalue(L, 2);
        ffi::lua_call(L, 2, 1);
        let h = ffi::lua_gettop(L);
        ffi::lua_getfield(L, h, method.as_ptr());
        ffi::lua_pushvalue(L, h);
        for i in 3..=n {
            ffi::lua_pushvalue(L, i);
        }
        ffi::lua_call(L, n - 1, 1);
        1
    }
}

/// `schema:binary_to_text(name, bytes [, opts])`.
///
/// # Safety
/// Called by Lua with the schema at 1.
pub unsafe extern "C-unwind" fn schema_binary_to_text(L: *mut lua_State) -> c_int {
    // SAFETY: forwarded.
    unsafe { schema_forward(L, c"binary_to_text") }
}

/// `schema:text_to_binary(name, s [, opts])`.
///
/// # Safety
/// Called by Lua with the schema at 1.
pub unsafe extern "C-unwind" fn schema_text_to_binary(L: *mut lua_State) -> c_int {
    // SAFETY: forwarded.
    unsafe { schema_forward(L, c"text_to_binary") }
}

/// `schema:encode_text(name, t [, opts])`.
///
/// # Safety
/// Called by Lua with the schema at 1.
pub unsafe extern "C-unwind" fn schema_encode_text(L: *mut lua_State) -> c_int {
    // SAFETY: forwarded.
    unsafe { schema_forward(L, c"encode_text") }
}

/// `schema:decode_text(name, s [, opts])`.
///
/// # Safety
/// Called by Lua with the schema at 1.
pub unsafe extern "C-unwind" fn schema_decode_text(L: *mut lua_State) -> c_int {
    // SAFETY: forwarded.
    unsafe { schema_forward(L, c"decode_text") }
}
