//! Long new arrays built by one call (LuaJIT's constructor path).
//!
//! An array of [`BULK_MIN`]..=[`BULK_MAX`] elements is made by one call of
//! the helper `pack` (`function(a1, …, a16, ...) return {a1, …, a16, ...}
//! end`, `Helper::Pack`) on its values: LuaJIT copies them in with
//! `VARG` and `TSETM`, ~26 instructions an element fewer than a
//! `lua_rawseti` each (PERF_LOG).
//!
//! All of an array's values sit on a stack before that call. On the
//! caller's stack they would grow it, and LuaJIT halves an idle thread's
//! stack at every GC cycle (`lj_state_shrinkstack`), so the first long
//! array after each cycle would reallocate it. Arrays of scalars and
//! strings are therefore filled on the **parked thread**: a coroutine made
//! once per module (slot `Helper::BulkThread` of the helper table),
//! never resumed, whose stack is sized once for [`BULK_MAX`] values and
//! kept from shrinking by `FILL` nils below them (LuaJIT shrinks a stack
//! only when less than a quarter of it is in use). The walk's own loops
//! run there, inside one `lua_pcall` on that thread ([`run_parked`]), and
//! push the values straight onto its stack; an error inside (out of
//! memory, a finalizer's) unwinds the parked thread's frames only and is
//! raised again on the caller's thread. Outside that `lua_pcall` nothing
//! runs on the parked thread but pushes of values that are already made,
//! within the stack it was sized with: they neither allocate nor raise.
//!
//! Arrays of messages (whose elements the walk builds with the caller's
//! stack slots), and any array while the parked thread is in use (a
//! decode inside a finalizer that runs during another's fill), keep their
//! values on the caller's stack ([`begin_here`]).

use std::cell::Cell;
use std::os::raw::{c_int, c_void};

use crate::lua::{self, ffi, lua_State};
use crate::slots::Helper;

/// The array constructor at [`Helper::Pack`]: its arguments as an array.
/// Sixteen of them are named so that the table starts with an array part
/// of 17 (`TNEW`), which LuaJIT allocates apart from the table: `{...}`
/// alone starts with 3 slots inside the table's own allocation, which
/// stay there, unused, once `TSETM` gives it the array part it needs (32
/// bytes an array). Callers pass at least 16 values.
const PACK_SOURCE: &[u8] =
    b"return function(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, ...) \
    return {a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, ...} end";

/// Put the array constructor in the helper table at `helpers`, its JIT
/// off as for every constructor called from C (`shape::jit_off`).
///
/// # Safety
/// `L` valid with 3 free slots; `helpers` an absolute index of a table.
/// May raise on out-of-memory.
pub unsafe fn install_helpers(L: *mut lua_State, helpers: c_int) {
    // SAFETY: loading and running our own constant chunk.
    unsafe {
        if ffi::luaL_loadbuffer(L, PACK_SOURCE.as_ptr().cast(), PACK_SOURCE.len(), c"=protolua.pack".as_ptr()) == 0 {
            ffi::lua_call(L, 0, 1);
            super::shape::jit_off(L);
            lua::rawseti(L, helpers, Helper::Pack.at());
        } else {
            ffi::lua_pop(L, 1);
        }
    }
}

/// Shortest array built by one call: the call costs ~600 instructions (on
/// the parked thread inside Tarantool ~550 more: PERF_LOG), so shorter
/// arrays keep `rawseti`.
pub const BULK_MIN: usize = 32;
// `pack` takes at least 16 values ([`PACK_SOURCE`]), and
// `finish_here` passes it all but the last.
const _: () = assert!(BULK_MIN > 17);

/// Longest array built by one call: its values all sit on a stack first.
pub const BULK_MAX: usize = 4096;

/// Nils kept at the bottom of the parked thread's stack: with them, more
/// than a quarter of its stack is always in use, so LuaJIT never shrinks it
/// (the stack is sized to [`CAPACITY`] slots and some extra).
const FILL: c_int = 2048;

/// Slots the parked thread's stack is sized for when made: the nils,
/// `pack`, the trampoline, a fill's four arguments, [`BULK_MAX`] values
/// and their slot, and room for `pack`'s frame. Within LuaJIT's limit of
/// 8,000 slots a C function may ask for.
const CAPACITY: c_int = FILL + 2 + 5 + BULK_MAX as c_int + 1 + 64;
const _: () = assert!(CAPACITY < 7900 && 4 * FILL > CAPACITY + 64);

