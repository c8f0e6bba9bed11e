//! Message handles (`schema:message('pkg.Msg')`) and the two hot entry
//! points, `Msg:encode(t)` and `Msg:decode(s)`: one C call per message.
//!
//! A handle is a userdata holding an `Rc` of the compiled schema and the
//! message index. Each handle has its own metatable, made once when the
//! handle is (`schema:message` caches handles by name), whose methods are C
//! closures bound to it. Their upvalues are, in order:
//! 1. the schema's table of interned key strings,
//! 2. the handle itself,
//! 3. the int64 helper table (LuaJIT; an empty table elsewhere).
//!
//! `decode` (and `decode_json`, which ends in the same decoder) has more:
//! 4. the `__serialize = 'map'` metatable, and, when
//! the message has plain fields with one-byte tags
//! ([`crate::plan::MessagePlan::plain_by_number`]), 5.–20. the key strings
//! of its fields 0–15 by number (nil where there is none). The root fast
//! path pushes them with `lua_pushvalue`, which reaches an upvalue in
//! three dependent loads, where `lua_rawgeti` of the key table takes five
//! and ~14 more instructions. On LuaJIT, 21. is then the fast path's
//! cache of table constructors by shape (`shape_ctor.rs`) and 22.
//! the constructor it used last.
//!
//! (`__gc` has none: it only ever sees its own handle.)
//!
//! Binding the methods to their handle makes the `self` check of the hot
//! entry points two `lua_touserdata` calls and one pointer comparison
//! (`bound_handle`): about 45 instructions, where checking a shared
//! metatable (`lua_getmetatable`, `lua_rawequal`, a pop) costs about 140.

use std::cell::Cell;
use std::os::raw::c_int;
use std::rc::Rc;

use crate::api::options::read_options;
use crate::api::schema::SchemaInner;
use crate::binary::decode::DecodeCtx;
use crate::binary::encode::{EncodeBuffers, EncodeCtx};
use crate::error::{raise_fmt, type_name};
use crate::lua::table::{set_bool, set_int, set_str};
use crate::lua::{self, ffi, lua_State, upvalue};
use crate::plan::options::LoadOptions;
use crate::plan::{Card, Kind, MessagePlan, NOT_PLAIN};
use crate::slots::Helper;

/// Userdata payload of a message handle.
pub struct MessageUd {
    /// The schema; `None` once finalized.
    pub schema: Option<Rc<SchemaInner>>,
    /// Message index in the plans.
    pub index: u32,
    /// The shape whose constructor `Msg:decode`'s upvalue
    /// `DECODE_UP_LAST_CTOR` holds (LuaJIT; 0: none yet).
    pub last_shape: Cell<c_int>,
    /// The same for `Msg:decode_json`'s upvalue (a closure of its own).
    pub last_shape_json: Cell<c_int>,
}

/// Userdata payload of a temporary encode buffer (re-entrant encodes).
pub struct TempBuffers(pub Option<EncodeBuffers>);

/// Registry key of the temporary-buffer metatable.
pub static TEMP_BUF_MT: u8 = 0;

/// The userdata at `idx` if its metatable is the one at `mt`.
///
/// # Safety
/// `L` valid with one free slot; `mt` a valid index.
#[inline(always)]
pub unsafe fn check_ud<'a, T>(L: *mut lua_State, idx: c_int, mt: c_int) -> Option<&'a T> {
    // SAFETY: a userdata with our metatable was created by us with a `T`
    // payload; the reference lives while the value is on the stack.
    unsafe {
        if ffi::lua_getmetatable(L, idx) == 0 {
            return None;
        }
        let same = ffi::lua_rawequal(L, -1, mt) != 0;
        ffi::lua_pop(L, 1);
        if !same {
            return None;
        }
        (ffi::lua_touserdata(L, idx) as *const T).as_ref()
    }
}

