//! Helpers shared by the integration tests (`mod common;` in each test
//! binary): a Lua state with protolua in `package.preload`, the fixtures
//! folder, and a counting global allocator.
//!
//! Each test binary compiles this module on its own and uses only part of
//! it, hence the `dead_code` allowance.

#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use mlua::Lua;

/// The repository's `fixtures` folder (descriptors, golden files).
pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures");

/// An unrestricted Lua state with `protolua` registered in
/// `package.preload`, exactly as `require` would load the shared library.
/// Nothing is required yet and no globals are set.
pub fn lua_with_protolua() -> Lua {
    // SAFETY: the tests need the full standard library: `debug`, and on
    // LuaJIT the `ffi` library (64-bit values above 2^53 decode to cdata),
    // which only the unrestricted state loads.
    let lua = unsafe { Lua::unsafe_new() };
    // SAFETY: luaopen_protolua is a lua_CFunction following the C API rules.
    let open = unsafe { lua.create_c_function(protolua::luaopen_protolua) }.expect("c function");
    let preload: mlua::Table = lua.globals().get::<mlua::Table>("package").unwrap().get("preload").unwrap();
    preload.set("protolua", open).unwrap();
    lua
}

/// A counting allocator with a resettable peak; install it in a test binary
/// with `#[global_allocator] static GLOBAL: common::Counting =
/// common::Counting;`. mlua gives the Lua state a Rust allocator (LuaJIT
/// included), so this sees Lua's strings and tables as well as the codec's
/// buffers. The counters are process-wide: tests that read them must not
/// run concurrently with ones that allocate.
pub struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn note_growth(by: isize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

/// Bytes currently allocated through [`Counting`].
pub fn live_bytes() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// The highest [`live_bytes`] since the last [`reset_peak`].
pub fn peak_bytes() -> isize {
    PEAK.load(Ordering::Relaxed)
}

/// Restarts the peak at the current live bytes, which it returns.
pub fn reset_peak() -> isize {
    let now = live_bytes();
    PEAK.store(now, Ordering::Relaxed);
    now
}

// SAFETY: forwards to the system allocator, only counting bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_growth(layout.size() as isize);
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_growth(new_size as isize - layout.size() as isize);
        // SAFETY: forwarded contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
