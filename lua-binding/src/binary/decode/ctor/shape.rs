//! Table constructors by shape (LuaJIT): a decoded table made by a small
//! generated Lua function instead of C API stores, for the root fast path
//! and for every message of the general walk whose plan allows it
//! (`DecodeCtx::message_by_ctor`).
//!
//! Why: through the C API each key of a new table costs a key push,
//! `lua_rawset` and `lj_tab_newkey`, ~150 instructions in Tarantool's
//! LuaJIT. A Lua table constructor with constant keys,
//! `{["name"] = a1, ["age"] = a2}`, compiles to `TDUP` of a template that
//! already holds the keys, then one `TSETS` a value (~31 instructions). The
//! `lua_call` (~100) is repaid from the second key on (PERF_LOG). PUC Lua has no templates (`OP_NEWTABLE` then `luaH_newkey` a
//! key), so this is LuaJIT only.
//!
//! A *shape* is the sequence of field numbers (1–15, one-byte tags) the
//! fast path read, in wire order, without a repeat, at most
//! [`CTOR_FIELDS`] of them, packed four bits a number into a positive
//! `int`. It keys the handle's constructor cache, `Msg:decode`'s upvalue
//! [`HandleUp::Ctors`](crate::slots::HandleUp::Ctors); `[0]` counts the entries. A
//! miss compiles the shape's constructor from generated source, once: at
//! most [`MAX_SHAPES`] a handle, beyond which the C API path serves.
//! The constructors run in the interpreter (`luaJIT_setmode` turns
//! the JIT off for them): compiled, each call ended in a trace exit back to
//! the C caller (PERF_LOG).
//!
//! Cost: the shape decoded last is one `lua_pushvalue` (its constructor
//! sits in an upvalue of `Msg:decode`, see `DecodeCtx::root_by_ctor`);
//! another cached shape is one `lua_rawgeti` and one `lua_type` (~40
//! instructions); a miss allocates the source (Rust) and the function
//! (Lua): ~39,000 instructions, once per shape and handle.
//!
//! The general walk's shapes ([`Shape`]: up to [`SHAPE_FIELDS`] field
//! indices in first-occurrence order) are kept per schema: its constructor
//! table (the key table's [`KeySlot::Ctors`](crate::slots::KeySlot::Ctors)) caches up to
//! [`MAX_MESSAGE_SHAPES`] of them by a string id, and holds at `[mi + 1]`
//! the constructor of message `mi`'s memoised shape (the memo is Rust
//! side, in the schema), which the walk pushes when a message starts: a
//! run of one shape costs that one `lua_rawgeti`; another shape goes
//! through [`find_message_ctor`].

use std::cell::Cell;
use std::os::raw::c_int;

use crate::lua::{self, ffi, lua_State};

unsafe extern "C-unwind" {
    /// LuaJIT's `luaJIT_setmode` (luajit.h), not in `mlua::ffi`.
    fn luaJIT_setmode(L: *mut lua_State, idx: c_int, mode: c_int) -> c_int;
}

/// `LUAJIT_MODE_FUNC | LUAJIT_MODE_OFF`: never compile this function.
const JIT_OFF_FOR_FUNC: c_int = 2;

/// The JIT off for the function on top of the stack, which stays there;
/// nothing done inside a `__gc` metamethod (a finalizer that decodes),
/// where LuaJIT refuses `luaJIT_setmode` with an error.
///
/// # Safety
/// `L` valid with a function on top and two free slots.
pub(crate) unsafe fn jit_off(L: *mut lua_State) {
    // SAFETY: caller's contract.
    unsafe {
        ffi::lua_pushcfunction(L, jit_off_at_1);
        ffi::lua_pushvalue(L, -2);
        if ffi::lua_pcall(L, 1, 0, 0) != 0 {
            ffi::lua_pop(L, 1);
        }
    }
}

/// `lua_pcall` body of [`jit_off`]: the JIT off for the function at 1.
///
/// # Safety
/// Called by Lua.
unsafe extern "C-unwind" fn jit_off_at_1(L: *mut lua_State) -> c_int {
    // SAFETY: index 1 is the function (the caller pushed it); an error
    // (in a `__gc` metamethod) unwinds to the caller's `lua_pcall` through
    // this frame, which holds nothing.
    unsafe { luaJIT_setmode(L, 1, JIT_OFF_FOR_FUNC) };
    0
}

/// Most fields in a shape (7 × 4 bits fit a positive C `int`, the key
/// type of LuaJIT's `lua_rawgeti`).
pub const CTOR_FIELDS: usize = 7;

/// Most constructors cached per message handle.
pub const MAX_SHAPES: i64 = 64;