/// The handle the running method closure is bound to (its upvalue 2), if
/// `self` (stack slot 1) is that handle.
///
/// A method called on another handle, or as `Msg.encode(t)`, gets `None`.
/// Only the bound handle's payload is read, never `self`'s: a light
/// userdata that happened to carry the same address would pass the
/// comparison and change nothing.
///
/// # Safety
/// Called from a closure made by [`push_handle_metatable`].
#[inline(always)]
pub(crate) unsafe fn bound_handle<'a>(L: *mut lua_State) -> Option<&'a MessageUd> {
    // SAFETY: upvalue 2 is the MessageUd userdata the closure was made for
    // (initialised before its metatable was set); the closure keeps it
    // alive, and the reference is used only during this call.
    unsafe {
        let own = ffi::lua_touserdata(L, upvalue(2)) as *const MessageUd;
        if ffi::lua_touserdata(L, 1) as *const MessageUd != own {
            return None;
        }
        own.as_ref()
    }
}

/// `Msg:encode(t [, opts])`.
///
/// # Safety
/// Called by Lua as a C closure made by [`push_handle_metatable`].
pub unsafe extern "C-unwind" fn message_encode(L: *mut lua_State) -> c_int {
    // SAFETY: upvalues as documented at the top of this module.
    unsafe {
        let Some(h) = bound_handle(L) else {
            raise_fmt(L, format_args!("encode: expected a message handle (call it as Msg:encode(t))"))
        };
        let Some(inner) = h.schema.as_deref() else {
            raise_fmt(L, format_args!("encode: message handle used after collection"))
        };
        encode_with(L, inner, h.index, 2, 3, upvalue(1), upvalue(3))
    }
}

/// `Msg:decode(s [, opts])`.
///
/// # Safety
/// Called by Lua as a C closure made by [`push_handle_metatable`].
pub unsafe extern "C-unwind" fn message_decode(L: *mut lua_State) -> c_int {
    // SAFETY: upvalues as documented at the top of this module.
    unsafe {
        let Some(h) = bound_handle(L) else {
            raise_fmt(L, format_args!("decode: expected a message handle (call it as Msg:decode(s))"))
        };
        let Some(inner) = h.schema.as_deref() else {
            raise_fmt(L, format_args!("decode: message handle used after collection"))
        };
        decode_with(L, inner, h.index, 2, 3, upvalue(1), upvalue(3), Some(&h.last_shape))
    }
}

/// The schema's options, overridden by the options table at `opts` if any.
/// No argument there (the common `Msg:encode(t)`): the schema's options,
/// known from the stack height without asking the slot's type.
///
/// # Safety
/// `L` valid; `opts` an absolute index. Raises on a bad option.
#[inline(always)]
pub unsafe fn call_options(L: *mut lua_State, inner: &SchemaInner, opts: c_int, what: &str) -> LoadOptions {
    // SAFETY: caller's contract.
    unsafe {
        if ffi::lua_gettop(L) < opts || ffi::lua_type(L, opts) <= ffi::LUA_TNIL {
            inner.opts
        } else {
            read_options(L, opts, inner.opts, what)
        }
    }
}

/// The encoder's context for the table at `t` with options `o`, and `t`
/// made absolute. Pushes the unknown-field store (one slot) when the
/// module keeps unknown fields and `t` is a table.
///
/// # Safety
/// As [`encode_with`]; `t` a valid index.
#[inline(always)]
pub unsafe fn encode_ctx<'a>(
    L: *mut lua_State,
    inner: &'a SchemaInner,
    o: &LoadOptions,
    t: c_int,
    keys: c_int,
    helpers: c_int,
) -> (EncodeCtx<'a>, c_int) {
    // SAFETY: `t` is a valid index; the store (if pushed) stays on the
    // stack above every index the walk uses.
    let (t, store) = unsafe {
        let t = lua::absindex(L, t);
        let store = if inner.module.unknown_stored.get() && ffi::lua_type(L, t) == ffi::LUA_TTABLE {
            crate::unknown::push_store(L, helpers)
        } else {
            None
        };
        (t, store)
    };
    let ctx = EncodeCtx {
        L,
        plans: &inner.plans,
        keys,
        helpers,
        max_depth: o.max_depth,
        strict_keys: o.strict_keys,
        check_required: o.check_required,
        utf8: o.utf8,
        unknown: store.unwrap_or(0),
        err: crate::error::ErrSlot::new(),
        module: &inner.module,
        index: inner.key_index.get(),
        fetch: o.strategies.fetch,
        walk: o.strategies.walk,
    };
    (ctx, t)
}

