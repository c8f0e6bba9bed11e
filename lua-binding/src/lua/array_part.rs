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
//! looks for it once, at `luaopen`, among the offsets those layouts put it
//! at, with tables whose array sizes it chose; when no candidate offset
//! holds every expected size, [`holds`] always answers `false` and callers
//! take their exact slow path. Reads stay inside the table object.

use super::ffi::{self, lua_State};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Offset of the array-size field, [`UNKNOWN`] until a probe found one.
static SIZE_AT: AtomicUsize = AtomicUsize::new(UNKNOWN);
const UNKNOWN: usize = usize::MAX;

/// How the field counts: LuaJIT's `asize` counts slot 0 too (keys
/// `0..asize`); PUC Lua's counts keys `1..=size`.
const SLOT_ZERO: bool = cfg!(feature = "luajit");

/// Candidate offsets, each with the smallest object size that makes it
/// readable. LuaJIT: `asize` at 24 without GC64 (a 32-byte `GCtab`), at 48
/// with GC64 (64 bytes). Lua 5.4 (64-bit): `alimit` at 12 (`Table` is 56
/// bytes). Lua 5.1 (64-bit): `sizearray` at 56 (64 bytes).
#[cfg(feature = "luajit")]
const CANDIDATES: &[usize] = &[24, 48];
#[cfg(all(feature = "lua54", not(feature = "luajit")))]
const CANDIDATES: &[usize] = &[12];
#[cfg(all(feature = "lua51", not(feature = "luajit")))]
const CANDIDATES: &[usize] = &[56];

/// Array sizes the probe asks for.
const PROBE_SIZES: [c_int; 3] = [37, 101, 1000];

/// Find the array-size field (once per process; later calls return at
/// once). Leaves the stack as it found it.
///
/// # Safety
/// `L` a valid state with one free stack slot.
pub unsafe fn probe(L: *mut lua_State) {
    if SIZE_AT.load(Ordering::Relaxed) != UNKNOWN || cfg!(not(target_pointer_width = "64")) {
        return;
    }
    for &at in CANDIDATES {
        // GC64's offset is read only from objects GC64 can have made: a
        // non-GC64 LuaJIT keeps every object below 4 GiB and its `GCtab`
        // ends at 32 bytes.
        let needs_gc64 = cfg!(feature = "luajit") && at >= 32;
        // SAFETY: each table is made, read inside its object, and popped.
        let found = PROBE_SIZES.iter().all(|&narr| unsafe {
            ffi::lua_createtable(L, narr, 0);
            let t = ffi::lua_topointer(L, -1) as *const u8;
            let ok = if needs_gc64 && (t as usize) < (1 << 32) {
                false
            } else {
                let want = narr as u32 + u32::from(SLOT_ZERO);
                // SAFETY: `at + 4` is within the table object for this host
                // (see CANDIDATES); unaligned-safe read of a u32 field.
                t.add(at).cast::<u32>().read_unaligned() == want
            };
            ffi::lua_settop(L, -2);
            ok
        });
        if found {
            SIZE_AT.store(at, Ordering::Relaxed);
            return;
        }
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