/// Added to a shape (above its 28 bits) for its constructor that also sets
/// the map metatable (option `serialize`, on by default in Tarantool): the
/// interpreter's `setmetatable` costs less than the C API's
/// `lua_pushvalue` and `lua_setmetatable` after the call (PERF_LOG).
pub const SERIALIZE: c_int = 1 << 28;

/// The shape of `numbers` (field numbers in wire order), or `None` when
/// it has none: empty, too long, a number outside 1–15, or a repeat.
#[inline(always)]
pub fn shape_of(numbers: impl Iterator<Item = u8>) -> Option<c_int> {
    let (mut shape, mut seen, mut n) = (0 as c_int, 0u16, 0usize);
    for num in numbers {
        let bit = 1u16.checked_shl(u32::from(num))?;
        if num == 0 || n == CTOR_FIELDS || seen & bit != 0 {
            return None;
        }
        seen |= bit;
        shape = shape << 4 | c_int::from(num);
        n += 1;
    }
    (n != 0).then_some(shape)
}

/// Push the constructor of `shape` from the cache at `cache`, compiling it
/// on a miss; `false`, with nothing pushed, when there is none (the cache
/// is full, or compiling failed). `key_of(num)` is the index holding field
/// number `num`'s key string; with [`SERIALIZE`] added to `shape`, `map_mt`
/// holds the metatable the constructor sets (both used on a miss only).
///
/// # Safety
/// `L` valid with 5 free slots; `cache` a table index (absolute or
/// upvalue); `shape` from [`shape_of`], [`SERIALIZE`] perhaps added;
/// `key_of` gives a string index for each number in it, `map_mt` a table
/// index. May raise out-of-memory on a miss (after Rust memory is
/// dropped).
#[inline(always)]
pub unsafe fn push_ctor(
    L: *mut lua_State,
    cache: c_int,
    shape: c_int,
    key_of: impl Fn(u8) -> c_int,
    map_mt: c_int,
) -> bool {
    // SAFETY: caller's contract; a raw read cannot raise.
    unsafe {
        if lua::rawgeti(L, cache, i64::from(shape)) == ffi::LUA_TFUNCTION {
            return true;
        }
        ffi::lua_pop(L, 1);
        make_ctor(L, cache, shape, key_of, map_mt)
    }
}

/// The cache miss: generate, compile and cache the constructor of `shape`.
///
/// # Safety
/// As [`push_ctor`].
#[cold]
#[inline(never)]
unsafe fn make_ctor(
    L: *mut lua_State,
    cache: c_int,
    shape: c_int,
    key_of: impl Fn(u8) -> c_int,
    map_mt: c_int,
) -> bool {
    // SAFETY: caller's contract; the shape key at `k`, the constructor
    // above it (`compile_source_and_cache`), then in its place; with
    // `SERIALIZE`, the base library's `setmetatable` at `k + 1` for the
    // chunk's arguments (a global replaced by anything but a C function
    // is not trusted: no constructor then).
    unsafe {
        if cached(L, cache) >= MAX_SHAPES {
            return false;
        }
        let mut numbers = [0u8; CTOR_FIELDS];
        let mut n = 0;
        let mut s = shape & !SERIALIZE;
        while s != 0 {
            numbers[n] = (s & 0xf) as u8;
            s >>= 4;
            n += 1;
        }
        numbers[..n].reverse();
        ffi::lua_pushinteger(L, ffi::lua_Integer::from(shape));
        let k = ffi::lua_gettop(L);
        let serialize = shape & SERIALIZE != 0;
        if serialize {
            lua::push_bytes(L, b"setmetatable");
            ffi::lua_rawget(L, ffi::LUA_GLOBALSINDEX);
            if ffi::lua_iscfunction(L, -1) == 0 {
                ffi::lua_settop(L, k - 1);
                return false;
            }
        }
        let key = |i: usize| lua::string_bytes(L, key_of(numbers[i]));
        let args = [k + 1, map_mt];
        let args = if serialize { &args[..] } else { &[] };
        if !compile_source_and_cache(L, cache, k, MAX_SHAPES, || Some(ctor_source(n, key, serialize)), args) {
            ffi::lua_settop(L, k - 1);
            return false;
        }
        ffi::lua_replace(L, k);
        ffi::lua_settop(L, k);
        true
    }
}