/// Encode the table at `t` as message `msg`, push the bytes; raise on error.
///
/// # Safety
/// `keys`/`helpers` index the schema's tables; `inner` is kept alive by a
/// value on the stack. Called from a C function called by Lua that has
/// pushed at most 8 values above its base (`schema:encode` pushes 8): of
/// the `LUA_MINSTACK` (20) slots, this function takes up to 2 and the root
/// message [`crate::binary::encode::ROOT_STACK_FREE`] without `lua_checkstack`.
#[inline(always)]
pub unsafe fn encode_with(
    L: *mut lua_State,
    inner: &SchemaInner,
    msg: u32,
    t: c_int,
    opts: c_int,
    keys: c_int,
    helpers: c_int,
) -> c_int {
    // SAFETY: option parsing may raise; nothing of ours is live yet.
    let o = unsafe { call_options(L, inner, opts, "encode") };
    // SAFETY: forwarded contract.
    let (ctx, t) = unsafe { encode_ctx(L, inner, &o, t, keys, helpers) };
    // SAFETY: no Lua error can be raised while `bufs` is borrowed (see the
    // encode module); the stack has `ROOT_STACK_FREE` slots for the root
    // (this function's contract); the busy flag routes a re-entrant encode (from a
    // finalizer run by the protected cdata classifier) to its own buffer.
    unsafe {
        if inner.busy.get() {
            return encode_reentrant(L, &ctx, msg, t);
        }
        inner.busy.set(true);
        let bufs = &mut *inner.bufs.get();
        bufs.clear();
        let r = ctx.encode_root(msg, t, bufs);
        match r {
            Ok(()) => {
                // The buffer stays busy while it is copied: LuaJIT runs a GC
                // step (and so finalizers, which may encode with this very
                // schema) inside lua_pushlstring before it copies. A nested
                // encode then takes the temporary-buffer path. (If the push
                // fails for lack of memory, the flag stays set and later
                // encodes of this schema use temporary buffers: correct,
                // only slower.)
                lua::push_bytes(L, bufs.w.as_slice());
                inner.busy.set(false);
                bufs.trim();
                1
            }
            Err(e) => {
                inner.busy.set(false);
                e.raise(L, "encode", &inner.plans, msg)
            }
        }
    }
}

/// [`encode_with`]'s encode into buffers of its own, for an encode nested
/// in one that holds the schema's buffers (from a finalizer).
///
/// # Safety
/// As [`encode_with`], whose tail it is: `ctx` its context, `t` absolute.
/// May raise (out of memory, the codec's error): the buffers belong to a
/// userdata with a `__gc` from the moment they exist.
#[cold]
unsafe fn encode_reentrant(L: *mut lua_State, ctx: &EncodeCtx<'_>, msg: u32, t: c_int) -> c_int {
    // SAFETY: the buffers live in a userdata with a __gc, so a Lua error
    // after this point cannot leak them.
    unsafe {
        let bufs = push_temp_buffers(L);
        match ctx.encode_root(msg, t, bufs) {
            Ok(()) => {
                lua::push_bytes(L, bufs.w.as_slice());
                1
            }
            Err(e) => e.raise(L, "encode", ctx.plans, msg),
        }
    }
}

/// Push a userdata holding fresh encode buffers (one slot) and return
/// them: they live until the userdata is collected, so a Lua error raised
/// while they are in use cannot leak them.
///
/// # Safety
/// `L` valid with 2 free slots; raises only for lack of memory (before the
/// buffers exist). The reference must not outlive the userdata's stack slot.
#[cold]
pub unsafe fn push_temp_buffers<'a>(L: *mut lua_State) -> &'a mut EncodeBuffers {
    // SAFETY: the userdata is sized for TempBuffers and written before
    // its metatable (with the __gc) is set.
    unsafe {
        let p = ffi::lua_newuserdata(L, size_of::<TempBuffers>()) as *mut TempBuffers;
        p.write(TempBuffers(Some(EncodeBuffers::default())));
        ffi::lua_pushlightuserdata(L, lua::static_key(&TEMP_BUF_MT));
        ffi::lua_rawget(L, ffi::LUA_REGISTRYINDEX);
        ffi::lua_setmetatable(L, -2);
        (*p).0.as_mut().expect("fresh buffers")
    }
}

