//! Every Lua index the module uses by number, one enum per table: the
//! module's helper table, the upvalues of `Msg:decode`, the slots of a
//! schema's key table and of its uservalue table. An enum's discriminants
//! are distinct by construction, so two owners can never be given the same
//! slot (a collision fails silently: one such in the helper table sends
//! encode's key counts to their slow fallback).

use std::os::raw::c_int;

/// Slots of the module's helper table (made in `luaopen_protolua`, passed to
/// every schema and handle as an upvalue).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i64)]
pub enum Helper {
    /// LuaJIT: the `int64_t` ctype (`crate::lua::int64`).
    Int64Ctype = 1,
    /// LuaJIT: the `uint64_t` ctype.
    Uint64Ctype = 2,
    /// LuaJIT: the cdata classifier.
    Classify = 3,
    /// The weak-keyed unknown-field store (`crate::unknown`).
    Unknown = 4,
    /// The module-state userdata (`crate::lua::host::ModuleState`).
    Module = 5,
    /// The `{__serialize = 'seq'}` metatable.
    SeqMt = 6,
    /// The `{__serialize = 'map'}` metatable.
    MapMt = 7,
    /// `crate::lua::copy_bytes`, run under `lua_pcall` to copy a string.
    CopyBytes = 8,
    /// LuaJIT: `count(t)`, the number of keys of table `t` (strict keys).
    CountKeys = 9,
    /// LuaJIT: `count_batch(a, i, j)`, the key counts of `a[i]..a[j]`.
    CountBatchKeys = 10,
    /// LuaJIT: the maker of encode's fetchers (`crate::binary::encode::fetch`).
    MakeFetcher = 11,
    /// LuaJIT: the array constructor `function(...) return {...} end`
    /// (decode's long arrays, `crate::binary::decode::ctor::bulk`).
    Pack = 12,
    /// LuaJIT: the parked thread long arrays are filled on; nil until the
    /// first long array.
    BulkThread = 13,
    /// LuaJIT: whether this LuaJIT compiles a `next` loop (probed at load).
    NextCompiles = 14,
}

impl Helper {
    /// The slot's index in the helper table.
    #[inline(always)]
    pub const fn at(self) -> i64 {
        self as i64
    }
}

/// Upvalues of a message handle's method closures
/// (`crate::api::message`'s module doc). Every method has the first three;
/// `Msg:decode` has the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum HandleUp {
    /// The schema's table of interned key strings.
    Keys = 1,
    /// The handle the method is bound to.
    Handle = 2,
    /// The module's helper table.
    Helpers = 3,
    /// `Msg:decode`: the `__serialize = 'map'` metatable.
    MapMt = 4,
    /// `Msg:decode`: the key string of field number 0 (never a field: it
    /// keeps the numbering plain); number `n` (0..16) is at this plus `n`.
    FieldKeys = 5,
    /// `Msg:decode`, LuaJIT: the root fast path's cache of constructors by
    /// shape, after the 16 key strings.
    Ctors = 5 + 16,
    /// `Msg:decode`, LuaJIT: the constructor of the last shape decoded.
    LastCtor = 5 + 17,
}

impl HandleUp {
    /// The pseudo-index of this upvalue in a running closure.
    #[inline(always)]
    pub fn index(self) -> c_int {
        mlua::ffi::lua_upvalueindex(self as c_int)
    }

    /// The upvalue's number (1-based).
    #[inline(always)]
    pub const fn number(self) -> c_int {
        self as c_int
    }
}

/// Slots of a schema's key table other than its interned key strings (which
/// are at 1..).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i64)]
pub enum KeySlot {
    /// LuaJIT: the schema's constructor table (`crate::binary::decode::ctor::shape`).
    Ctors = -1,
    /// The cache of defaults tables (option `defaults`), built on first use.
    DefaultsCache = 0,
}

impl KeySlot {
    /// The slot's index in the key table.
    #[inline(always)]
    pub const fn at(self) -> i64 {
        self as i64
    }
}

/// Slots of a schema userdata's uservalue table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i64)]
pub enum SchemaSlot {
    /// The interned key strings.
    Keys = 1,
    /// The message handles made so far, by name.
    Handles = 2,
    /// The module's helper table.
    Helpers = 3,
}

impl SchemaSlot {
    /// The slot's index in the uservalue table.
    #[inline(always)]
    pub const fn at(self) -> i64 {
        self as i64
    }
}