/// Compile the constructor of `n` fields, argument `i + 1` the value under
/// key `key(i)` ([`ctor_source`]), turn the JIT off for it and cache it in
/// `cache` under the key at stack index `k`, counting it in `[0]` (at most
/// `max`), and leave it on top. The chunk runs Lua code, so a debug hook in
/// it may have decoded meanwhile: if that cached a constructor under the
/// same key, that one is left on top (counted once); the count is read
/// again either way, so the cap holds. `false`, with the stack as it was,
/// when compiling fails or the cache is full.
///
/// # Safety
/// `L` valid with 3 free slots; `cache` a table index, `k` a slot; `key(i)`
/// borrows strings anchored on the stack or in a table. `src` (Rust
/// memory) lives only across `luaL_loadbuffer`, which runs protected and
/// reports errors by status; the calls that may raise (out of memory)
/// come after it is dropped.
unsafe fn compile_and_cache<'k>(
    L: *mut lua_State,
    cache: c_int,
    k: c_int,
    max: i64,
    n: usize,
    key: impl Fn(usize) -> &'k [u8],
) -> bool {
    // SAFETY: forwarded.
    unsafe { compile_source_and_cache(L, cache, k, max, || Some(ctor_source(n, key, false)), &[]) }
}

/// [`compile_and_cache`] for any chunk (made by `src`, `None`: none) that
/// returns a function when called with the values at stack indices `args`
/// (0: nil); the source is dropped once loaded, before any Lua call that
/// can raise (no Rust heap across an error). Compiled with
/// the JIT off for it, cached under the key at `k` and counted in `[0]`
/// (at most `max`); `false`, with the stack as it was, when compiling
/// fails or the cache is full. A decode that ran meanwhile (a finalizer)
/// and cached one under the same key wins.
///
/// # Safety
/// As [`compile_and_cache`], with a free slot per argument.
pub(crate) unsafe fn compile_source_and_cache(
    L: *mut lua_State,
    cache: c_int,
    k: c_int,
    max: i64,
    src: impl FnOnce() -> Option<Vec<u8>>,
    args: &[c_int],
) -> bool {
    // SAFETY: caller's contract; raw reads and writes only.
    unsafe {
        let top = ffi::lua_gettop(L);
        let status = match src() {
            Some(src) => ffi::luaL_loadbuffer(L, src.as_ptr().cast(), src.len(), c"=protolua.ctor".as_ptr()),
            None => return false,
        };
        if status == 0 {
            for &a in args {
                if a != 0 { ffi::lua_pushvalue(L, a) } else { ffi::lua_pushnil(L) }
            }
        }
        if status != 0
            || ffi::lua_pcall(L, args.len() as c_int, 1, 0) != 0
            || ffi::lua_type(L, -1) != ffi::LUA_TFUNCTION
        {
            ffi::lua_settop(L, top);
            return false;
        }
        jit_off(L);
        ffi::lua_pushvalue(L, k);
        if lua::rawget(L, cache) == ffi::LUA_TFUNCTION {
            ffi::lua_replace(L, -2);
            return true;
        }
        ffi::lua_pop(L, 1);
        let count = cached(L, cache);
        if count >= max {
            ffi::lua_settop(L, top);
            return false;
        }
        ffi::lua_pushvalue(L, k);
        ffi::lua_pushvalue(L, -2);
        ffi::lua_rawset(L, cache);
        ffi::lua_pushinteger(L, (count + 1) as ffi::lua_Integer);
        lua::rawseti(L, cache, 0);
        true
    }
}

/// How many constructors the cache at `cache` holds (its `[0]`).
///
/// # Safety
/// `L` valid with a free slot; `cache` a table index.
pub(crate) unsafe fn cached(L: *mut lua_State, cache: c_int) -> i64 {
    // SAFETY: caller's contract; a raw read cannot raise.
    unsafe {
        let n = if lua::rawgeti(L, cache, 0) == ffi::LUA_TNUMBER { ffi::lua_tointeger(L, -1) as i64 } else { 0 };
        ffi::lua_pop(L, 1);
        n
    }
}

/// Most fields in a message shape of the general walk
/// (`DecodeCtx::message_by_ctor`): a byte each after the count, so that a
/// shape is 32 bytes and its memo check two 16-byte compares.
pub const SHAPE_FIELDS: usize = 31;

/// A message shape of the general walk: `[0]` the field count `n`,
/// `[1..=n]` the fields' indices in the plan in the order they first
/// occurred, the rest zero.
pub type Shape = [u8; SHAPE_FIELDS + 1];

/// Most constructors cached per schema for the general walk; beyond
/// that, new shapes are built through the C API.
pub const MAX_MESSAGE_SHAPES: i64 = 1024;