/// `__gc` of temporary buffers.
///
/// # Safety
/// Called by Lua with a `TempBuffers` userdata.
pub unsafe extern "C-unwind" fn temp_buffers_gc(L: *mut lua_State) -> c_int {
    // SAFETY: the metatable is only set on TempBuffers userdata.
    unsafe {
        let p = ffi::lua_touserdata(L, 1) as *mut TempBuffers;
        if let Some(p) = p.as_mut() {
            drop(p.0.take());
        }
    }
    0
}

/// Decode the string at `s` as message `msg` and push the table.
///
/// # Safety
/// As [`encode_with`]; `keys` is an absolute index, or `upvalue(1)` of
/// `Msg:decode`'s closure for message `msg`, whose upvalues 4.. (the map
/// metatable and the root's key strings, see the module doc) the root
/// fast path then reads.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the entry points' stack layout, spelled out
pub unsafe fn decode_with(
    L: *mut lua_State,
    inner: &SchemaInner,
    msg: u32,
    s: c_int,
    opts: c_int,
    keys: c_int,
    helpers: c_int,
    #[cfg_attr(not(feature = "luajit"), allow(unused_variables))] last_shape: Option<&Cell<c_int>>,
) -> c_int {
    // SAFETY: the input string stays on the stack for the whole call; the
    // decode walk holds only borrows, so Lua errors may cross it.
    unsafe {
        if ffi::lua_type(L, s) != ffi::LUA_TSTRING {
            let got = type_name(L, s);
            raise_fmt(
                L,
                format_args!("decode {}: expected string, got {got}", inner.plans.messages[msg as usize].full_name),
            )
        }
        let o = call_options(L, inner, opts, "decode");
        let bytes = lua::string_bytes(L, s);
        match decode_slice(L, inner, msg, bytes, o, keys, helpers, last_shape) {
            Ok(()) => 1,
            Err(e) => e.raise(L, "decode", &inner.plans, msg),
        }
    }
}

/// Decode `bytes` as message `msg` with options `o` and push the table;
/// on failure push nothing and return the error, unraised.
///
/// # Safety
/// As [`decode_with`]; `bytes` stay valid for the call. The walk holds
/// only borrows, so a Lua error (out of memory) may cross it.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the entry points' stack layout, spelled out
pub unsafe fn decode_slice(
    L: *mut lua_State,
    inner: &SchemaInner,
    msg: u32,
    bytes: &[u8],
    o: LoadOptions,
    keys: c_int,
    helpers: c_int,
    #[cfg_attr(not(feature = "luajit"), allow(unused_variables))] last_shape: Option<&Cell<c_int>>,
) -> Result<(), crate::error::CodecFailure> {
    // With option `serialize`, `DecodeCtx::decode_root` fetches the
    // metatables: the root fast path sets the map metatable straight
    // from the helper table, the general walk gets both in slots.
    let mut ctx = DecodeCtx {
        L,
        plans: &inner.plans,
        keys,
        helpers,
        err: crate::error::ErrSlot::new(),
        input: bytes,
        opts: o,
        seq_mt: 0,
        map_mt: 0,
        root_up: keys < 0,
        #[cfg(feature = "luajit")]
        last_shape,
        #[cfg(feature = "luajit")]
        ctor_memo: &inner.ctor_memo,
        #[cfg(feature = "luajit")]
        tree: &inner.tree_memo,
        #[cfg(feature = "luajit")]
        ctors: 0,
        module: &inner.module,
    };
    // SAFETY: forwarded contract.
    unsafe { ctx.decode_root(msg) }
}