/// On the parked thread at rest: `pack` above the nils, then
/// [`fill_parked`]; the top.
const PARKED_PACK: c_int = FILL + 1;
const PARKED_FILL: c_int = FILL + 2;
const PARKED_TOP: c_int = PARKED_FILL;

/// Inside a fill on the parked thread, the indices of `pack`, the helper
/// table and the key-string table (the arguments [`run_parked`] passes).
pub const FILL_PACK: c_int = 2;
/// See [`FILL_PACK`].
pub const FILL_HELPERS: c_int = 3;
/// See [`FILL_PACK`].
pub const FILL_KEYS: c_int = 4;

/// Start a long array of `n` values on `L`'s own stack: its slot, then
/// `pack` (from the helper table at `helpers`), above which its values go.
/// `false` (nothing pushed) when the stack cannot take them.
///
/// # Safety
/// `helpers` indexes the helper table.
#[inline(always)]
pub unsafe fn begin_here(L: *mut lua_State, helpers: c_int, n: usize) -> bool {
    // SAFETY: caller's contract.
    unsafe {
        if ffi::lua_checkstack(L, n as c_int + 8) == 0 {
            return false;
        }
        ffi::lua_pushnil(L);
        lua::push_rawgeti(L, helpers, Helper::Pack.at());
        true
    }
}

/// Finish a long array of `n` values (more than 17) pushed after its slot
/// and `pack` ([`begin_here`], or a fill on the parked thread): `pack`
/// makes the array of the first `n - 1`, and the last one is stored with
/// `lua_rawseti`. `TSETM` sizes the array part one slot past what it
/// stores; given `n - 1` values it makes `n + 1` slots, what
/// `lua_createtable(n)` makes. Leaves the array in the slot.
///
/// # Safety
/// `[slot, pack, v1 .. vn]` on top.
#[inline(always)]
pub unsafe fn finish_here(L: *mut lua_State, n: i64) {
    // SAFETY: caller's contract.
    unsafe {
        ffi::lua_replace(L, -(n as c_int) - 2);
        ffi::lua_call(L, n as c_int - 1, 1);
        // [vn, array]
        ffi::lua_insert(L, -2);
        lua::rawseti(L, -2, n);
    }
}

/// The parked thread, made on first use; `None` while it is in use (`busy`)
/// or when it could not be made.
///
/// # Safety
/// `helpers` indexes the helper table; two free slots. May raise out of
/// memory on `L` (making the thread) while no Rust heap memory is owned.
#[inline(always)]
pub unsafe fn claim(L: *mut lua_State, helpers: c_int, busy: &Cell<bool>) -> Option<*mut lua_State> {
    if busy.get() {
        return None;
    }
    // SAFETY: caller's contract.
    unsafe {
        lua::push_rawgeti(L, helpers, Helper::BulkThread.at());
        let mut parked = ffi::lua_tothread(L, -1);
        ffi::lua_pop(L, 1);
        if parked.is_null() {
            parked = make_parked(L, helpers);
        }
        (!parked.is_null()).then_some(parked)
    }
}

/// What [`fill_parked`] runs: `fill` on the parked thread, which pushes
/// the array (and returns `true`) or records a codec error (`false`).
struct Job<'f> {
    fill: &'f mut dyn FnMut(*mut lua_State) -> bool,
    ok: bool,
}

/// Run `fill` on the parked thread `T` (from [`claim`]) under `lua_pcall`,
/// its arguments at [`FILL_PACK`], [`FILL_HELPERS`] (the table at
/// `helpers` on `L`) and [`FILL_KEYS`] (`keys`). `fill` pushes one array
/// (which moves onto `L`) and returns `true`, or records a codec error and
/// returns `false` (nothing pushed on `L`). A Lua error inside is raised
/// again on `L`, the parked thread left at rest.
///
/// # Safety
/// `helpers` and `keys` index those tables on `L` (`keys` may be an upvalue
/// index); two free slots; the thread not in use. `fill` pushes with the
/// parked thread as its Lua state, within [`BULK_MAX`] values and their
/// slot.
#[inline(never)]
pub unsafe fn run_parked(
    L: *mut lua_State,
    T: *mut lua_State,
    helpers: c_int,
    keys: c_int,
    busy: &Cell<bool>,
    fill: &mut dyn FnMut(*mut lua_State) -> bool,
) -> bool {
    let mut job = Job { fill, ok: false };
    // SAFETY: the thread is at rest with CAPACITY slots: the pushes onto
    // it and the `lua_xmove`s stay within them, so they neither allocate
    // nor raise; `lua_pcall` returns whatever happens inside.
    unsafe {
        ffi::lua_pushvalue(T, PARKED_FILL);
        ffi::lua_pushlightuserdata(T, (&raw mut job).cast::<c_void>());
        ffi::lua_pushvalue(T, PARKED_PACK);
        ffi::lua_pushvalue(L, helpers);
        ffi::lua_pushvalue(L, keys);
        ffi::lua_xmove(L, T, 2);
        busy.set(true);
        let status = ffi::lua_pcall(T, 4, 1, 0);
        busy.set(false);
        // The array, or the error, onto `L`; the thread at rest.
        if status != 0 || job.ok {
            ffi::lua_xmove(T, L, 1);
        } else {
            ffi::lua_settop(T, PARKED_TOP);
        }
        back_on(L, T);
        if status != 0 {
            ffi::lua_error(L);
        }
        job.ok
    }
}