/// Push the constructor of message `mi`'s `shape` when `memo` does not
/// hold that shape (the caller checks; a hit finds it at the constructor
/// table's `[mi + 1]`): from the cache, else compiled and cached; either
/// way it becomes the memoised one. `false`, with nothing pushed, when
/// there is none (the cache is full, or compiling failed). `key_id(fi)` is
/// field `fi`'s key id in `keys`.
///
/// A memo hit needs no type check of `[mi + 1]` (~40 instructions): the
/// memo is set only after the constructor is stored, and nothing else
/// writes the constructor table (the debug library aside, as for every
/// upvalue: a non-function there raises "attempt to call").
///
/// # Safety
/// `L` valid with `shape[0] + 4` free slots; `ctors` and `keys` absolute
/// indices of the constructor table and the key table; `shape` non-empty,
/// with a key for each index in it. May raise out-of-memory (after Rust
/// memory is dropped).
#[cold]
#[inline(never)]
pub unsafe fn find_message_ctor(
    L: *mut lua_State,
    ctors: c_int,
    keys: c_int,
    memo: &Cell<Shape>,
    mi: u32,
    shape: &Shape,
    key_id: impl Fn(u8) -> i64,
) -> bool {
    let n = usize::from(shape[0]);
    let mut id = [0u8; 4 + SHAPE_FIELDS + 1];
    id[..4].copy_from_slice(&mi.to_le_bytes());
    id[4..5 + n].copy_from_slice(&shape[..=n]);
    // SAFETY: caller's contract. Slots: the id at `k`, then the `n` key
    // strings, then the constructor (`compile_and_cache`), which ends at `k`.
    unsafe {
        lua::push_bytes(L, &id[..5 + n]);
        let k = ffi::lua_gettop(L);
        ffi::lua_pushvalue(L, k);
        if lua::rawget(L, ctors) != ffi::LUA_TFUNCTION {
            ffi::lua_settop(L, k);
            if cached(L, ctors) >= MAX_MESSAGE_SHAPES {
                ffi::lua_settop(L, k - 1);
                return false;
            }
            for &fi in &shape[1..=n] {
                lua::push_rawgeti(L, keys, key_id(fi));
            }
            if !compile_and_cache(L, ctors, k, MAX_MESSAGE_SHAPES, n, |i| lua::string_bytes(L, k + 1 + i as c_int)) {
                ffi::lua_settop(L, k - 1);
                return false;
            }
        }
        // The constructor on top: in the id's place, and memoised.
        ffi::lua_replace(L, k);
        ffi::lua_settop(L, k);
        ffi::lua_pushvalue(L, -1);
        lua::rawseti(L, ctors, i64::from(mi) + 1);
        memo.set(*shape);
        true
    }
}

/// The chunk returning the constructor of `n` fields, argument `i + 1`
/// the value of the field with key `key(i)`:
/// `return function(a1,a2) return {["\110…"]=a1,["\97…"]=a2} end`. Every
/// key byte is a `\ddd` escape, so any key string is a valid literal.
/// `serialize`: the chunk takes `setmetatable` and the map metatable, and
/// the table is returned with that metatable set.
fn ctor_source<'k>(n: usize, key: impl Fn(usize) -> &'k [u8], serialize: bool) -> Vec<u8> {
    let mut src = if serialize { b"local s,m=...\n".to_vec() } else { Vec::new() };
    src.extend_from_slice(b"return function(");
    let args: Vec<String> = (1..=n).map(|i| format!("a{i}")).collect();
    src.extend_from_slice(args.join(",").as_bytes());
    src.extend_from_slice(if serialize { b") return s({" } else { b") return {" });
    for (i, arg) in args.iter().enumerate() {
        src.extend_from_slice(b"[\"");
        for &byte in key(i) {
            src.extend_from_slice(format!("\\{byte:03}").as_bytes());
        }
        src.extend_from_slice(format!("\"]={arg},").as_bytes());
    }
    src.extend_from_slice(if serialize { b"},m) end" } else { b"} end" });
    src
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_of(numbers: &[u8]) -> Option<c_int> {
        shape_of(numbers.iter().copied())
    }

    #[test]
    fn shapes_pack_numbers_in_wire_order() {
        assert_eq!(key_of(&[1, 2]), Some(0x12));
        assert_eq!(key_of(&[2, 1]), Some(0x21));
        assert_eq!(key_of(&[15, 1, 2, 3, 4, 5, 6]), Some(0x0f12_3456));
    }

    #[test]
    fn no_shape_for_repeats_zero_long_or_empty() {
        assert_eq!(key_of(&[1, 1]), None);
        assert_eq!(key_of(&[3, 1, 2, 3]), None);
        assert_eq!(key_of(&[0]), None);
        assert_eq!(key_of(&[16]), None);
        assert_eq!(key_of(&[1, 2, 3, 4, 5, 6, 7, 8]), None);
        assert_eq!(key_of(&[1; 20]), None);
        assert_eq!(key_of(&[]), None);
    }

    #[test]
    fn source_escapes_every_key_byte() {
        let key = |n| if n == 1 { &b"name"[..] } else { &b"a\"]"[..] };
        assert_eq!(
            String::from_utf8(ctor_source(2, |i| key(i as u8 + 1), false)).unwrap(),
            "return function(a1,a2) return {[\"\\110\\097\\109\\101\"]=a1,[\"\\097\\034\\093\"]=a2,} end"
        );
    }
}
