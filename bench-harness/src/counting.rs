//! The harness's counting global allocator (Rust heap allocations and
//! bytes), and a wrapper of a Lua state's allocator counting what Lua asks
//! for, so that Rust code's share can be told apart when Lua's memory also
//! comes from the global allocator (mlua gives Lua a Rust allocator).
//! Shared by the matrix runner and `bin/json.rs` (`#[path]`).

// `L` is the Lua state, as in the C API.
#![allow(non_snake_case)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::os::raw::c_void;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering::Relaxed};

use mlua::Lua;
use protolua::lua::ffi;

/// The system allocator, counting allocations (and reallocations) and
/// their bytes.
struct Counting;

pub static ALLOCS: AtomicU64 = AtomicU64::new(0);
static ALLOC_BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to `System`, only adding counters.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        ALLOC_BYTES.fetch_add(layout.size() as u64, Relaxed);
        // SAFETY: caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        ALLOC_BYTES.fetch_add(new_size as u64, Relaxed);
        // SAFETY: caller's contract, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Lua allocator calls that asked for memory, and their bytes.
static LUA_ALLOCS: AtomicU64 = AtomicU64::new(0);
static LUA_ALLOC_BYTES: AtomicU64 = AtomicU64::new(0);
static LUA_INNER_F: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
static LUA_INNER_UD: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// Wraps the state's own allocator, counting what Lua asks for.
unsafe extern "C" fn counting_lua_alloc(_ud: *mut c_void, ptr: *mut c_void, osize: usize, nsize: usize) -> *mut c_void {
    if nsize > 0 {
        LUA_ALLOCS.fetch_add(1, Relaxed);
        LUA_ALLOC_BYTES.fetch_add(nsize as u64, Relaxed);
    }
    // SAFETY: the pointer was the state's lua_Alloc, installed before ours.
    unsafe {
        let f: ffi::lua_Alloc = std::mem::transmute(LUA_INNER_F.load(Relaxed));
        f(LUA_INNER_UD.load(Relaxed), ptr, osize, nsize)
    }
}

/// `rust_allocs()`: allocations and bytes made by Rust code so far (the
/// global count minus what Lua's allocator asked for, when that goes
/// through the global allocator).
pub fn rust_counts(lua_via_rust: bool) -> (f64, f64) {
    let (n, b) = (ALLOCS.load(Relaxed), ALLOC_BYTES.load(Relaxed));
    if lua_via_rust {
        (n.wrapping_sub(LUA_ALLOCS.load(Relaxed)) as f64, b.wrapping_sub(LUA_ALLOC_BYTES.load(Relaxed)) as f64)
    } else {
        (n as f64, b as f64)
    }
}

/// Wrap `lua`'s allocator with [`counting_lua_alloc`]; whether Lua's memory
/// comes from the global allocator (then [`rust_counts`] subtracts it).
///
/// # Safety
/// `lua` is used by this thread only, and no other state is counted.
pub unsafe fn count_lua_allocs(lua: &Lua) -> mlua::Result<bool> {
    // SAFETY: swapping the allocator of a state no other thread uses, for
    // one that forwards every call to it.
    unsafe {
        lua.exec_raw::<()>((), |L| {
            let mut ud = std::ptr::null_mut();
            let f = ffi::lua_getallocf(L, &mut ud);
            LUA_INNER_F.store(f as *mut c_void, Relaxed);
            LUA_INNER_UD.store(ud, Relaxed);
            ffi::lua_setallocf(L, counting_lua_alloc, ud);
        })?;
    }
    // Does Lua's memory come from the global allocator? Make 1000 tables.
    let before = ALLOCS.load(Relaxed);
    lua.load("local t = {} for i = 1, 1000 do t[i] = {} end").exec()?;
    Ok(ALLOCS.load(Relaxed) - before >= 1000)
}