/// `Msg:fields()`: an array of field descriptions.
///
/// # Safety
/// Called by Lua as a C closure made by [`push_handle_metatable`].
pub unsafe extern "C-unwind" fn message_fields(L: *mut lua_State) -> c_int {
    // SAFETY: the bound handle keeps the plans alive; they are only
    // borrowed.
    unsafe {
        let Some(h) = bound_handle(L) else { raise_fmt(L, format_args!("fields: expected a message handle")) };
        let Some(inner) = h.schema.as_deref() else {
            raise_fmt(L, format_args!("fields: message handle used after collection"))
        };
        let plans = &inner.plans;
        let m = &plans.messages[h.index as usize];
        ffi::lua_createtable(L, m.fields.len() as c_int, 0);
        for (i, f) in m.fields.iter().enumerate() {
            ffi::lua_createtable(L, 0, 8);
            set_str(L, "name", &f.name);
            set_int(L, "number", f.number as i64);
            let label = match (f.card, f.required) {
                (Card::Single, true) => "required",
                (Card::Single, false) => "optional",
                _ => "repeated",
            };
            set_str(L, "label", label);
            if f.card == Card::Map {
                let e = &plans.messages[f.sub as usize];
                set_str(L, "type", "map");
                set_str(L, "key_type", e.fields[0].kind.proto_name());
                set_str(L, "value_type", e.fields[1].kind.proto_name());
                if let Some(n) = sub_type_name(plans, &e.fields[1]) {
                    set_str(L, "value_type_name", n);
                }
            } else {
                set_str(L, "type", f.kind.proto_name());
                if let Some(n) = sub_type_name(plans, f) {
                    set_str(L, "type_name", n);
                }
            }
            if f.packed {
                set_bool(L, "packed", true);
            }
            if f.oneof != crate::plan::NO_ONEOF {
                set_str(L, "oneof", &m.oneofs[f.oneof as usize].name);
            }
            lua::rawseti(L, -2, i as i64 + 1);
        }
        crate::api::reflect::add_field_details(L, inner, h.index as usize, upvalue(3));
        1
    }
}

fn sub_type_name<'p>(plans: &'p crate::plan::Plans, f: &crate::plan::FieldPlan) -> Option<&'p str> {
    match f.kind {
        Kind::Message | Kind::Group => Some(&plans.messages[f.sub as usize].full_name),
        Kind::Enum => Some(&plans.enums[f.sub as usize].full_name),
        _ => None,
    }
}

/// `Msg:name()`: the full message name.
///
/// # Safety
/// Called by Lua as a C closure made by [`push_handle_metatable`].
pub unsafe extern "C-unwind" fn message_name(L: *mut lua_State) -> c_int {
    // SAFETY: as message_fields.
    unsafe {
        let Some(h) = bound_handle(L) else { raise_fmt(L, format_args!("name: expected a message handle")) };
        match h.schema.as_deref() {
            Some(inner) => lua::push_bytes(L, inner.plans.messages[h.index as usize].full_name.as_bytes()),
            None => ffi::lua_pushnil(L),
        }
        1
    }
}

/// `__tostring` of handles.
///
/// # Safety
/// Called by Lua as a C closure made by [`push_handle_metatable`].
pub unsafe extern "C-unwind" fn message_tostring(L: *mut lua_State) -> c_int {
    // SAFETY: as message_fields.
    unsafe {
        let name =
            bound_handle(L).and_then(|h| h.schema.as_deref().map(|s| &*s.plans.messages[h.index as usize].full_name));
        let mut buf = crate::error::ErrBuf::new();
        let _ = std::fmt::Write::write_fmt(&mut buf, format_args!("protolua.Message<{}>", name.unwrap_or("?")));
        lua::push_bytes(L, buf.as_bytes());
        1
    }
}

/// `__gc` of handles: release the schema reference.
///
/// # Safety
/// Called by Lua with a handle userdata.
pub unsafe extern "C-unwind" fn message_gc(L: *mut lua_State) -> c_int {
    // SAFETY: this metatable is only set on MessageUd userdata.
    unsafe {
        let p = ffi::lua_touserdata(L, 1) as *mut MessageUd;
        if let Some(p) = p.as_mut() {
            drop(p.schema.take());
        }
    }
    0
}

