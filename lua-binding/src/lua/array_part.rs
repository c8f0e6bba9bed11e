//! Whether a table keeps a given integer key in its array part.
//!
//! The C API has no call for it, yet it decides what one `lua_next` proves:
//! from a key held in the array part, `next` goes on through the rest of
//! the array part and the whole hash part, so it meets every other key;
//! from a key in the hash part it meets only the nodes after that key's.
//! Encode's strict array check (`binary/encode/arrays.rs`) needs to know
//! which case it is in: with the answer, a `#t`-element array costs one
//! `lua_next` instead of a walk over all its keys.
//!
//! The size of the array part is a 32-bit field of the host's table object
//! (LuaJIT's `GCtab.asize`, Lua 5.4's `Table.alimit`, Lua 5.1's
//! `Table.sizearray`), at an offset fixed per host and build. [`probe`]
//! checks it once, at `luaopen`, against tables whose array sizes it
//! chose; when the offset does not hold every expected size, [`holds`]
//! always answers `false` and callers take their exact slow path. Reads
//! stay inside the table object.

use super::ffi::{self, lua_State};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Offset of the array-size field, [`UNKNOWN`] until a probe found one.
static SIZE_AT: AtomicUsize = AtomicUsize::new(UNKNOWN);
const UNKNOWN: usize = usize::MAX;

/// How the field counts: LuaJIT's `asize` counts slot 0 too (keys
/// `0..asize`); PUC Lua's counts keys `1..=size`.
const SLOT_ZERO: bool = cfg!(feature = "luajit");

/// Candidate offsets. LuaJIT: `asize` at 24 without GC64 (a 32-byte
/// `GCtab`), at 48 with GC64 (64 bytes); which build it is comes from
/// `ffi.abi('gc64')`, never from the object. Lua 5.4 (64-bit): `alimit` at
/// 12 (`Table` is 56 bytes). Lua 5.1 (64-bit): `sizearray` at 56 (64
/// bytes).
///
/// # Safety
/// `L` a valid state with two free stack slots; the stack is left as it
/// was.
#[cfg(feature = "luajit")]
unsafe fn candidate(L: *mut lua_State) -> Option<usize> {
    const ASK: &std::ffi::CStr = c"local ok, ffi = pcall(require, 'ffi') if ok then return ffi.abi('gc64') end";
    // SAFETY: a chunk of our own, run protected; one result (or the error)
    // popped.
    unsafe {
        if ffi::luaL_loadstring(L, ASK.as_ptr()) != 0 {
            ffi::lua_settop(L, -2);
            return None;
        }
        if ffi::lua_pcall(L, 0, 1, 0) != 0 {
            ffi::lua_settop(L, -2);
            return None;
        }
        let at = match ffi::lua_type(L, -1) {
            ffi::LUA_TBOOLEAN if ffi::lua_toboolean(L, -1) != 0 => Some(48),
            ffi::LUA_TBOOLEAN => Some(24),
            _ => None,
        };
        ffi::lua_settop(L, -2);
        at
    }
}
/// Lua 5.4's offset (see the LuaJIT variant).
///
/// # Safety
/// None needed; `unsafe` as the LuaJIT variant is.
#[cfg(all(feature = "lua54", not(feature = "luajit")))]
unsafe fn candidate(_: *mut lua_State) -> Option<usize> {
    Some(12)
}
/// Lua 5.1's offset (see the LuaJIT variant).
///
/// # Safety
/// None needed; `unsafe` as the LuaJIT variant is.
#[cfg(all(feature = "lua51", not(feature = "luajit")))]
unsafe fn candidate(_: *mut lua_State) -> Option<usize> {
    Some(56)
}

/// Array sizes the probe asks for.
const PROBE_SIZES: [c_int; 3] = [37, 101, 1000];

/// Find the array-size field (once per process; later calls return at
/// once). Leaves the stack as it found it.
///
/// # Safety
/// `L` a valid state with two free stack slots.
pub unsafe fn probe(L: *mut lua_State) {
    if SIZE_AT.load(Ordering::Relaxed) != UNKNOWN || cfg!(not(target_pointer_width = "64")) {
        return;
    }
    // SAFETY: forwarded; `candidate` balances the stack.
    let Some(at) = (unsafe { candidate(L) }) else { return };
    // SAFETY: each table is made, read inside its object (`at + 4` is
    // within it for this host and build: see `candidate`), and popped.
    let found = PROBE_SIZES.iter().all(|&narr| unsafe {
        ffi::lua_createtable(L, narr, 0);
        let t = ffi::lua_topointer(L, -1) as *const u8;
        let want = narr as u32 + u32::from(SLOT_ZERO);
        let ok = t.add(at).cast::<u32>().read_unaligned() == want;
        ffi::lua_settop(L, -2);
        ok
    });
    if found {
        SIZE_AT.store(at, Ordering::Relaxed);
    }
}

/// The offset [`probe`] found, if any.
pub fn offset() -> Option<usize> {
    let at = SIZE_AT.load(Ordering::Relaxed);
    (at != UNKNOWN).then_some(at)
}

/// True when the table at `idx` certainly keeps integer key `n` (`n >= 1`)
/// in its array part; false when it does not, or when [`probe`] found no
/// array-size field. Costs one load.
///
/// # Safety
/// `idx` a valid index holding a table.
#[inline(always)]
pub unsafe fn holds(L: *mut lua_State, idx: c_int, n: usize) -> bool {
    let at = SIZE_AT.load(Ordering::Relaxed);
    if at == UNKNOWN {
        return false;
    }
    // SAFETY: `probe` checked that a table object has a u32 array size at
    // `at`, inside the object; `idx` holds a table.
    let size = unsafe { (ffi::lua_topointer(L, idx) as *const u8).add(at).cast::<u32>().read_unaligned() } as usize;
    if SLOT_ZERO { n < size } else { n <= size }
}
