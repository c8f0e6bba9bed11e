//! Helpers shared by the integration tests (`mod common;` in each test
//! binary): a Lua state with protolua in `package.preload`, the fixtures
//! folder, and a counting global allocator.
//!
//! Each test binary compiles this module on its own and uses only part of
//! it, hence the `dead_code` allowance.

#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicIsize, AtomicPtr, Ordering};

use mlua::Lua;

/// The repository's `fixtures` folder (descriptors, golden files).
pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures");

/// An unrestricted Lua state with `protolua` (and its lua-protobuf facades
/// `protolua.pb`, `protolua.protoc`) registered in `package.preload`, exactly as `require` would load the shared library.
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
    // SAFETY: as above; the lua-protobuf facades of the same library.
    let pb = unsafe { lua.create_c_function(protolua::api::pb::luaopen_protolua_pb) }.expect("c function");
    preload.set("protolua.pb", pb).unwrap();
    // SAFETY: as above.
    let protoc = unsafe { lua.create_c_function(protolua::api::pb::luaopen_protolua_protoc) }.expect("c function");
    preload.set("protolua.protoc", protoc).unwrap();
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

thread_local! {
    /// Set while the Lua state's allocator runs ([`count_lua_apart`]).
    static IN_LUA_ALLOC: Cell<bool> = const { Cell::new(false) };
    /// Allocations on this thread outside the Lua allocator.
    static RUST_ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn note_alloc() {
    let _ = IN_LUA_ALLOC.try_with(|lua| {
        if !lua.get() {
            let _ = RUST_ALLOCS.try_with(|n| n.set(n.get() + 1));
        }
    });
}

/// Allocations (and reallocations) this thread made through [`Counting`]
/// outside the allocator of a Lua state given to [`count_lua_apart`]: what
/// Rust code (protolua, mlua) asked for.
pub fn thread_rust_allocs() -> u64 {
    RUST_ALLOCS.with(Cell::get)
}

/// The allocator `lua` had before [`count_lua_apart`] wrapped it (mlua's,
/// the same function for every state; each keeps its own `ud`).
static LUA_INNER_ALLOC: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

unsafe extern "C" fn lua_alloc_apart(ud: *mut c_void, ptr: *mut c_void, osize: usize, nsize: usize) -> *mut c_void {
    let was = IN_LUA_ALLOC.with(|f| f.replace(true));
    // SAFETY: the state's own allocator, stored before this one was set.
    let out = unsafe {
        let f: mlua::ffi::lua_Alloc = std::mem::transmute(LUA_INNER_ALLOC.load(Ordering::Relaxed));
        f(ud, ptr, osize, nsize)
    };
    IN_LUA_ALLOC.with(|f| f.set(was));
    out
}

/// Wrap `lua`'s allocator so that [`thread_rust_allocs`] leaves out what
/// Lua allocates, and give Lua `rust_allocs()` returning it.
pub fn count_lua_apart(lua: &Lua) {
    // SAFETY: swapping the allocator of a state this thread alone uses for
    // one that forwards every call to it.
    unsafe {
        lua.exec_raw::<()>((), |state| {
            let mut ud = std::ptr::null_mut();
            let f = mlua::ffi::lua_getallocf(state, &mut ud);
            LUA_INNER_ALLOC.store(f as *mut c_void, Ordering::Relaxed);
            mlua::ffi::lua_setallocf(state, lua_alloc_apart, ud);
        })
        .expect("swap the allocator");
    }
    let f = lua.create_function(|_, ()| Ok(thread_rust_allocs() as f64)).expect("function");
    lua.globals().set("rust_allocs", f).expect("global");
}

// SAFETY: forwards to the system allocator, only counting bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_alloc();
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
        note_alloc();
        note_growth(new_size as isize - layout.size() as isize);
        // SAFETY: forwarded contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// The number in environment variable `name`, or `default`.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v.parse().unwrap_or_else(|_| panic!("{name}={v} is not a number")),
        Err(_) => default,
    }
}

/// Run `python3 args...` in `dir` and return its standard output; panics
/// with both outputs when it fails.
pub fn python(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("python3")
        .current_dir(dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 ({e}): install Python 3 and then `pip install protobuf`"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python3 {} failed ({}):\n{stdout}\n{stderr}", args.join(" "), out.status);
    stdout.into_owned()
}