/// Give the new handle at `handle` its own metatable, with methods bound
/// to it (see the module doc); `keys` and `helpers` are absolute indices,
/// `plan` the handle's message.
///
/// # Safety
/// `L` valid with 8 free slots; `handle` an absolute index of a `MessageUd`
/// userdata already initialised and without a metatable.
pub unsafe fn push_handle_metatable(L: *mut lua_State, handle: c_int, keys: c_int, helpers: c_int, plan: &MessagePlan) {
    // SAFETY: plain table construction when a handle is made.
    unsafe {
        ffi::lua_createtable(L, 0, 4);
        let mt = ffi::lua_gettop(L);
        // `decode`'s extra upvalues: the map metatable, and the root's key
        // strings by field number when the root fast path can run.
        // (A plain array: Lua calls below may raise.)
        let mut key_ids = [0i32; 16];
        let mut n_keys = 0;
        if plan.plain_by_number.len() == key_ids.len() {
            for (k, e) in key_ids.iter_mut().zip(plan.plain_by_number.iter()) {
                *k = if e.wire == NOT_PLAIN { 0 } else { e.key_id };
            }
            n_keys = key_ids.len();
        }
        let plain_keys = &key_ids[..n_keys];
        // Needed above this point: the method table, then for `decode` the
        // name, 3 shared upvalues, the map metatable, up to 16 keys and
        // the two constructor slots, one spare (`lua_checkstack` also
        // raises `ci->top` on 5.4).
        if ffi::lua_checkstack(L, 9 + n_keys as c_int) == 0 {
            raise_fmt(L, format_args!("message: stack overflow"))
        }
        let bound = |name: &[u8], f: ffi::lua_CFunction| {
            lua::push_bytes(L, name);
            ffi::lua_pushvalue(L, keys);
            ffi::lua_pushvalue(L, handle);
            ffi::lua_pushvalue(L, helpers);
            if name == b"decode" || name == b"decode_json" {
                lua::push_rawgeti(L, helpers, Helper::MapMt.at());
                for &k in plain_keys {
                    if k == 0 {
                        ffi::lua_pushnil(L);
                    } else {
                        lua::push_rawgeti(L, keys, i64::from(k));
                    }
                }
                let ups = 4 + plain_keys.len() as c_int;
                // LuaJIT: the constructor cache and the last constructor.
                #[cfg(feature = "luajit")]
                let ups = if plain_keys.is_empty() {
                    ups
                } else {
                    ffi::lua_createtable(L, 0, 0);
                    ffi::lua_pushboolean(L, 0);
                    ups + 2
                };
                ffi::lua_pushcclosure(L, f, ups);
            } else {
                ffi::lua_pushcclosure(L, f, 3);
            }
        };
        ffi::lua_createtable(L, 0, 4);
        let methods: [(&[u8], ffi::lua_CFunction); 13] = [
            (b"encode", message_encode),
            (b"decode", message_decode),
            (b"fields", message_fields),
            (b"name", message_name),
            (b"encode_text", crate::api::text::message_encode_text),
            (b"decode_text", crate::api::text::message_decode_text),
            (b"binary_to_text", crate::api::text::message_binary_to_text),
            (b"text_to_binary", crate::api::text::message_text_to_binary),
            (b"options", crate::api::reflect::message_options),
            (b"binary_to_json", crate::api::json::message_binary_to_json),
            (b"json_to_binary", crate::api::json::message_json_to_binary),
            (b"encode_json", crate::api::json::message_encode_json),
            (b"decode_json", crate::api::json::message_decode_json),
        ];
        for (name, f) in methods {
            bound(name, f);
            ffi::lua_rawset(L, -3);
        }
        lua::push_bytes(L, b"__index");
        ffi::lua_insert(L, -2);
        ffi::lua_rawset(L, mt);
        bound(b"__tostring", message_tostring);
        ffi::lua_rawset(L, mt);
        // __gc needs no upvalues: it only ever sees this handle.
        lua::push_bytes(L, b"__gc");
        ffi::lua_pushcclosure(L, message_gc, 0);
        ffi::lua_rawset(L, mt);
        lua::push_bytes(L, b"__metatable");
        lua::push_bytes(L, b"protolua.Message");
        ffi::lua_rawset(L, mt);
        ffi::lua_setmetatable(L, handle);
    }
}