/// The parked thread's side of [`run_parked`]; without a job (called by
/// [`back_on`] and [`make_parked`]), nothing.
///
/// # Safety
/// Called by Lua only: on the parked thread by [`run_parked`], with its
/// `Job` as argument 1 (a light userdata outliving the call), whose `fill`
/// may raise into that `lua_pcall`; or with no argument.
unsafe extern "C-unwind" fn fill_parked(T: *mut lua_State) -> c_int {
    // SAFETY: called by `run_parked` with its job as argument 1, which
    // outlives the call, or by `back_on` with no argument.
    unsafe {
        let Some(job) = ffi::lua_touserdata(T, 1).cast::<Job<'_>>().as_mut() else { return 0 };
        job.ok = (job.fill)(T);
        c_int::from(job.ok)
    }
}

/// After a call on the parked thread `T`, make `L` LuaJIT's current thread
/// again, by a call on `L` (of [`fill_parked`] without a job). LuaJIT
/// before 2023 (LuaJIT#1066; Debian 12's 2.1.0-beta3 among them) leaves its
/// `cur_L` at `T` when the C function that called into `T` goes on; an
/// error raised on `L` after that, then a trace exit, restores the wrong
/// thread and crashes. Measured: the suite's mutated-input test crashed
/// Debian's `luajit` without this.
///
/// # Safety
/// `T` at rest; one free slot on `L`. May raise out of memory on `L` (the
/// call's frame).
#[inline(always)]
unsafe fn back_on(L: *mut lua_State, T: *mut lua_State) {
    // SAFETY: the thread's slot PARKED_FILL holds `fill_parked`.
    unsafe {
        ffi::lua_pushvalue(T, PARKED_FILL);
        ffi::lua_xmove(T, L, 1);
        ffi::lua_call(L, 0, 0);
    }
}

/// Make the parked thread and anchor it in the helper table; null when
/// its stack could not be sized.
///
/// # Safety
/// As [`claim`].
#[cold]
unsafe fn make_parked(L: *mut lua_State, helpers: c_int) -> *mut lua_State {
    // SAFETY: allocations on `L` may raise (no Rust heap memory owned); on
    // the new thread, only `lua_xmove` of two values (a new thread has
    // LUA_MINSTACK free slots) and `lua_pcall`.
    unsafe {
        let T = ffi::lua_newthread(L);
        ffi::lua_pushcfunction(L, size_parked);
        lua::push_rawgeti(L, helpers, Helper::Pack.at());
        ffi::lua_xmove(L, T, 2);
        if ffi::lua_pcall(T, 1, ffi::LUA_MULTRET, 0) != 0 || ffi::lua_gettop(T) != PARKED_TOP {
            ffi::lua_settop(T, 0);
            ffi::lua_pop(L, 1);
            // As `back_on`, with a new closure of `fill_parked`.
            ffi::lua_pushcfunction(L, fill_parked);
            ffi::lua_call(L, 0, 0);
            return std::ptr::null_mut();
        }
        back_on(L, T);
        lua::rawseti(L, helpers, Helper::BulkThread.at());
        T
    }
}

/// Runs on the parked thread, `pack` its argument: sizes the stack and
/// returns the stack at rest: [`FILL`] nils, `pack` and [`fill_parked`].
///
/// # Safety
/// Called by Lua only, under [`make_parked`]'s `lua_pcall` on the new
/// thread, with the pack helper as its one argument.
unsafe extern "C-unwind" fn size_parked(L: *mut lua_State) -> c_int {
    // SAFETY: called by `lua_pcall` with one argument.
    unsafe {
        if ffi::lua_checkstack(L, CAPACITY) == 0 {
            return 0;
        }
        ffi::lua_settop(L, FILL + 1);
        ffi::lua_pushvalue(L, 1);
        ffi::lua_pushcfunction(L, fill_parked);
        FILL + 2
    }
}
