//! Plain Lua values built in Rust first, then pushed as tables.
//!
//! Reflection answers are small trees computed from the descriptor pool
//! (owned Rust data). They are kept in a userdata with a `__gc` before any
//! Lua table is built, so an out-of-memory error while pushing them leaks
//! nothing: the collector drops the tree later.

use std::os::raw::c_int;

use crate::lua::int64::{Int64Mode, push_with_mode};
use crate::lua::{self, ffi, lua_State};

/// A value to push into Lua.
#[derive(Debug, Clone, PartialEq)]
pub enum LValue {
    /// `true`/`false`.
    Bool(bool),
    /// An integer of 32 bits or less (pushed as this Lua's integer).
    Int(i64),
    /// A signed 64-bit integer (pushed as the `int64` option says).
    I64(i64),
    /// An unsigned 64-bit integer (pushed as the `int64` option says).
    U64(u64),
    /// A float.
    Num(f64),
    /// A string (any bytes).
    Str(Box<[u8]>),
    /// An array `{ v1, v2, ... }`.
    Arr(Vec<LValue>),
    /// A table with these keys, in this order.
    Map(Vec<(LValue, LValue)>),
}

impl LValue {
    /// A string value.
    pub fn str(s: &str) -> LValue {
        LValue::Str(s.as_bytes().into())
    }
}

/// A string-keyed table under construction.
#[derive(Default)]
pub struct Record(pub Vec<(LValue, LValue)>);

impl Record {
    /// `t[k] = v`.
    pub fn set(&mut self, k: &str, v: LValue) -> &mut Self {
        self.0.push((LValue::str(k), v));
        self
    }

    /// The table.
    pub fn done(self) -> LValue {
        LValue::Map(self.0)
    }
}

/// How 64-bit integers are pushed.
#[derive(Clone, Copy)]
pub struct PushCtx {
    /// Option `int64` of the schema.
    pub int64: Int64Mode,
    /// Absolute index of the module's helper table (LuaJIT cdata types).
    pub helpers: c_int,
}

/// Push `v`.
///
/// # Safety
/// `L` valid; raises on out-of-memory or stack overflow (callers keep `v`
/// owned by a userdata, see [`own`]).
pub unsafe fn push(L: *mut lua_State, v: &LValue, cx: PushCtx) {
    // SAFETY: plain pushes; the stack is grown first.
    unsafe {
        if ffi::lua_checkstack(L, 4) == 0 {
            crate::error::raise_fmt(L, format_args!("reflection: value nested too deep"))
        }
        match v {
            LValue::Bool(b) => lua::push_bool(L, *b),
            LValue::Int(n) => lua::push_small_int(L, *n),
            LValue::I64(n) => push_with_mode(L, *n as u64, true, cx.int64, cx.helpers),
            LValue::U64(n) => push_with_mode(L, *n, false, cx.int64, cx.helpers),
            LValue::Num(x) => lua::push_number(L, *x),
            LValue::Str(s) => lua::push_bytes(L, s),
            LValue::Arr(a) => {
                ffi::lua_createtable(L, a.len().min(1 << 16) as c_int, 0);
                for (i, e) in a.iter().enumerate() {
                    push(L, e, cx);
                    lua::rawseti(L, -2, i as i64 + 1);
                }
            }
            LValue::Map(m) => {
                ffi::lua_createtable(L, 0, m.len().min(1 << 16) as c_int);
                for (k, e) in m {
                    push(L, k, cx);
                    push(L, e, cx);
                    ffi::lua_rawset(L, -3);
                }
            }
        }
    }
}

/// Registry key of the metatable of [`Owned`] userdata.
static OWNED_MT: u8 = 0;

/// A userdata payload owning a value while it is pushed.
pub struct Owned(pub Option<LValue>);

/// `__gc` of [`Owned`].
///
/// # Safety
/// Called by Lua with an [`Owned`] userdata at 1.
unsafe extern "C-unwind" fn owned_gc(L: *mut lua_State) -> c_int {
    // SAFETY: this metatable is only set on Owned userdata.
    unsafe {
        if let Some(p) = (ffi::lua_touserdata(L, 1) as *mut Owned).as_mut() {
            p.0 = None;
        }
    }
    0
}

/// Push an empty [`Owned`] userdata (with its `__gc`) and return it: fill
/// it, push its value, then [`release`] it.
///
/// # Safety
/// `L` valid with 4 free slots; may raise (nothing of the caller's is owned
/// yet).
pub unsafe fn own<'a>(L: *mut lua_State) -> &'a mut Owned {
    // SAFETY: the userdata is initialised before its metatable is set; it
    // stays on the stack (alive) while the caller uses the reference.
    unsafe {
        let ud = ffi::lua_newuserdata(L, size_of::<Owned>()) as *mut Owned;
        ud.write(Owned(None));
        ffi::lua_pushlightuserdata(L, lua::static_key(&OWNED_MT));
        if lua::rawget(L, ffi::LUA_REGISTRYINDEX) != ffi::LUA_TTABLE {
            ffi::lua_pop(L, 1);
            ffi::lua_createtable(L, 0, 1);
            lua::push_bytes(L, b"__gc");
            ffi::lua_pushcfunction(L, owned_gc);
            ffi::lua_rawset(L, -3);
            ffi::lua_pushlightuserdata(L, lua::static_key(&OWNED_MT));
            ffi::lua_pushvalue(L, -2);
            ffi::lua_rawset(L, ffi::LUA_REGISTRYINDEX);
        }
        ffi::lua_setmetatable(L, -2);
        &mut *ud
    }
}

/// Drop the value held by the [`Owned`] at `idx` now and remove it from
/// the stack.
///
/// # Safety
/// `idx` is the absolute index of the userdata made by [`own`].
pub unsafe fn release(L: *mut lua_State, idx: c_int) {
    // SAFETY: as [`own`]; lua_remove does not raise.
    unsafe {
        if let Some(p) = (ffi::lua_touserdata(L, idx) as *mut Owned).as_mut() {
            p.0 = None;
        }
        ffi::lua_remove(L, idx);
    }
}
